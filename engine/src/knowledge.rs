//! Loading and validating the knowledge: Markdown files with TOML front matter.
//!
//! [`load_sources`] turns files (from a directory or from the copy embedded in
//! the binary) into a [`KnowledgeBase`] plus every problem found, each with
//! `file:line` and the key concerned. Loading never stops at the first problem:
//! an entity with problems is still loaded when its id and kind are readable, so
//! that one lint run lists everything. The format is `knowledge/README.md`.

use crate::model::{
    ContextCue, CueKind, Entity, FailureModeData, Kind, KindData, Level, Location, SignalKind,
    SymptomData, Version, VersionRange, AREAS, PLATFORMS,
};
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::path::Path;
use toml::{Table, Value};

/// One knowledge file: its path relative to the knowledge root and its text.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Path relative to the knowledge root, `/`-separated (`failure-modes/etcd/x.md`).
    pub path: String,
    /// The whole file text.
    pub text: String,
}

/// How serious a [`Diagnostic`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Makes `kubewhy lint` fail.
    Error,
    /// Reported, does not fail the lint.
    Warning,
}

/// A problem found while loading or validating knowledge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// File and 1-based line.
    pub location: Location,
    /// The front-matter key concerned, when there is one (`symptom[2].text`).
    pub key: Option<String>,
    /// What is wrong, lowercase, no trailing period.
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        match &self.key {
            Some(k) => write!(f, "{}: {sev}: `{k}`: {}", self.location, self.message),
            None => write!(f, "{}: {sev}: {}", self.location, self.message),
        }
    }
}

/// Errors that stop loading before any file is parsed.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The knowledge directory (or a file in it) could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The path that failed.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The directory holds no knowledge file at all.
    #[error("{path} holds no knowledge files (*.md with +++ front matter)")]
    Empty {
        /// The directory.
        path: String,
    },
    /// A file or the walk passed a limit of [`crate::bounded`] (size, type, depth, count, UTF-8).
    #[error(transparent)]
    Bounded(#[from] crate::bounded::ReadError),
}

/// Largest knowledge file read, in bytes.
pub const MAX_KNOWLEDGE_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// The loaded entities, indexed by id. Entities keep the order of their files (sorted by path).
#[derive(Debug, Default, Clone)]
pub struct KnowledgeBase {
    entities: Vec<Entity>,
    by_id: HashMap<String, usize>,
    /// id → front-matter key → 1-based line, for diagnostics found after parsing.
    key_lines: HashMap<String, BTreeMap<String, usize>>,
    /// The upstream facts (generated files and the metrics supplement), for lookups and the accuracy lint.
    upstream: Upstream,
    /// The coverage topic map (`topics.toml`), with the line of each topic.
    topics: Vec<(Topic, Location)>,
    /// Compiled knowledge decoded on demand; when set, it holds the entities, upstream facts
    /// and topics, and the fields above are empty (see [`crate::compiled::load`]).
    lazy: Option<std::sync::Arc<crate::compiled::Lazy>>,
}

/// Upstream facts loaded from `generated/*.toml` and `metrics-supplement.toml`.
#[derive(Debug, Default, Clone)]
pub struct Upstream {
    /// Feature gates by name.
    pub gates: BTreeMap<String, crate::upstream::FeatureGate>,
    /// KEPs by number.
    pub keps: BTreeMap<u32, crate::upstream::Kep>,
    /// Metrics by name (imported plus supplement).
    pub metrics: BTreeMap<String, crate::upstream::UpstreamMetric>,
    /// Releases, oldest first.
    pub releases: Vec<crate::upstream::Release>,
}

impl Upstream {
    /// The newest release, if releases were loaded.
    pub fn latest_release(&self) -> Option<Version> {
        self.releases.iter().filter_map(|r| Version::parse(&r.version).ok()).max()
    }
}

impl KnowledgeBase {
    /// Every entity, in file order.
    ///
    /// Compiled knowledge decodes every entity on the first call (a diagnosis does not call it).
    pub fn entities(&self) -> &[Entity] {
        match &self.lazy {
            Some(l) => l.all(),
            None => &self.entities,
        }
    }

    /// The entity with this id, if any (compiled knowledge decodes it on first use).
    pub fn get(&self, id: &str) -> Option<&Entity> {
        match &self.lazy {
            Some(l) => l.position(id).map(|i| l.entity(i)),
            None => self.by_id.get(id).map(|&i| &self.entities[i]),
        }
    }

    /// Entities of one kind, in file order (compiled knowledge: see [`KnowledgeBase::entities`]).
    pub fn of_kind(&self, kind: Kind) -> impl Iterator<Item = &Entity> {
        self.entities().iter().filter(move |e| e.kind == kind)
    }

    /// Number of entities.
    pub fn len(&self) -> usize {
        match &self.lazy {
            Some(l) => l.len(),
            None => self.entities.len(),
        }
    }

    /// Whether there is no entity.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The coverage topics and where each is written.
    pub fn topics(&self) -> &[(Topic, Location)] {
        match &self.lazy {
            Some(l) => l.topics(),
            None => &self.topics,
        }
    }

    /// The upstream facts (empty when no generated files were loaded).
    pub fn upstream(&self) -> &Upstream {
        match &self.lazy {
            Some(l) => l.upstream(),
            None => &self.upstream,
        }
    }

    /// For compiled knowledge: how many entities were decoded one by one, of how many, and
    /// whether all were decoded at once; `None` for parsed knowledge.
    pub fn decoded(&self) -> Option<(usize, usize, bool)> {
        self.lazy.as_ref().map(|l| l.decoded())
    }

    /// A knowledge base over compiled knowledge that decodes on demand.
    pub(crate) fn from_lazy(lazy: crate::compiled::Lazy) -> KnowledgeBase {
        KnowledgeBase { lazy: Some(std::sync::Arc::new(lazy)), ..KnowledgeBase::default() }
    }

    /// The same knowledge with every entity, upstream fact and topic decoded into the fields a
    /// loader changes (an overlay merges into it); a no-op for parsed knowledge.
    pub(crate) fn into_decoded(self) -> KnowledgeBase {
        match &self.lazy {
            None => self,
            Some(l) => {
                let mut kb = KnowledgeBase { upstream: l.upstream().clone(), topics: l.topics().to_vec(), ..KnowledgeBase::default() };
                // Ids are distinct (checked when the compiled knowledge was loaded).
                for e in l.all() {
                    kb.by_id.entry(e.id.clone()).or_insert(kb.entities.len());
                    kb.entities.push(e.clone());
                }
                kb
            }
        }
    }

    /// Where a front-matter key of an entity was written (the entity's start when unknown).
    pub fn key_location(&self, id: &str, key: &str) -> Option<Location> {
        let e = self.get(id)?;
        let line = self.key_lines.get(id).and_then(|m| m.get(key)).copied().unwrap_or(e.location.line);
        Some(Location { file: e.location.file.clone(), line })
    }

    /// The entities, upstream facts and topics (what [`crate::compiled`] stores).
    pub(crate) fn parts(&self) -> (&[Entity], &Upstream, &[(Topic, Location)]) {
        (self.entities(), self.upstream(), self.topics())
    }

    /// A knowledge base from its parts, without front-matter key lines.
    ///
    /// # Errors
    /// The location of the first entity of an id that occurs twice.
    pub(crate) fn from_parts(entities: Vec<Entity>, upstream: Upstream, topics: Vec<(Topic, Location)>) -> Result<KnowledgeBase, Location> {
        let mut kb = KnowledgeBase { entities: Vec::with_capacity(entities.len()), upstream, topics, ..KnowledgeBase::default() };
        kb.by_id.reserve(entities.len());
        for e in entities {
            kb.push(e)?;
        }
        Ok(kb)
    }

    fn push(&mut self, e: Entity) -> Result<(), Location> {
        if let Some(&i) = self.by_id.get(&e.id) {
            return Err(self.entities[i].location.clone());
        }
        self.by_id.insert(e.id.clone(), self.entities.len());
        self.entities.push(e);
        Ok(())
    }
}

