//! Offline snapshots: cluster state read from files instead of a live cluster.
//!
//! [`load`] accepts a directory or a single file:
//! - `kubectl get KIND -A -o json` (or `-o yaml`) output: a `List` whose items carry
//!   `kind`, a typed list (`PodList`, whose items may lack `kind`), or one object; YAML
//!   files may hold several documents separated by `---`;
//! - `kubectl cluster-info dump` written to a file (a stream of JSON lists, with the
//!   `==== START logs for container … ====` sections, which are skipped);
//! - `kubectl cluster-info dump --output-directory DIR` (with or without
//!   `--all-namespaces`): `DIR/nodes.json`, `DIR/<namespace>/{pods,events,…}.json` and
//!   `DIR/<namespace>/<pod>/logs.txt` (logs are skipped);
//! - optionally `version.json`: `kubectl version -o json` output or the raw `/version`
//!   answer, which gives the server version.
//!
//! Files are read recursively in path order. Objects of kinds the probes do not read
//! (ReplicationController, ConfigMap, …) are skipped and counted in the notices;
//! Secrets are skipped without being parsed further. A kind that appears in no file is
//! marked unavailable ("not in the snapshot"), so probes that need it say unknown.

use super::state::{ClusterState, ResourceKind, Unavailable};
use kubewhy_engine::model::Version;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Errors of reading a snapshot.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// The path could not be read.
    #[error("cannot read snapshot {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A file is not valid JSON or YAML.
    #[error("{path}:{line}:{column}: {message}")]
    Syntax {
        /// The file.
        path: PathBuf,
        /// 1-based line of the problem.
        line: usize,
        /// 1-based column of the problem.
        column: usize,
        /// What the parser said.
        message: String,
    },
    /// An object does not match its kind's schema.
    #[error("{path}: {kind} {name}: {message}")]
    Schema {
        /// The file.
        path: PathBuf,
        /// The object's kind.
        kind: String,
        /// `namespace/name` or `name`, or `#N` (its position) when it has no name.
        name: String,
        /// What serde said about the object.
        message: String,
    },
    /// Nothing in the path was a Kubernetes object of a kind kubewhy reads.
    #[error("{0}: no Kubernetes objects of a kind kubewhy reads (expected `kubectl get -o json` lists or a `kubectl cluster-info dump` folder)")]
    Empty(PathBuf),
    /// A file or the folder walk passed a limit (size, file type, depth, count) or is not UTF-8.
    #[error(transparent)]
    Bounded(#[from] kubewhy_engine::bounded::ReadError),
}

/// A loaded snapshot: the state and what was noticed on the way.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// The file or directory read.
    pub path: PathBuf,
    /// The objects, the version (when a version file was present) and the kinds absent.
    pub state: ClusterState,
    /// Files read.
    pub files: usize,
    /// Objects skipped, by kind (kinds the probes do not read, and Secrets).
    pub skipped: BTreeMap<String, usize>,
    /// Sentences for people: what was skipped, which kinds are missing.
    pub notices: Vec<String>,
}

/// Reads a snapshot from a directory (recursively) or one file.
///
/// # Errors
/// [`SnapshotError`]: an unreadable path, a file that is not JSON or YAML (with its
/// line and column), an object that does not match its kind's schema (with the field),
/// or a path with no objects of a kind kubewhy reads.
pub fn load(path: &Path) -> Result<Snapshot, SnapshotError> {
    let io = |source| SnapshotError::Io { path: path.to_path_buf(), source };
    let meta = std::fs::metadata(path).map_err(io)?;
    let mut files = Vec::new();
    if meta.is_dir() {
        walk(path, &mut files)?;
    } else {
        files.push(path.to_path_buf());
    }
    files.sort();
    let mut snap = Snapshot { path: path.to_path_buf(), ..Snapshot::default() };
    let mut seen = std::collections::BTreeSet::new();
    for file in &files {
        let ext = file.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
        let known = matches!(ext.as_str(), "json" | "yaml" | "yml");
        if !known && meta.is_dir() && !starts_with_json(file) {
            continue; // logs.txt and anything else in a dump folder
        }
        let text = kubewhy_engine::bounded::read_file(file, MAX_SNAPSHOT_FILE_BYTES, "a snapshot file")?;
        snap.files += 1;
        let docs = if ext == "yaml" || ext == "yml" || (!known && !text.trim_start().starts_with(['{', '['])) {
            parse_yaml(file, &blank_logs(&text))?
        } else {
            parse_json_stream(file, &text)?
        };
        let stem_kind = file.file_stem().and_then(|s| s.to_str()).and_then(ResourceKind::parse);
        for doc in docs {
            add_document(&mut snap, &mut seen, file, doc, stem_kind)?;
        }
    }
    if seen.is_empty() && snap.state.version.is_none() {
        return Err(SnapshotError::Empty(path.to_path_buf()));
    }
    for kind in ResourceKind::ALL {
        if seen.contains(kind) {
            snap.state.loaded.insert(*kind);
        } else {
            snap.state.unavailable.insert(
                *kind,
                Unavailable { status: None, reason: format!("the snapshot has no {}", kind.plural()) },
            );
        }
    }
    snap.state.observed_at = snap.state.newest_timestamp();
    for (kind, n) in &snap.skipped {
        snap.notices.push(format!("skipped {n} {kind} object(s): kubewhy does not read that kind"));
    }
    Ok(snap)
}