/// Reads every `*.md` file under `dir` (except `README.md` files) as a [`SourceFile`], sorted by path.
///
/// # Errors
/// [`LoadError::Io`] when the directory or a file cannot be read; [`LoadError::Empty`] when no file is found.
pub fn read_dir(dir: &Path) -> Result<Vec<SourceFile>, LoadError> {
    // Bounded (issue 16): regular files of at most MAX_KNOWLEDGE_FILE_BYTES, symlinked
    // directories not entered, depth and count limited.
    let skip = |name: &str| name.starts_with('.') || name == "target" || name == "src";
    let walk = |root: &Path, dir: &Path, out: &mut Vec<SourceFile>| -> Result<(), LoadError> {
        for p in crate::bounded::walk(dir, &skip)? {
            let rel = p.strip_prefix(root).unwrap_or(&p);
            let path = rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/");
            if is_knowledge_file(&path) {
                let text = crate::bounded::read_file(&p, MAX_KNOWLEDGE_FILE_BYTES, "a knowledge file")?;
                out.push(SourceFile { path, text });
            }
        }
        Ok(())
    };
    let mut out = Vec::new();
    walk(dir, dir, &mut out)?;
    if out.is_empty() {
        return Err(LoadError::Empty { path: dir.display().to_string() });
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// The knowledge files among `(path, text)` pairs (paths relative to the knowledge root, e.g.
/// the files embedded in the binary), as [`SourceFile`]s sorted by path.
pub fn sources_from<'a>(files: impl IntoIterator<Item = (String, &'a str)>) -> Vec<SourceFile> {
    let mut out: Vec<SourceFile> = files
        .into_iter()
        .filter(|(path, _)| is_knowledge_file(path) && !path.starts_with("src/"))
        .map(|(path, text)| SourceFile { path, text: text.to_string() })
        .collect();
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// Whether a path (relative to the knowledge root) is a knowledge file: an entity file
/// (`*.md`, but not a README), a generated file (`generated/*.toml`) or the metrics supplement.
pub fn is_knowledge_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    (name.ends_with(".md") && !name.eq_ignore_ascii_case("README.md"))
        || (path.starts_with("generated/") && name.ends_with(".toml"))
        || path == SUPPLEMENT
        || path == TOPICS
}

/// Path of the topic map: each coverage topic with the entities that cover it.
pub const TOPICS: &str = "topics.toml";

/// One topic of the coverage map.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, Serialize)]
pub struct Topic {
    /// The coverage section it belongs to.
    pub area: String,
    /// The topic's text.
    pub topic: String,
    /// Ids of the entities that cover it.
    pub entities: Vec<String>,
}

#[derive(serde::Deserialize)]
struct TopicFile {
    #[serde(default)]
    topic: Vec<Topic>,
}

/// Path of the metrics supplement: metrics used by curated entities that the imported lists
/// lack, each with the source path that defines it.
pub const SUPPLEMENT: &str = "metrics-supplement.toml";

/// Parses and validates knowledge files.
///
/// Returns the knowledge base (every entity whose id could be read) and every
/// problem found, errors first then warnings, each sorted by file and line.
pub fn load_sources(files: impl IntoIterator<Item = SourceFile>) -> (KnowledgeBase, Vec<Diagnostic>) {
    let mut kb = KnowledgeBase::default();
    let mut diags = Vec::new();
    let mut generated_metrics: Vec<(Entity, String)> = Vec::new();
    for file in files {
        for (entity, lines) in read_source(&file, &mut kb, &mut generated_metrics, &mut diags) {
            push_entity(&mut kb, entity, lines, &mut diags);
        }
    }
    // Imported metrics become entities unless a curated Metric of the same id exists.
    for (e, _) in generated_metrics {
        if kb.get(&e.id).is_none() {
            let _ = kb.push(e);
        }
    }
    validate(&kb, &mut diags);
    validate_topics(&kb, &mut diags);
    crate::accuracy::check(&kb, |_| true, &mut diags);
    diags.sort_by(|a, b| {
        (a.severity, &a.location.file, a.location.line).cmp(&(b.severity, &b.location.file, b.location.line))
    });
    (kb, diags)
}

/// Loads a topic map or a generated file into `kb` (imported metrics into
/// `generated_metrics`); returns an entity file's entities with their key lines.
fn read_source(file: &SourceFile, kb: &mut KnowledgeBase, generated_metrics: &mut Vec<(Entity, String)>, diags: &mut Vec<Diagnostic>) -> Vec<(Entity, BTreeMap<String, usize>)> {
    if file.path.ends_with(TOPICS) {
        load_topics(file, kb, diags);
        Vec::new()
    } else if file.path.ends_with(".toml") {
        load_generated(file, kb, generated_metrics, diags);
        Vec::new()
    } else {
        parse_file(file, diags)
    }
}

/// Adds a parsed entity and its key lines to `kb`; a duplicate id is an error naming both
/// places. Returns whether it was added.
fn push_entity(kb: &mut KnowledgeBase, entity: Entity, lines: BTreeMap<String, usize>, diags: &mut Vec<Diagnostic>) -> bool {
    let loc = entity.location.clone();
    let id = entity.id.clone();
    match kb.push(entity) {
        Ok(()) => {
            kb.key_lines.insert(id, lines);
            true
        }
        Err(first) => {
            diags.push(Diagnostic { severity: Severity::Error, location: loc, key: Some("id".into()), message: format!("duplicate id `{id}` (first defined at {first})") });
            false
        }
    }
}

/// Merges overlay files (a user's `--knowledge DIR`) into an already validated knowledge base
/// (the compiled built-in knowledge, issue 13): only the overlay is parsed. The merged base
/// is validated as a whole, as [`load_sources`] would, and the upstream-accuracy lint runs
/// on the overlay's entities (the base passed it when it was compiled). An overlay entity
/// whose id the base already defines is a duplicate-id error, except that a curated Metric
/// replaces an imported one (`generated/metrics.toml`), as in [`load_sources`]; topic maps
/// and generated files in an overlay are loaded as there.
///
/// Returns the merged base, the ids of the entities the overlay added (in file order) and
/// the diagnostics, errors first, then by file and line.
pub fn load_overlay(kb: KnowledgeBase, files: impl IntoIterator<Item = SourceFile>) -> (KnowledgeBase, Vec<String>, Vec<Diagnostic>) {
    let mut kb = kb.into_decoded();
    let mut diags = Vec::new();
    let mut added: Vec<String> = Vec::new();
    let mut generated_metrics: Vec<(Entity, String)> = Vec::new();
    for file in files {
        for (entity, lines) in read_source(&file, &mut kb, &mut generated_metrics, &mut diags) {
            let id = entity.id.clone();
            let replaces_import = entity.kind == Kind::Metric
                && kb.get(&id).is_some_and(|old| old.location.file.starts_with("generated/") && !added.contains(&id));
            if replaces_import {
                if let Some(&i) = kb.by_id.get(&id) {
                    kb.entities[i] = entity;
                    kb.key_lines.insert(id.clone(), lines);
                    added.push(id);
                }
                continue;
            }
            if push_entity(&mut kb, entity, lines, &mut diags) {
                added.push(id);
            }
        }
    }
    for (e, _) in generated_metrics {
        if kb.get(&e.id).is_none() {
            let id = e.id.clone();
            if kb.push(e).is_ok() {
                added.push(id);
            }
        }
    }
    validate(&kb, &mut diags);
    validate_topics(&kb, &mut diags);
    let overlay: std::collections::HashSet<&str> = added.iter().map(String::as_str).collect();
    crate::accuracy::check(&kb, |e| overlay.contains(e.id.as_str()), &mut diags);
    diags.sort_by(|a, b| {
        (a.severity, &a.location.file, a.location.line).cmp(&(b.severity, &b.location.file, b.location.line))
    });
    (kb, added, diags)
}