/// Largest snapshot file read, in bytes.
pub const MAX_SNAPSHOT_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// The files of a snapshot folder: symlinked directories are not entered, special files are
/// skipped, depth and count are limited ([`kubewhy_engine::bounded::walk`]).
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), SnapshotError> {
    out.extend(kubewhy_engine::bounded::walk(dir, &|_: &str| false)?);
    Ok(())
}

/// Whether a file of another extension holds JSON (a `kubectl cluster-info dump > dump.txt`
/// inside a snapshot folder): its first non-blank byte is `{`. Log files of a dump folder
/// start with `==== START logs`.
fn starts_with_json(path: &Path) -> bool {
    use std::io::Read;
    let mut buf = [0u8; 256];
    let n = std::fs::File::open(path).and_then(|mut f| f.read(&mut buf)).unwrap_or(0);
    buf[..n].iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
}

/// Parses concatenated JSON values, skipping `==== START logs … ==== END logs …` sections.
fn parse_json_stream(path: &Path, text: &str) -> Result<Vec<Value>, SnapshotError> {
    let cleaned = blank_logs(text);
    parse_json_values(path, &cleaned)
}

/// Blanks the container log sections of a `kubectl cluster-info dump` stream line by line
/// (`==== START logs for container C of pod NS/P ====` to the matching `==== END logs …`,
/// kubernetes/kubectl:pkg/cmd/clusterinfo/clusterinfo_dump.go `printContainer`), keeping the
/// line count so positions in errors stay right.
fn blank_logs(text: &str) -> String {
    if !text.contains("==== START logs for") {
        return text.to_string();
    }
    let mut cleaned = String::with_capacity(text.len());
    let mut in_logs = false;
    for line in text.split_inclusive('\n') {
        let t = line.trim_start();
        if t.starts_with("==== START logs for") {
            in_logs = true;
        }
        if in_logs {
            cleaned.push_str(if line.ends_with('\n') { "\n" } else { "" });
        } else {
            cleaned.push_str(line);
        }
        if t.starts_with("==== END logs for") {
            in_logs = false;
        }
    }
    cleaned
}

fn parse_json_values(path: &Path, cleaned: &str) -> Result<Vec<Value>, SnapshotError> {
    let mut out = Vec::new();
    let mut stream = serde_json::Deserializer::from_str(cleaned).into_iter::<Value>();
    loop {
        match stream.next() {
            None => break,
            Some(Ok(v)) => out.push(v),
            Some(Err(e)) => {
                return Err(SnapshotError::Syntax {
                    path: path.to_path_buf(),
                    line: e.line(),
                    column: e.column(),
                    message: e.to_string(),
                })
            }
        }
    }
    Ok(out)
}

/// Deepest flow nesting (`[`, `{`) accepted in a YAML snapshot file. The YAML scanner's work per
/// token grows with the nesting, so 100,000 levels took 41.7 s before the parser's own limit of
/// 128 was reached; a Kubernetes object nests far less than this.
pub const MAX_YAML_DEPTH: usize = 128;