/// Splits a knowledge file into its front matter and body.
///
/// Returns `(front matter text, 1-based line of the front matter's first line, body)`.
///
/// # Errors
/// A message when the file does not start with a `+++` block closed by a `+++` line.
pub fn split_front_matter(text: &str) -> Result<(String, usize, String), String> {
    let mut parser = Parser::new_ext(text, Options::ENABLE_PLUSES_DELIMITED_METADATA_BLOCKS);
    match parser.next() {
        Some(Event::Start(Tag::MetadataBlock(_))) => {}
        _ => {
            return Err(
                "the file must start with TOML front matter between `+++` lines (the first line `+++`, the next line not blank, and a closing `+++` line)"
                    .into(),
            )
        }
    }
    let mut fm = String::new();
    for ev in parser.by_ref() {
        match ev {
            Event::Text(t) => fm.push_str(&t),
            Event::End(TagEnd::MetadataBlock(_)) => break,
            _ => {}
        }
    }
    // The body starts after the closing `+++` line (the first unindented `+++` line after line 1).
    let mut offset = 0;
    let mut body_start = text.len();
    for (i, line) in text.split_inclusive('\n').enumerate() {
        offset += line.len();
        if i > 0 && line.trim_end() == "+++" {
            body_start = offset;
            break;
        }
    }
    Ok((fm, 2, text[body_start.min(text.len())..].to_string()))
}

/// Finds the line of a key in front matter (top level or inside the n-th inline table).
struct Lines<'a> {
    lines: Vec<&'a str>,
    first_line: usize,
}

impl<'a> Lines<'a> {
    fn new(fm: &'a str, first_line: usize) -> Self {
        Lines { lines: fm.lines().collect(), first_line }
    }

    fn is_header(l: &str) -> bool {
        l.trim_start().starts_with('[') && !l.contains('=')
    }

    /// Line range (0-based, exclusive end) of the n-th (0-based) `[[table]]`, or of the top level when `table` is None.
    fn section(&self, table: Option<(&str, usize)>) -> (usize, usize) {
        match table {
            None => {
                let end = self.lines.iter().position(|l| Self::is_header(l)).unwrap_or(self.lines.len());
                (0, end)
            }
            Some((name, n)) => {
                let mut seen = 0;
                for (i, l) in self.lines.iter().enumerate() {
                    let t: String = l.chars().filter(|c| !c.is_whitespace()).collect();
                    if t == format!("[[{name}]]") {
                        if seen == n {
                            let end = self.lines[i + 1..]
                                .iter()
                                .position(|l| Self::is_header(l))
                                .map(|p| i + 1 + p)
                                .unwrap_or(self.lines.len());
                            return (i, end);
                        }
                        seen += 1;
                    }
                }
                (0, self.lines.len())
            }
        }
    }

    /// 1-based file line of `key` in the section, or of the section start.
    fn of_key(&self, table: Option<(&str, usize)>, key: &str) -> usize {
        let (start, end) = self.section(table);
        for i in start..end {
            let l = self.lines[i].trim_start();
            let k = l.split('=').next().unwrap_or("").trim().trim_matches('"');
            if l.contains('=') && k == key {
                return self.first_line + i;
            }
        }
        self.first_line + start
    }
}

/// Reads typed values out of one TOML table, recording every problem.
struct Reader<'a, 'd> {
    table: &'a Table,
    used: HashSet<&'static str>,
    lines: &'a Lines<'a>,
    section: Option<(&'a str, usize)>,
    key_prefix: String,
    file: &'a str,
    diags: &'d mut Vec<Diagnostic>,
    errors: usize,
}

impl<'a, 'd> Reader<'a, 'd> {
    fn err(&mut self, key: &str, message: String) {
        let line = self.lines.of_key(self.section, key);
        self.errors += 1;
        self.diags.push(Diagnostic {
            severity: Severity::Error,
            location: Location { file: self.file.to_string(), line },
            key: Some(format!("{}{key}", self.key_prefix)),
            message,
        });
    }