/// Where `text` nests flow collections deeper than `limit`: (1-based line, 1-based column).
/// A linear pre-scan, before the YAML parser sees the text: brackets count inside flow
/// collections and where a flow collection can start (a value, a sequence entry, a line's first
/// character); quoted scalars and comments are skipped.
fn yaml_too_deep(text: &str, limit: usize) -> Option<(usize, usize)> {
    let mut depth = 0usize;
    let mut quote: Option<u8> = None;
    for (n, line) in text.lines().enumerate() {
        let b = line.as_bytes();
        let mut value_start = quote.is_none() && depth == 0;
        let mut prev: u8 = b' ';
        let mut j = 0;
        while j < b.len() {
            let c = b[j];
            let next = b.get(j + 1).copied().unwrap_or(b' ');
            if let Some(q) = quote {
                if c == q {
                    if q == b'\'' && next == b'\'' {
                        j += 1;
                    } else {
                        quote = None;
                    }
                } else if q == b'"' && c == b'\\' {
                    j += 1;
                }
                prev = c;
                j += 1;
                continue;
            }
            if c == b' ' || c == b'\t' {
                j += 1;
                continue;
            }
            if c == b'#' && (j == 0 || b[j - 1] == b' ' || b[j - 1] == b'\t') {
                break;
            }
            if depth > 0 {
                match c {
                    b'[' | b'{' => {
                        depth += 1;
                        if depth > limit {
                            return Some((n + 1, j + 1));
                        }
                    }
                    b']' | b'}' => depth -= 1,
                    b'"' | b'\'' if matches!(prev, b' ' | b'\t' | b'[' | b'{' | b',' | b':') => quote = Some(c),
                    _ => {}
                }
            } else if value_start && (c == b'[' || c == b'{') {
                depth = 1;
                value_start = false;
            } else if value_start && (c == b'"' || c == b'\'') {
                quote = Some(c);
                value_start = false;
            } else {
                value_start = matches!(c, b'-' | b'?' | b':') && (next == b' ' || next == b'\t' || j + 1 == b.len());
            }
            prev = c;
            j += 1;
        }
    }
    None
}

fn parse_yaml(path: &Path, text: &str) -> Result<Vec<Value>, SnapshotError> {
    use serde::Deserialize;
    if let Some((line, column)) = yaml_too_deep(text, MAX_YAML_DEPTH) {
        return Err(SnapshotError::Syntax {
            path: path.to_path_buf(),
            line,
            column,
            message: format!("YAML nested more than {MAX_YAML_DEPTH} levels deep (a Kubernetes object nests far less): refused before parsing"),
        });
    }
    let mut out = Vec::new();
    for doc in serde_yaml_ng::Deserializer::from_str(text) {
        let v = Value::deserialize(doc).map_err(|e| {
            let (line, column) = e.location().map(|l| (l.line(), l.column())).unwrap_or((1, 1));
            SnapshotError::Syntax { path: path.to_path_buf(), line, column, message: e.to_string() }
        })?;
        if !v.is_null() {
            out.push(v);
        }
    }
    Ok(out)
}

fn add_document(
    snap: &mut Snapshot,
    seen: &mut std::collections::BTreeSet<ResourceKind>,
    path: &Path,
    doc: Value,
    stem_kind: Option<ResourceKind>,
) -> Result<(), SnapshotError> {
    // `kubectl version -o json` and the raw /version answer.
    if let Some(v) = doc.get("serverVersion").or_else(|| doc.get("gitVersion").map(|_| &doc)) {
        if let Some(git) = v.get("gitVersion").and_then(Value::as_str) {
            snap.state.version = Version::parse(git).ok();
            snap.state.git_version = Some(git.to_string());
        }
        return Ok(());
    }
    let kind = doc.get("kind").and_then(Value::as_str).unwrap_or("").to_string();
    if let Some(items) = doc.get("items").and_then(Value::as_array) {
        // `List` (items carry their kind) or `PodList` (items may not).
        let list_kind = kind.strip_suffix("List").filter(|k| !k.is_empty()).and_then(ResourceKind::parse).or(stem_kind);
        if items.is_empty() {
            if let Some(k) = list_kind {
                seen.insert(k);
            }
        }
        for (i, item) in items.iter().enumerate() {
            let item_kind = item.get("kind").and_then(Value::as_str).map(str::to_string);
            match item_kind {
                Some(k) => add_object(snap, seen, path, &k, item.clone(), i)?,
                None => match list_kind {
                    Some(k) => add_object(snap, seen, path, k.kind(), item.clone(), i)?,
                    None => *snap.skipped.entry(if kind.is_empty() { "unknown".into() } else { kind.clone() }).or_default() += 1,
                },
            }
        }
        return Ok(());
    }
    if kind.is_empty() {
        *snap.skipped.entry("unknown".into()).or_default() += 1;
        return Ok(());
    }
    add_object(snap, seen, path, &kind, doc, 0)
}