    fn get(&mut self, key: &'static str) -> Option<&'a Value> {
        self.used.insert(key);
        self.table.get(key)
    }

    fn string(&mut self, key: &'static str, required: bool) -> Option<String> {
        match self.get(key) {
            None if required => {
                self.err(key, "missing required key".into());
                None
            }
            None => None,
            Some(Value::String(s)) if s.trim().is_empty() => {
                self.err(key, "must not be empty".into());
                None
            }
            Some(Value::String(s)) => Some(s.clone()),
            Some(v) => {
                self.err(key, format!("expected a string, found {}", v.type_str()));
                None
            }
        }
    }

    fn strings(&mut self, key: &'static str) -> Vec<String> {
        match self.get(key) {
            None => Vec::new(),
            Some(Value::Array(items)) => {
                let mut out = Vec::new();
                for (i, v) in items.iter().enumerate() {
                    match v {
                        Value::String(s) if !s.trim().is_empty() => out.push(s.clone()),
                        other => self.err(key, format!("item {i} must be a non-empty string, found {}", other.type_str())),
                    }
                }
                out
            }
            Some(v) => {
                self.err(key, format!("expected an array of strings, found {}", v.type_str()));
                Vec::new()
            }
        }
    }

    fn integer(&mut self, key: &'static str) -> Option<i64> {
        match self.get(key) {
            None => None,
            Some(Value::Integer(i)) => Some(*i),
            Some(v) => {
                self.err(key, format!("expected an integer, found {}", v.type_str()));
                None
            }
        }
    }

    fn float(&mut self, key: &'static str) -> Option<f64> {
        match self.get(key) {
            None => None,
            Some(Value::Float(f)) => Some(*f),
            Some(Value::Integer(i)) => Some(*i as f64),
            Some(v) => {
                self.err(key, format!("expected a number, found {}", v.type_str()));
                None
            }
        }
    }

    fn integers(&mut self, key: &'static str) -> Vec<u32> {
        match self.get(key) {
            None => Vec::new(),
            Some(Value::Array(items)) => {
                let mut out = Vec::new();
                for (i, v) in items.iter().enumerate() {
                    match v {
                        Value::Integer(n) if *n > 0 && *n < 100_000 => out.push(*n as u32),
                        other => self.err(key, format!("item {i} must be a KEP number (a positive integer), found {}", other.type_str())),
                    }
                }
                out
            }
            Some(v) => {
                self.err(key, format!("expected an array of integers, found {}", v.type_str()));
                Vec::new()
            }
        }
    }

    fn version(&mut self, key: &'static str) -> Option<Version> {
        match self.get(key) {
            None => None,
            Some(Value::String(s)) => match Version::parse_strict(s) {
                Ok(v) if v.major == 1 => Some(v),
                Ok(_) => {
                    self.err(key, format!("`{s}` is not a Kubernetes 1.x minor version"));
                    None
                }
                Err(m) => {
                    self.err(key, m);
                    None
                }
            },
            Some(v) => {
                self.err(key, format!("expected a version string like \"1.24\", found {}", v.type_str()));
                None
            }
        }
    }

    fn tables(&mut self, key: &'static str) -> Vec<&'a Table> {
        match self.get(key) {
            None => Vec::new(),
            Some(Value::Array(items)) => {
                let mut out = Vec::new();
                for v in items {
                    match v {
                        Value::Table(t) => out.push(t),
                        other => self.err(key, format!("expected [[{key}]] tables, found {}", other.type_str())),
                    }
                }
                out
            }
            Some(v) => {
                self.err(key, format!("expected [[{key}]] tables, found {}", v.type_str()));
                Vec::new()
            }
        }
    }

    /// Reports every key that was not read.
    fn finish(&mut self, kind: &str) {
        let unknown: Vec<String> =
            self.table.keys().filter(|k| !self.used.contains(k.as_str())).cloned().collect();
        for k in unknown {
            let allowed: Vec<&str> = {
                let mut v: Vec<&str> = self.used.iter().copied().collect();
                v.sort_unstable();
                v
            };
            let line = self.lines.of_key(self.section, &k);
            self.errors += 1;
            self.diags.push(Diagnostic {
                severity: Severity::Error,
                location: Location { file: self.file.to_string(), line },
                key: Some(format!("{}{k}", self.key_prefix)),
                message: format!("unknown key for a {kind} (allowed: {})", allowed.join(", ")),
            });
        }
    }
}

/// The common keys of every entity.
struct Common {
    title: Option<String>,
    aliases: Vec<String>,
    references: Vec<String>,
    applies: VersionRange,
    keps: Vec<u32>,
    feature_gates: Vec<String>,
    related: Vec<String>,
}

fn read_common(r: &mut Reader<'_, '_>, title_required: bool) -> Common {
    Common {
        title: r.string("title", title_required),
        aliases: r.strings("aliases"),
        references: r.strings("references"),
        applies: VersionRange { since: r.version("since"), until: r.version("until") },
        keps: r.integers("keps"),
        feature_gates: r.strings("feature_gates"),
        related: r.strings("related"),
    }
}

fn valid_slug(slug: &str) -> bool {
    !slug.is_empty()
        && slug.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !slug.starts_with(['.', '-'])
}

/// Checks an id's form and returns its kind.
fn parse_id(id: &str) -> Result<Kind, String> {
    let (prefix, slug) = id.split_once('/').ok_or_else(|| format!("`{id}` is not of the form kind/slug"))?;
    let kind = Kind::from_prefix(prefix).ok_or_else(|| {
        let kinds: Vec<&str> = Kind::ALL.iter().map(|k| k.prefix()).collect();
        format!("`{prefix}` in `{id}` is not a kind (one of {})", kinds.join(", "))
    })?;
    if !valid_slug(slug) {
        return Err(format!("slug `{slug}` may only contain letters, digits, `-`, `_` and `.`"));
    }
    Ok(kind)
}

fn parse_file(file: &SourceFile, diags: &mut Vec<Diagnostic>) -> Vec<(Entity, BTreeMap<String, usize>)> {
    let at = |line: usize| Location { file: file.path.clone(), line };
    let (fm, first_line, body) = match split_front_matter(&file.text) {
        Ok(x) => x,
        Err(m) => {
            diags.push(Diagnostic { severity: Severity::Error, location: at(1), key: None, message: m });
            return Vec::new();
        }
    };
    // A second front-matter-looking block in the body is almost always a mistake.
    if body.lines().any(|l| l.trim_end() == "+++") {
        let line = first_line + fm.lines().count() + 1 + body.lines().position(|l| l.trim_end() == "+++").unwrap_or(0) + 1;
        diags.push(Diagnostic {
            severity: Severity::Error,
            location: at(line),
            key: None,
            message: "a `+++` line in the body: front matter must be one block at the top of the file".into(),
        });
    }
    let table: Table = match fm.parse::<Table>() {
        Ok(t) => t,
        Err(e) => {
            let line = e.span().map(|s| first_line + fm[..s.start.min(fm.len())].matches('\n').count()).unwrap_or(first_line);
            let msg = e.message().trim().to_string();
            diags.push(Diagnostic {
                severity: Severity::Error,
                location: at(line),
                key: None,
                message: format!("invalid TOML front matter: {msg}"),
            });
            return Vec::new();
        }
    };
    let lines = Lines::new(&fm, first_line);
    let mut r = Reader {
        table: &table,
        used: HashSet::new(),
        lines: &lines,
        section: None,
        key_prefix: String::new(),
        file: &file.path,
        diags,
        errors: 0,
    };
    let Some(id) = r.string("id", true) else { return Vec::new() };
    let kind = match parse_id(&id) {
        Ok(k) => k,
        Err(m) => {
            r.err("id", m);
            return Vec::new();
        }
    };
    if matches!(kind, Kind::Kep | Kind::FeatureGate | Kind::Release) && !file.path.starts_with("generated/") {
        r.err("id", format!("`{}` entities are generated from upstream data, not written by hand", kind.prefix()));
    }
    let slug = id.split_once('/').map(|(_, s)| s).unwrap_or("");
    let stem = file.path.rsplit('/').next().unwrap_or("").trim_end_matches(".md");
    if stem != slug {
        r.err("id", format!("the file name `{stem}.md` must equal the id's slug `{slug}`"));
    }
    let common = read_common(&mut r, true);
    let location = at(1);
    let mut extra = Vec::new();
    let data = match kind {
        Kind::Component => KindData::Component { part_of: r.string("part_of", false), talks_to: r.strings("talks_to") },
        Kind::Loop => KindData::Loop {
            part_of: r.string("part_of", true).unwrap_or_default(),
            reads: r.strings("reads"),
            writes: r.strings("writes"),
            emits: r.strings("emits"),
        },
        Kind::Field => KindData::Field {
            object: r.string("object", true).unwrap_or_default(),
            path: r.string("path", true).unwrap_or_default(),
            written_by: r.strings("written_by"),
        },
        Kind::Metric => read_metric(&mut r),
        Kind::Symptom => KindData::Symptom(read_symptom(&mut r)),
        Kind::Check => read_check(&mut r),
        Kind::Fix => read_fix(&mut r),
        Kind::Concept | Kind::Kep | Kind::FeatureGate | Kind::Release => KindData::Concept,
        Kind::Myth => KindData::Myth { correction: r.string("correction", true).unwrap_or_default(), concerns: r.strings("concerns") },
        Kind::FailureMode => {
            let mut fm = FailureModeData {
                area: r.string("area", true).unwrap_or_default(),
                components: r.strings("components"),
                loops: r.strings("loops"),
                fields: r.strings("fields"),
                metrics: r.strings("metrics"),
                symptoms: r.strings("symptoms"),
                checks: r.strings("checks"),
                fixes: r.strings("fixes"),
                caused_by: r.strings("caused_by"),
                leads_to: r.strings("leads_to"),
                level: match r.string("level", false).as_deref() {
                    None | Some("cause") => Level::Cause,
                    Some("symptom") => Level::Symptom,
                    Some(other) => {
                        r.err("level", format!("`{other}` is not a level (symptom or cause)"));
                        Level::Cause
                    }
                },
                context: Vec::new(),
                ruled_out_by: r.strings("ruled_out_by"),
            };
            for (n, t) in r.tables("context").into_iter().enumerate() {
                let mut cr = Reader {
                    table: t,
                    used: HashSet::new(),
                    lines: &lines,
                    section: Some(("context", n)),
                    key_prefix: format!("context[{}].", n + 1),
                    file: &file.path,
                    diags: &mut *r.diags,
                    errors: 0,
                };
                if let Some(c) = read_cue(&mut cr) {
                    fm.context.push(c);
                }
                cr.finish("context cue");
            }
            for (table_key, inline_kind) in [("symptom", Kind::Symptom), ("check", Kind::Check), ("fix", Kind::Fix)] {
                let key: &'static str = table_key;
                let tables = r.tables(key);
                for (n, t) in tables.into_iter().enumerate() {
                    let e = read_inline(file, &lines, &mut *r.diags, t, key, n, inline_kind, slug, &common);
                    let e_lines: BTreeMap<String, usize> = t.keys().map(|k| (k.clone(), lines.of_key(Some((key, n)), k))).collect();
                    let target = match inline_kind {
                        Kind::Symptom => &mut fm.symptoms,
                        Kind::Check => &mut fm.checks,
                        _ => &mut fm.fixes,
                    };
                    target.push(e.id.clone());
                    extra.push((e, e_lines));
                }
            }
            KindData::FailureMode(fm)
        }
    };
    r.finish(kind.class_name());
    let entity = Entity {
        id,
        kind,
        title: common.title.unwrap_or_default(),
        aliases: common.aliases,
        references: common.references,
        applies: common.applies,
        keps: common.keps,
        feature_gates: common.feature_gates,
        related: common.related,
        body: body.trim().to_string(),
        location,
        data,
    };
    let top_lines: BTreeMap<String, usize> = table.keys().map(|k| (k.clone(), lines.of_key(None, k))).collect();
    let mut out = vec![(entity, top_lines)];
    out.extend(extra);
    out
}

fn read_metric(r: &mut Reader<'_, '_>) -> KindData {
    let metric_type = r.string("type", true).unwrap_or_default();
    if !metric_type.is_empty() && !["counter", "gauge", "histogram", "summary"].contains(&metric_type.as_str()) {
        r.err("type", format!("`{metric_type}` is not one of counter, gauge, histogram, summary"));
    }
    let stability = r.string("stability", false);
    if let Some(s) = &stability {
        if !["ALPHA", "BETA", "STABLE", "INTERNAL", "NONE"].contains(&s.as_str()) {
            r.err("stability", format!("`{s}` is not one of ALPHA, BETA, STABLE, INTERNAL, NONE"));
        }
    }
    KindData::Metric {
        name: r.string("name", true).unwrap_or_default(),
        component: r.string("component", true).unwrap_or_default(),
        metric_type,
        stability,
        labels: r.strings("labels"),
        bad_value: r.string("bad_value", false),
    }
}

fn read_symptom(r: &mut Reader<'_, '_>) -> SymptomData {
    let signal_text = r.string("signal", true);
    let signal = signal_text.as_deref().and_then(SignalKind::parse);
    if let (Some(s), None) = (&signal_text, signal) {
        r.err("signal", format!("`{s}` is not one of event, message, status-reason, exit-code, http-status, log, condition, metric"));
    }
    let text = r.string("text", false);
    let reason = r.string("reason", false);
    let code = r.integer("code");
    let source = r.string("source", false);
    let weight = r.float("weight").unwrap_or(1.0);
    if !(0.0..=5.0).contains(&weight) {
        r.err("weight", format!("{weight} is outside 0.0..=5.0"));
    }
    let signal = signal.unwrap_or(SignalKind::Message);
    match signal {
        SignalKind::Event | SignalKind::Message | SignalKind::Log | SignalKind::Condition if text.is_none() => {
            r.err("text", format!("a `{}` symptom needs the machine text", signal.as_str()));
        }
        SignalKind::Event | SignalKind::StatusReason if reason.is_none() => {
            r.err("reason", format!("a `{}` symptom needs its reason", signal.as_str()));
        }
        SignalKind::ExitCode | SignalKind::HttpStatus if code.is_none() => {
            r.err("code", format!("a `{}` symptom needs its code", signal.as_str()));
        }
        _ => {}
    }
    if let Some(t) = &text {
        if source.is_none() {
            r.err("source", format!("a symptom with machine text must name the source that emits it ({SOURCE_FORMS})"));
        }
        if let Err(m) = crate::signals::check_template(t) {
            r.err("text", m);
        }
    }
    if let Some(s) = &source {
        if !is_source(s) {
            r.err("source", format!("`{s}` is not a source: use {SOURCE_FORMS}"));
        }
    }
    SymptomData { signal, text, reason, code, source, weight }
}

/// The forms a symptom's `source` takes, for messages.
pub const SOURCE_FORMS: &str = "`owner/repo:path` of a public repository, a URL, or `local:NAME` for in-house code (`local:payments-api/src/errors.go`)";

/// Whether `s` is a source reference: `owner/repo:path`, an http(s) URL, or `local:NAME`
/// (in-house code with no public repository; the name is free text).
pub fn is_source(s: &str) -> bool {
    let s = s.trim();
    if s.starts_with("https://") || s.starts_with("http://") {
        return true;
    }
    if let Some(name) = s.strip_prefix("local:") {
        return !name.trim().is_empty();
    }
    match s.split_once(':') {
        Some((repo, path)) => {
            repo.split_once('/').is_some_and(|(o, n)| !o.is_empty() && !n.is_empty() && !n.contains('/') && !repo.contains(char::is_whitespace)) && !path.trim().is_empty()
        }
        None => false,
    }
}

fn read_check(r: &mut Reader<'_, '_>) -> KindData {
    KindData::Check {
        command: r.string("command", false),
        look_for: r.string("look_for", true).unwrap_or_default(),
        probe: r.string("probe", false),
        rules_out: r.string("rules_out", false),
    }
}

/// The `text` of a phrase or history cue: required and not blank.
fn cue_text(r: &mut Reader<'_, '_>) -> Option<String> {
    let t = r.string("text", true)?;
    if t.trim().is_empty() {
        r.err("text", "a cue's `text` must not be empty".into());
        return None;
    }
    Some(t)
}

/// Reads one `[[context]]` table (knowledge/README.md, "Context cues").
fn read_cue(r: &mut Reader<'_, '_>) -> Option<ContextCue> {
    let cue = r.string("cue", true)?;
    let weight = r.float("weight").unwrap_or(1.0);
    if !(weight > 0.0 && weight <= 3.0) {
        r.err("weight", format!("`{weight}` is not a weight in (0, 3]"));
    }
    let kind = match cue.as_str() {
        "phrase" => CueKind::Phrase { text: cue_text(r)? },
        "history" => CueKind::History { text: cue_text(r)? },
        "setting" => CueKind::Setting { field: r.string("field", true)?, value: r.string("value", false) },
        "platform" => {
            let t = r.string("text", true)?;
            if !PLATFORMS.iter().any(|(slug, _)| *slug == t) {
                r.err("text", format!("`{t}` is not a platform (one of {})", PLATFORMS.iter().map(|p| p.0).collect::<Vec<_>>().join(", ")));
                return None;
            }
            CueKind::Platform { text: t }
        }
        "product" => CueKind::Product { text: cue_text(r)? },
        "timing" => {
            let s = r.integer("seconds")?;
            if s <= 0 {
                r.err("seconds", format!("`{s}` is not a positive number of seconds"));
                return None;
            }
            CueKind::Timing { seconds: s as u64 }
        }
        "exit-code" => CueKind::ExitCode { code: r.integer("code")? },
        "port" => {
            let c = r.integer("code")?;
            if !(1..=65535).contains(&c) {
                r.err("code", format!("`{c}` is not a port"));
                return None;
            }
            CueKind::Port { code: c }
        }
        other => {
            r.err("cue", format!("`{other}` is not a cue (one of phrase, history, setting, platform, product, timing, exit-code, port)"));
            return None;
        }
    };
    Some(ContextCue { kind, weight })
}

fn read_fix(r: &mut Reader<'_, '_>) -> KindData {
    let risk = r.string("risk", true).unwrap_or_default();
    if !risk.is_empty() && !["low", "medium", "high"].contains(&risk.as_str()) {
        r.err("risk", format!("`{risk}` is not one of low, medium, high"));
    }
    KindData::Fix { action: r.string("action", true).unwrap_or_default(), command: r.string("command", false), risk }
}

#[allow(clippy::too_many_arguments)]
fn read_inline(
    file: &SourceFile,
    lines: &Lines<'_>,
    diags: &mut Vec<Diagnostic>,
    table: &Table,
    key: &str,
    n: usize,
    kind: Kind,
    parent_slug: &str,
    parent: &Common,
) -> Entity {
    let section_line = lines.of_key(Some((key, n)), "\u{0}");
    let mut r = Reader {
        table,
        used: HashSet::new(),
        lines,
        section: Some((key, n)),
        key_prefix: format!("{key}[{}].", n + 1),
        file: &file.path,
        diags,
        errors: 0,
    };
    let default_id = format!("{}/{parent_slug}-{}", kind.prefix(), n + 1);
    let id = match r.string("id", false) {
        Some(id) => match parse_id(&id) {
            Ok(k) if k == kind => id,
            Ok(k) => {
                r.err("id", format!("an inline [[{key}]] must have a `{}` id, found a `{}` id", kind.prefix(), k.prefix()));
                default_id
            }
            Err(m) => {
                r.err("id", m);
                default_id
            }
        },
        None => default_id,
    };
    let title = r.string("title", false);
    let aliases = r.strings("aliases");
    let references = r.strings("references");
    let applies = VersionRange { since: r.version("since"), until: r.version("until") };
    let data = match kind {
        Kind::Symptom => KindData::Symptom(read_symptom(&mut r)),
        Kind::Check => read_check(&mut r),
        _ => read_fix(&mut r),
    };
    r.finish(kind.class_name());
    let title = title.unwrap_or_else(|| match &data {
        KindData::Symptom(s) => symptom_title(s),
        KindData::Check { command, look_for, .. } => command.clone().unwrap_or_else(|| look_for.clone()),
        KindData::Fix { action, .. } => action.clone(),
        _ => String::new(),
    });
    let references = if references.is_empty() && kind == Kind::Symptom {
        match &data {
            KindData::Symptom(SymptomData { source: Some(s), .. }) => vec![s.clone()],
            _ => parent.references.clone(),
        }
    } else {
        references
    };
    Entity {
        id,
        kind,
        title,
        aliases,
        references,
        applies,
        keps: Vec::new(),
        feature_gates: Vec::new(),
        related: Vec::new(),
        body: String::new(),
        location: Location { file: file.path.clone(), line: section_line },
        data,
    }
}

/// A readable title for a symptom with none: reason and text, or the code.
pub fn symptom_title(s: &SymptomData) -> String {
    match (&s.reason, &s.text, s.code) {
        (Some(r), Some(t), _) => format!("{r}: {t}"),
        (None, Some(t), _) => t.clone(),
        (Some(r), None, _) => r.clone(),
        (None, None, Some(c)) if s.signal == SignalKind::ExitCode => format!("exit code {c}"),
        (None, None, Some(c)) => format!("HTTP {c}"),
        _ => s.signal.as_str().to_string(),
    }
}

/// What kind each relation key must point to.
fn expect_kinds(kb: &KnowledgeBase, e: &Entity, diags: &mut Vec<Diagnostic>) {
    let mut check = |key: &str, ids: &[String], allowed: &[Kind]| {
        for id in ids {
            let problem = match kb.get(id) {
                Some(t) if allowed.contains(&t.kind) => None,
                Some(t) => Some(format!(
                    "`{id}` is a {}, expected {}",
                    t.kind.prefix(),
                    allowed.iter().map(|k| k.prefix()).collect::<Vec<_>>().join(" or ")
                )),
                None => Some(format!("`{id}` does not exist{}", suggest(kb, id))),
            };
            if let Some(message) = problem {
                diags.push(Diagnostic {
                    severity: Severity::Error,
                    location: kb.key_location(&e.id, key).unwrap_or_else(|| e.location.clone()),
                    key: Some(key.to_string()),
                    message,
                });
            }
        }
    };
    check("related", &e.related, &Kind::ALL);
    match &e.data {
        KindData::Component { part_of, talks_to } => {
            check("part_of", part_of.as_slice(), &[Kind::Component]);
            check("talks_to", talks_to, &[Kind::Component]);
        }
        KindData::Loop { part_of, reads, writes, emits } => {
            check("part_of", std::slice::from_ref(part_of), &[Kind::Component]);
            check("reads", reads, &[Kind::Field]);
            check("writes", writes, &[Kind::Field]);
            check("emits", emits, &[Kind::Metric]);
        }
        KindData::Field { written_by, .. } => check("written_by", written_by, &[Kind::Loop, Kind::Component]),
        KindData::Metric { component, .. } => check("component", std::slice::from_ref(component), &[Kind::Component]),
        KindData::FailureMode(fm) => {
            check("components", &fm.components, &[Kind::Component]);
            check("loops", &fm.loops, &[Kind::Loop]);
            check("fields", &fm.fields, &[Kind::Field]);
            check("metrics", &fm.metrics, &[Kind::Metric]);
            check("symptoms", &fm.symptoms, &[Kind::Symptom]);
            check("checks", &fm.checks, &[Kind::Check]);
            check("fixes", &fm.fixes, &[Kind::Fix]);
            check("caused_by", &fm.caused_by, &[Kind::FailureMode]);
            check("leads_to", &fm.leads_to, &[Kind::FailureMode]);
        }
        KindData::Myth { concerns, .. } => check("concerns", concerns, &Kind::ALL),
        _ => {}
    }
}

/// " (did you mean `x`?)" when an id of the same kind is close, else "". Bounded (issue 16):
/// ids over 128 bytes get no suggestion, only ids of a near length are compared, and the answer
/// for each missing id is computed once per thread and graph size.
fn suggest(kb: &KnowledgeBase, id: &str) -> String {
    thread_local! {
        static CACHE: std::cell::RefCell<(usize, HashMap<String, String>)> = std::cell::RefCell::new((0, HashMap::new()));
    }
    if id.len() > 128 {
        return String::new();
    }
    let key = (kb as *const KnowledgeBase as usize).wrapping_mul(31).wrapping_add(kb.len());
    if let Some(hit) = CACHE.with(|c| {
        let c = c.borrow();
        (c.0 == key).then(|| c.1.get(id).cloned()).flatten()
    }) {
        return hit;
    }
    let prefix = id.split('/').next().unwrap_or("");
    let max = id.len() / 3 + 1;
    let best = kb
        .entities()
        .iter()
        .filter(|e| e.kind.prefix() == prefix && e.id.len().abs_diff(id.len()) <= max)
        .map(|e| (strsim_distance(&e.id, id), &e.id))
        .min();
    let out = match best {
        Some((d, best)) if d <= max => format!(" (did you mean `{best}`?)"),
        _ => String::new(),
    };
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.0 != key || c.1.len() > 10_000 {
            *c = (key, HashMap::new());
        }
        c.1.insert(id.to_string(), out.clone());
    });
    out
}

/// Levenshtein distance (small inputs only).
pub fn strsim_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

fn validate(kb: &KnowledgeBase, diags: &mut Vec<Diagnostic>) {
    let mut causes: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let index = FmIndex::new(kb);
    for e in kb.entities() {
        let err = |key: &str, message: String| Diagnostic {
            severity: Severity::Error,
            location: kb.key_location(&e.id, key).unwrap_or_else(|| e.location.clone()),
            key: Some(key.to_string()),
            message,
        };
        if let (Some(s), Some(u)) = (e.applies.since, e.applies.until) {
            if s >= u {
                diags.push(err("until", format!("`until` {u} must be later than `since` {s} (the range is since <= v < until)")));
            }
        }
        expect_kinds(kb, e, diags);
        if let KindData::FailureMode(fm) = &e.data {
            if !fm.area.is_empty() && !AREAS.contains(&fm.area.as_str()) {
                diags.push(err("area", format!("`{}` is not an area (one of {})", fm.area, AREAS.join(", "))));
            }
            // A cause of a hub may have no message of its own: it shows as the hub's messages.
            let is_hub_cause = fm.level == Level::Cause && index.is_hub_cause(kb, &e.id, fm);
            let required: [(&str, &Vec<String>, &str, bool); 5] = [
                ("components", &fm.components, "a component", true),
                ("loops", &fm.loops, "a loop", true),
                ("symptom", &fm.symptoms, "a symptom ([[symptom]] or `symptoms`)", !is_hub_cause),
                ("check", &fm.checks, "a check ([[check]] or `checks`)", true),
                ("fix", &fm.fixes, "a fix ([[fix]] or `fixes`)", true),
            ];
            for (key, list, what, needed) in required {
                if needed && list.is_empty() {
                    diags.push(err(key, format!("a failure mode needs at least {what}")));
                }
            }
            if e.references.is_empty() {
                diags.push(err("references", "a failure mode needs at least one reference".into()));
            }
            validate_level(kb, &index, e, fm, diags);
            for c in &fm.caused_by {
                causes.entry(e.id.as_str()).or_default().push(c.as_str());
            }
            for d in &fm.leads_to {
                causes.entry(d.as_str()).or_default().push(e.id.as_str());
            }
        }
        if matches!(e.kind, Kind::Symptom | Kind::Myth) && e.references.is_empty() && !e.location.file.is_empty() {
            diags.push(err("references", format!("a {} needs at least one reference", e.kind.prefix())));
        }
    }
    // A failure mode that is (transitively) its own cause is a modelling error: one on a cycle,
    // that is in a strongly connected component of two or more, or linked to itself (linear).
    for start in on_cycles(&causes) {
        if let Some(e) = kb.get(start) {
            diags.push(Diagnostic {
                severity: Severity::Error,
                location: kb.key_location(start, "caused_by").unwrap_or_else(|| e.location.clone()),
                key: Some("caused_by".into()),
                message: "causedBy/leadsTo links form a cycle back to this failure mode".into(),
            });
        }
    }
}

/// The nodes of `graph` that lie on a cycle, in key order (Tarjan's strongly connected
/// components, iterative: O(nodes + edges), no recursion).
fn on_cycles<'a>(graph: &BTreeMap<&'a str, Vec<&'a str>>) -> Vec<&'a str> {
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut low: HashMap<&str, usize> = HashMap::new();
    let mut on_stack: HashSet<&str> = HashSet::new();
    let mut stack: Vec<&str> = Vec::new();
    let mut cyclic: HashSet<&str> = HashSet::new();
    let mut next = 0usize;
    let empty: Vec<&str> = Vec::new();
    for &root in graph.keys() {
        if index.contains_key(root) {
            continue;
        }
        // (node, next edge to follow)
        let mut work: Vec<(&str, usize)> = vec![(root, 0)];
        index.insert(root, next);
        low.insert(root, next);
        next += 1;
        stack.push(root);
        on_stack.insert(root);
        while let Some(&mut (v, ref mut i)) = work.last_mut() {
            let edges = graph.get(v).unwrap_or(&empty);
            if let Some(&w) = edges.get(*i) {
                *i += 1;
                if w == v {
                    cyclic.insert(v);
                }
                if !index.contains_key(w) {
                    index.insert(w, next);
                    low.insert(w, next);
                    next += 1;
                    stack.push(w);
                    on_stack.insert(w);
                    work.push((w, 0));
                } else if on_stack.contains(w) {
                    let lw = index[w];
                    let lv = low.get_mut(v).expect("visited");
                    *lv = (*lv).min(lw);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                let lv = low[v];
                let lp = low.get_mut(parent).expect("visited");
                *lp = (*lp).min(lv);
            }
            if low[v] == index[v] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack.remove(w);
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    cyclic.extend(component);
                }
            }
        }
    }
    graph.keys().copied().filter(|k| cyclic.contains(k)).collect()
}