fn add_object(
    snap: &mut Snapshot,
    seen: &mut std::collections::BTreeSet<ResourceKind>,
    path: &Path,
    kind: &str,
    value: Value,
    index: usize,
) -> Result<(), SnapshotError> {
    if kind == "Secret" {
        *snap.skipped.entry("Secret".into()).or_default() += 1;
        return Ok(());
    }
    // Exact API kinds only here: `kind` fields are never plurals or short names.
    let Some(rk) = ResourceKind::ALL.iter().copied().find(|k| k.kind() == kind) else {
        *snap.skipped.entry(kind.to_string()).or_default() += 1;
        return Ok(());
    };
    // events.k8s.io/v1 Events have another schema than core/v1 ones.
    if rk == ResourceKind::Event && value.get("apiVersion").and_then(Value::as_str).is_some_and(|a| a != "v1") {
        *snap.skipped.entry("Event (events.k8s.io)".into()).or_default() += 1;
        return Ok(());
    }
    let name = {
        let m = value.get("metadata");
        let n = m.and_then(|m| m.get("name")).and_then(Value::as_str);
        let ns = m.and_then(|m| m.get("namespace")).and_then(Value::as_str);
        match (ns, n) {
            (Some(ns), Some(n)) => format!("{ns}/{n}"),
            (None, Some(n)) => n.to_string(),
            _ => format!("#{index}"),
        }
    };
    seen.insert(rk);
    snap.state
        .insert_json(rk, value)
        .map_err(|message| SnapshotError::Schema { path: path.to_path_buf(), kind: kind.to_string(), name, message })
}

#[cfg(test)]
mod depth_tests {
    use super::*;

    #[test]
    fn yaml_depth_prescan() {
        assert_eq!(yaml_too_deep("a: [[[1]]]\n", 3), None);
        assert_eq!(yaml_too_deep("a: [[[[1]]]]\n", 3), Some((1, 7)));
        assert_eq!(yaml_too_deep("a: {b: {c: {d: 1}}}\n", 2), Some((1, 12)));
        // Brackets in quoted scalars, comments and prose do not count.
        assert_eq!(yaml_too_deep("a: \"[[[[[\"\nb: '{{{{' # [[[[[\nc: if [ -f x ]; [[[[[ then\n", 2), None);
        assert_eq!(yaml_too_deep("a: [\"]]]]\", 'it''s [[[[', [1]]\n", 2), None);
        // JSON in a .yaml file counts as flow nesting.
        assert_eq!(yaml_too_deep("{\"a\":{\"b\":[{\"c\":\"x[\"}]}}\n", 4), None);
        assert_eq!(yaml_too_deep("{\"a\":{\"b\":[{\"c\":{}}]}}\n", 4), Some((1, 17)));
        // A sequence entry and a multi-line flow collection.
        assert_eq!(yaml_too_deep("- [\n  [\n   [1]]]\n", 2), Some((3, 4)));
    }

    /// Issue 16: snapshot YAML nested 100,000 deep took 41.7 s; now refused at once, naming the file.
    #[test]
    fn issue16_deep_yaml_snapshot_is_refused_at_once() {
        let dir = std::env::temp_dir().join(format!("kubewhy-deep-yaml-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let file = dir.join("pods.yaml");
        let n = 100_000;
        let text = format!("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels: {}{}\n", "{a: ".repeat(n), "}".repeat(n));
        std::fs::write(&file, text).expect("write");
        let started = std::time::Instant::now();
        let e = load(&file).expect_err("refused");
        let msg = e.to_string();
        assert!(msg.contains("pods.yaml:5:") && msg.contains("nested more than 128"), "{msg}");
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