/// The cause-level failure modes of a hub: its `caused_by` in order, then those that name it in
/// `leads_to` (by id), each once.
pub fn causes_of_hub(kb: &KnowledgeBase, hub: &Entity) -> Vec<String> {
    let extra: Vec<&Entity> = kb
        .of_kind(Kind::FailureMode)
        .filter(|e| e.failure_mode().is_some_and(|d| d.level == Level::Cause && d.leads_to.contains(&hub.id)))
        .collect();
    causes_of_hub_with(kb, hub, &extra)
}

/// For each failure mode id, the cause-level failure modes naming it in `leads_to` (one pass
/// over the graph, so looking up every hub stays linear).
pub fn leads_to_index(kb: &KnowledgeBase) -> HashMap<&str, Vec<&Entity>> {
    let mut m: HashMap<&str, Vec<&Entity>> = HashMap::new();
    for e in kb.of_kind(Kind::FailureMode) {
        if let Some(d) = e.failure_mode().filter(|d| d.level == Level::Cause) {
            for h in &d.leads_to {
                m.entry(h.as_str()).or_default().push(e);
            }
        }
    }
    m
}

/// [`causes_of_hub`] given the causes that name the hub in `leads_to` ([`leads_to_index`]).
pub fn causes_of_hub_with(kb: &KnowledgeBase, hub: &Entity, leads_to_hub: &[&Entity]) -> Vec<String> {
    let Some(fm) = hub.failure_mode() else { return Vec::new() };
    let mut out: Vec<String> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for c in &fm.caused_by {
        if kb.get(c).and_then(Entity::failure_mode).is_some_and(|d| d.level == Level::Cause) && seen.insert(c.as_str()) {
            out.push(c.clone());
        }
    }
    let mut extra: Vec<&Entity> = leads_to_hub.to_vec();
    extra.sort_by(|a, b| a.id.cmp(&b.id));
    for e in extra {
        if seen.insert(e.id.as_str()) {
            out.push(e.id.clone());
        }
    }
    out
}

/// Who refers to what among failure modes, built once per validation (issue 16: the per-entity
/// scans over every failure mode made `lint` quadratic; 2,000 files took 48.8 s).
struct FmIndex<'a> {
    /// Ids named in the `caused_by` of a symptom-level failure mode (hub).
    hub_causes: HashSet<&'a str>,
    /// For each id, the cause-level failure modes naming it in `leads_to`.
    leads_to: HashMap<&'a str, Vec<&'a Entity>>,
    /// For each symptom id, how many failure modes list it.
    symptom_users: HashMap<&'a str, usize>,
    /// For each check id, how many failure modes list it.
    check_users: HashMap<&'a str, usize>,
}

impl<'a> FmIndex<'a> {
    fn new(kb: &'a KnowledgeBase) -> FmIndex<'a> {
        let mut ix = FmIndex { hub_causes: HashSet::new(), leads_to: leads_to_index(kb), symptom_users: HashMap::new(), check_users: HashMap::new() };
        for e in kb.of_kind(Kind::FailureMode) {
            let Some(d) = e.failure_mode() else { continue };
            if d.level == Level::Symptom {
                ix.hub_causes.extend(d.caused_by.iter().map(String::as_str));
            }
            let symptoms: HashSet<&str> = d.symptoms.iter().map(String::as_str).collect();
            for s in symptoms {
                *ix.symptom_users.entry(s).or_default() += 1;
            }
            let checks: HashSet<&str> = d.checks.iter().map(String::as_str).collect();
            for c in checks {
                *ix.check_users.entry(c).or_default() += 1;
            }
        }
        ix
    }

    /// Whether a hub names `id` in its `caused_by`, or `fm` names a hub in its `leads_to`.
    fn is_hub_cause(&self, kb: &KnowledgeBase, id: &str, fm: &FailureModeData) -> bool {
        self.hub_causes.contains(id) || fm.leads_to.iter().any(|h| kb.get(h).and_then(Entity::failure_mode).is_some_and(|d| d.level == Level::Symptom))
    }
}

/// The level rules (knowledge/README.md): a hub has at least two causes; a cause reached from a
/// hub has a check of its own and a context cue or a message of its own; cue-like keys are
/// not empty.
fn validate_level(kb: &KnowledgeBase, index: &FmIndex<'_>, e: &Entity, fm: &FailureModeData, diags: &mut Vec<Diagnostic>) {
    let err = |key: &str, message: String| Diagnostic {
        severity: Severity::Error,
        location: kb.key_location(&e.id, key).unwrap_or_else(|| e.location.clone()),
        key: Some(key.to_string()),
        message,
    };
    for p in &fm.ruled_out_by {
        if p.split_whitespace().count() < 2 {
            diags.push(err("ruled_out_by", format!("`{p}` is too short to rule a cause out: write what the user would say (two words or more)")));
        }
    }
    match fm.level {
        Level::Symptom => {
            let causes = causes_of_hub_with(kb, e, index.leads_to.get(e.id.as_str()).map_or(&[][..], Vec::as_slice));
            if causes.len() < 2 {
                diags.push(err(
                    "level",
                    format!("a symptom-level failure mode (hub) needs at least two cause-level failure modes in `caused_by` (or naming it in their `leads_to`), found {}", causes.len()),
                ));
            }
            if !fm.context.is_empty() {
                diags.push(err("context", "context cues belong to causes, not to a symptom-level hub".into()));
            }
        }
        Level::Cause => {
            if !index.is_hub_cause(kb, &e.id, fm) {
                return;
            }
            let own = |id: &str, prefix: &str| id.starts_with(&format!("{prefix}/{}-", e.id.trim_start_matches("failure-mode/")));
            // No other failure mode lists it (this one does: it is one of its users).
            let own_symptom = fm.symptoms.iter().any(|s| own(s, "symptom") || index.symptom_users.get(s.as_str()).copied().unwrap_or(0) <= 1);
            if fm.context.is_empty() && !own_symptom {
                diags.push(err(
                    "context",
                    "a cause of a hub needs at least one [[context]] cue or a [[symptom]] of its own that tells it apart from its siblings".into(),
                ));
            }
            let own_check = fm.checks.iter().any(|c| index.check_users.get(c.as_str()).copied().unwrap_or(0) <= 1);
            if !own_check {
                diags.push(err("check", "a cause of a hub needs at least one [[check]] of its own (shared checks do not tell siblings apart)".into()));
            }
        }
    }
}

/// 1-based line numbers of a file's trimmed lines (first occurrence of each).
fn line_index(text: &str) -> HashMap<&str, usize> {
    let mut m = HashMap::new();
    for (i, l) in text.lines().enumerate() {
        m.entry(l.trim()).or_insert(i + 1);
    }
    m
}

fn load_generated(file: &SourceFile, kb: &mut KnowledgeBase, metrics: &mut Vec<(Entity, String)>, diags: &mut Vec<Diagnostic>) {
    let index = line_index(&file.text);
    let line_of = |_text: &str, needle: &str| index.get(needle).copied().unwrap_or(1);
    let g = match crate::upstream::parse_generated(&file.text) {
        Ok(g) => g,
        Err(m) => {
            diags.push(Diagnostic {
                severity: Severity::Error,
                location: Location { file: file.path.clone(), line: 1 },
                key: None,
                message: format!("invalid generated file: {}", m.trim()),
            });
            return;
        }
    };
    let entity = |id: String, title: String, line: usize, references: Vec<String>, keps: Vec<u32>, feature_gates: Vec<String>, data: KindData| Entity {
        // Generated names may hold characters a curated slug may not (`CSIMigration{vendor}`):
        // the kind still comes from the prefix.
        kind: parse_id(&id).ok().or_else(|| id.split_once('/').and_then(|(p, _)| Kind::from_prefix(p))).unwrap_or(Kind::Concept),
        id,
        title,
        aliases: Vec::new(),
        references,
        applies: VersionRange::default(),
        keps,
        feature_gates,
        related: Vec::new(),
        body: String::new(),
        location: Location { file: file.path.clone(), line },
        data,
    };
    fn push(kb: &mut KnowledgeBase, diags: &mut Vec<Diagnostic>, e: Entity) {
        let loc = e.location.clone();
        let id = e.id.clone();
        if let Err(first) = kb.push(e) {
            diags.push(Diagnostic { severity: Severity::Error, location: loc, key: Some("id".into()), message: format!("duplicate id `{id}` (first defined at {first})") });
        }
    }
    for gate in g.feature_gate {
        let line = line_of(&file.text, &format!("name = \"{}\"", gate.name));
        let e = entity(
            format!("feature-gate/{}", gate.name),
            gate.name.clone(),
            line,
            vec![gate.source.clone()],
            gate.keps.clone(),
            Vec::new(),
            KindData::FeatureGate(gate.clone()),
        );
        kb.upstream.gates.insert(gate.name.clone(), gate);
        push(kb, diags, e);
    }
    for kep in g.kep {
        let line = line_of(&file.text, &format!("number = {}", kep.number));
        let e = entity(
            format!("kep/{}", kep.number),
            format!("KEP-{}: {}", kep.number, kep.title),
            line,
            vec![format!("https://github.com/kubernetes/enhancements/tree/master/{}", kep.path)],
            Vec::new(),
            kep.feature_gates.clone(),
            KindData::Kep(kep.clone()),
        );
        kb.upstream.keps.insert(kep.number, kep);
        push(kb, diags, e);
    }
    let is_supplement = file.path.ends_with(SUPPLEMENT);
    for m in g.metric {
        if is_supplement && (m.source.trim().is_empty() || !m.source.contains(':')) {
            diags.push(Diagnostic {
                severity: Severity::Error,
                location: Location { file: file.path.clone(), line: line_of(&file.text, &format!("name = \"{}\"", m.name)) },
                key: Some("source".into()),
                message: format!("supplement metric `{}` must name the source that defines it (`owner/repo:path`)", m.name),
            });
        }
        let line = line_of(&file.text, &format!("name = \"{}\"", m.name));
        let e = entity(
            format!("metric/{}", m.name),
            m.name.clone(),
            line,
            vec![m.source.clone()],
            Vec::new(),
            Vec::new(),
            KindData::Metric {
                name: m.name.clone(),
                component: m.component.clone(),
                metric_type: m.metric_type.clone(),
                stability: if m.stability.is_empty() { None } else { Some(m.stability.clone()) },
                labels: m.labels.clone(),
                bad_value: None,
            },
        );
        kb.upstream.metrics.insert(m.name.clone(), m.clone());
        metrics.push((e, m.name));
    }
    for r in g.release {
        let line = line_of(&file.text, &format!("version = \"{}\"", r.version));
        let e = entity(format!("release/{}", r.version), format!("Kubernetes {}", r.version), line, vec![r.source.clone()], Vec::new(), Vec::new(), KindData::Release(r.clone()));
        kb.upstream.releases.push(r);
        push(kb, diags, e);
    }
}

fn load_topics(file: &SourceFile, kb: &mut KnowledgeBase, diags: &mut Vec<Diagnostic>) {
    let parsed: Result<TopicFile, _> = toml::from_str(&file.text);
    match parsed {
        Ok(t) => {
            let mut starts = file.text.lines().enumerate().filter(|(_, l)| l.trim() == "[[topic]]").map(|(i, _)| i + 1);
            for topic in t.topic {
                let line = starts.next().unwrap_or(1);
                kb.topics.push((topic, Location { file: file.path.clone(), line }));
            }
        }
        Err(e) => {
            let line = e.span().map(|s| 1 + file.text[..s.start.min(file.text.len())].matches('\n').count()).unwrap_or(1);
            diags.push(Diagnostic {
                severity: Severity::Error,
                location: Location { file: file.path.clone(), line },
                key: None,
                message: format!("invalid topic map: {}", e.message().trim()),
            });
        }
    }
}

fn validate_topics(kb: &KnowledgeBase, diags: &mut Vec<Diagnostic>) {
    let mut seen = HashSet::new();
    for (t, loc) in &kb.topics {
        if !seen.insert((t.area.as_str(), t.topic.as_str())) {
            diags.push(Diagnostic { severity: Severity::Error, location: loc.clone(), key: Some("topic".into()), message: "the same topic is listed twice".into() });
        }
        if t.entities.is_empty() {
            diags.push(Diagnostic {
                severity: Severity::Error,
                location: loc.clone(),
                key: Some("entities".into()),
                message: format!("no entity covers the topic \"{}\"", t.topic.chars().take(80).collect::<String>()),
            });
        }
        for id in &t.entities {
            if kb.get(id).is_none() {
                diags.push(Diagnostic {
                    severity: Severity::Error,
                    location: loc.clone(),
                    key: Some("entities".into()),
                    message: format!("`{id}` does not exist{}", suggest(kb, id)),
                });
            }
        }
    }
}

#[cfg(test)]
mod issue16_tests {
    use super::on_cycles;
    use std::collections::BTreeMap;

    #[test]
    fn nodes_on_cycles_are_found_in_linear_time() {
        let mut g: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        g.insert("a", vec!["b"]);
        g.insert("b", vec!["c", "x"]);
        g.insert("c", vec!["a"]);
        g.insert("d", vec!["a"]);
        g.insert("e", vec!["e"]);
        g.insert("f", vec!["g"]);
        g.insert("g", vec!["f"]);
        assert_eq!(on_cycles(&g), vec!["a", "b", "c", "e", "f", "g"]);
        // A chain of 100,000 links (was a walk from every node: n^2/2 steps) and a ring.
        let names: Vec<String> = (0..100_000).map(|i| format!("n{i}")).collect();
        let mut chain: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for w in names.windows(2) {
            chain.insert(&w[0], vec![&w[1]]);
        }
        let started = std::time::Instant::now();
        assert!(on_cycles(&chain).is_empty());
        chain.insert(&names[99_999], vec![&names[0]]);
        assert_eq!(on_cycles(&chain).len(), 100_000);
        assert!(started.elapsed() < std::time::Duration::from_secs(10), "{:?}", started.elapsed());
    }
}
