//! Signal extraction: turn pasted text into structured signals.
//!
//! Recognises message templates compiled from Symptom entities (with
//! `{placeholders}`), event reasons, status reasons, exit codes, HTTP status
//! codes, metric names and Kubernetes versions, in free text, event lines
//! (`kubectl get events`), a whole `kubectl describe` output (its Events table
//! and the container State / Last State blocks) and `kubectl get -o yaml`.

use regex::Regex;
use serde::Serialize;
use std::collections::BTreeSet;
use std::sync::OnceLock;
use crate::patterns::PatternSet;

/// Checks a symptom text template: braces balanced, placeholders named, enough literal text.
///
/// # Errors
/// A message saying what is wrong with the template.
pub fn check_template(t: &str) -> Result<(), String> {
    let mut depth = 0;
    let mut name = String::new();
    for c in t.chars() {
        match c {
            '{' if depth == 0 => {
                depth = 1;
                name.clear();
            }
            '{' => return Err("nested `{` in template".into()),
            '}' if depth == 1 => {
                if name.trim().is_empty() {
                    return Err("empty placeholder `{}` in template: name it, e.g. `{pod}`".into());
                }
                depth = 0;
            }
            '}' => return Err("`}` without an opening `{` in template".into()),
            c if depth == 1 => name.push(c),
            _ => {}
        }
    }
    if depth != 0 {
        return Err("unclosed `{` in template".into());
    }
    let lit = literal_parts(t).iter().map(|s| s.trim().len()).sum::<usize>();
    if lit < 6 {
        return Err("template has too little literal text to be recognised (at least 6 characters outside placeholders)".into());
    }
    Ok(())
}

/// The literal parts of a template (text outside `{placeholders}`), in order.
pub fn literal_parts(t: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut inside = false;
    for c in t.chars() {
        match c {
            '{' if !inside => {
                inside = true;
                parts.push(std::mem::take(&mut cur));
            }
            '}' if inside => inside = false,
            c if !inside => cur.push(c),
            _ => {}
        }
    }
    parts.push(cur);
    parts.into_iter().filter(|p| !p.trim().is_empty()).collect()
}

/// Normalises text for matching: lowercase, `\"` and typographic quotes made plain, whitespace runs to one space.
pub fn normalize(text: &str) -> String {
    plain(text, true)
}

/// The character mapping of [`normalize`], lowercasing or not.
fn plain(text: &str, lowercase: bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last_space = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let c = match c {
            '\\' if chars.peek() == Some(&'"') => continue,
            '\u{201c}' | '\u{201d}' | '\u{201e}' => '"',
            '\u{2018}' | '\u{2019}' => '\'',
            c => c,
        };
        if c.is_whitespace() {
            if !last_space {
                out.push(' ');
            }
            last_space = true;
        } else {
            last_space = false;
            if lowercase {
                out.extend(c.to_lowercase());
            } else {
                out.push(c);
            }
        }
    }
    out
}

/// [`normalize`] without the lowercasing: the same characters at the same byte offsets when
/// lowercasing keeps every character's length (ASCII and most text), so a span found in the
/// normalised text can be shown as the input spelled it. `None` when the lengths differ.
fn normalize_keep_case(text: &str, normalized: &str) -> Option<String> {
    let out = plain(text, false);
    (out.len() == normalized.len()).then_some(out)
}

/// The text a match shows people: the matched span as the input spelled it, extended to the
/// end of the word a trailing placeholder cut ("Insufficient c" becomes "Insufficient cpu"),
/// without trailing punctuation, at most 200 characters.
fn shown_text(kept: Option<&str>, normalized: &str, span: (usize, usize)) -> String {
    let src = kept.unwrap_or(normalized);
    let (start, mut end) = span;
    let bytes = src.as_bytes();
    while end < bytes.len() && !bytes[end].is_ascii_whitespace() && !matches!(bytes[end], b',' | b';' | b'"' | b'\'' | b')' | b']') {
        end += 1;
    }
    while end > start && !src.is_char_boundary(end) {
        end -= 1;
    }
    let t = src.get(start..end).unwrap_or("").trim_end_matches(['.', ':', ',', ';']).trim();
    t.chars().take(200).collect()
}

/// A symptom template compiled into a matcher over [`normalize`]d text.
#[derive(Debug, Clone)]
pub struct Template {
    /// Id of the symptom the template belongs to.
    pub symptom_id: String,
    /// The regular expression's source: literal words joined by `\s*`, placeholders `.+?`.
    pub(crate) pattern: String,
    /// The compiled expression, built on the first [`Template::find`] that needs it: an input
    /// reaches only the few templates whose required word it contains, so a one-shot `why`
    /// compiles a handful instead of about 2,000 (issue 13). `None` inside when the
    /// expression is over the regex size limit (the template then matches only partially).
    pub(crate) regex: std::sync::OnceLock<Option<Regex>>,
    /// The longest literal part, normalised (used for partial matches of truncated pastes).
    pub(crate) longest: String,
    /// Characters of literal text in the whole template.
    pub(crate) literal_len: usize,
    /// A word every match must contain (the longest word of `longest`, trailing periods off),
    /// so that [`TemplateIndex`] can skip the template when the word is absent; `None` when the
    /// template has no such word.
    pub(crate) needle: Option<String>,
    /// The words of the literal parts (trailing periods off): a full match contains each of
    /// them verbatim, so the expression is compiled and run only when all are in the input.
    pub(crate) words: Vec<String>,
}

/// The templates' required words in one automaton: one pass over an input tells which templates
/// can match at all, so only those run their regular expression (about 2,000 regexes otherwise).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateIndex {
    pub(crate) automaton: PatternSet,
    /// Automaton pattern id → indexes of the templates that require that word.
    pub(crate) owners: Vec<Vec<usize>>,
    /// Templates without a required word (always tried).
    pub(crate) always: Vec<usize>,
    /// Number of templates indexed.
    pub(crate) len: usize,
}

impl TemplateIndex {
    /// Indexes `templates` (the same templates, in the same order, must be passed to
    /// [`extract_indexed`]).
    pub fn new<'a>(templates: impl IntoIterator<Item = &'a Template>) -> TemplateIndex {
        let mut words: Vec<String> = Vec::new();
        let mut owners: Vec<Vec<usize>> = Vec::new();
        let mut slot: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        let mut always = Vec::new();
        let mut len = 0;
        for (i, t) in templates.into_iter().enumerate() {
            len = i + 1;
            match t.needle.as_deref() {
                Some(w) => {
                    let k = *slot.entry(w).or_insert_with(|| {
                        words.push(w.to_string());
                        owners.push(Vec::new());
                        words.len() - 1
                    });
                    owners[k].push(i);
                }
                None => always.push(i),
            }
        }
        TemplateIndex { automaton: PatternSet::new(&words), owners, always, len }
    }

    /// Per template (by index), whether it can match `normalized` (the output of [`normalize`]).
    pub fn candidates(&self, normalized: &str) -> Vec<bool> {
        let mut out = vec![false; self.len];
        for &i in &self.always {
            out[i] = true;
        }
        self.automaton.each_present(normalized.as_bytes(), |p| {
            for &i in &self.owners[p] {
                out[i] = true;
            }
        });
        out
    }
}

/// How a template matched.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TemplateMatch {
    /// Id of the symptom whose template matched.
    pub symptom: String,
    /// The matched text (normalised, at most 200 characters).
    pub text: String,
    /// `true` when the whole template matched, `false` when only its longest literal part did.
    pub full: bool,
    /// Share of the template's literal text that matched, in (0, 1].
    pub coverage: f64,
    /// Byte range of the match in the normalised input.
    #[serde(skip)]
    pub span: (usize, usize),
}

impl Template {
    /// Compiles a template (see [`check_template`]); `None` when it is malformed.
    pub fn compile(symptom_id: &str, template: &str) -> Option<Template> {
        check_template(template).ok()?;
        let norm = normalize(template);
        let mut pattern = String::new();
        let mut inside = false;
        let mut lit = String::new();
        let flush = |lit: &mut String, pattern: &mut String| {
            for (i, word) in lit.split(' ').enumerate() {
                if i > 0 {
                    pattern.push_str(r"\s*");
                }
                pattern.push_str(&regex::escape(word));
            }
            lit.clear();
        };
        for c in norm.chars() {
            match c {
                '{' if !inside => {
                    flush(&mut lit, &mut pattern);
                    pattern.push_str(r".+?");
                    inside = true;
                }
                '}' if inside => inside = false,
                c if !inside => lit.push(c),
                _ => {}
            }
        }
        flush(&mut lit, &mut pattern);
        // A trailing period is often cut or changed: do not require it.
        let pattern = pattern.strip_suffix(r"\.").map(str::to_string).unwrap_or(pattern);
        let parts = literal_parts(&norm);
        let longest = parts.iter().map(|p| p.trim()).max_by_key(|p| p.len()).unwrap_or("").to_string();
        let literal_len = parts.iter().map(|p| p.trim().len()).sum();
        // Every word of a literal part is in the pattern verbatim (words are joined by `\s*`),
        // except that the pattern's final period is optional: trailing periods are cut.
        let needle = longest.split(' ').map(|w| w.trim_end_matches('.')).filter(|w| !w.is_empty()).max_by_key(|w| w.len()).map(str::to_string);
        let mut words: Vec<String> = parts.iter().flat_map(|p| p.split(' ')).map(|w| w.trim_end_matches('.')).filter(|w| !w.is_empty()).map(str::to_string).collect();
        words.sort();
        words.dedup();
        Some(Template { symptom_id: symptom_id.to_string(), pattern, regex: std::sync::OnceLock::new(), longest, literal_len, needle, words })
    }

    /// Matches the template against normalised text: the whole template, or (for a
    /// truncated or partial paste) its longest literal part when that is at least 18
    /// characters long.
    ///
    /// The expression is compiled on the first call whose input holds every literal word (a
    /// template whose expression is over the regex size limit gets partial matches only).
    pub fn find(&self, normalized: &str) -> Option<TemplateMatch> {
        let full = || self.regex.get_or_init(|| Regex::new(&self.pattern).ok()).as_ref()?.find(normalized);
        if let Some(m) = self.words.iter().all(|w| normalized.contains(w.as_str())).then(full).flatten() {
            return Some(TemplateMatch {
                symptom: self.symptom_id.clone(),
                text: m.as_str().chars().take(200).collect(),
                full: true,
                coverage: 1.0,
                span: (m.start(), m.end()),
            });
        }
        // Only when the longest part is most of the template: a generic frame ("nodes are available:")
        // shared by many messages is no evidence for one of them.
        if self.longest.len() >= 18
            && self.longest.len() < self.literal_len
            && (self.longest.len() >= 30 || self.longest.len() * 10 >= self.literal_len * 6)
            && normalized.contains(&self.longest)
        {
            let start = normalized.find(&self.longest).unwrap_or(0);
            return Some(TemplateMatch {
                symptom: self.symptom_id.clone(),
                text: self.longest.chars().take(200).collect(),
                full: false,
                coverage: self.longest.len() as f64 / self.literal_len.max(1) as f64,
                span: (start, start + self.longest.len()),
            });
        }
        None
    }

    /// Characters of literal text in the template (a measure of specificity).
    pub fn literal_len(&self) -> usize {
        self.literal_len
    }
}

/// One row of an Events table or event line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EventLine {
    /// `Normal` or `Warning`, when shown.
    #[serde(rename = "type")]
    pub event_type: Option<String>,
    /// The event reason (`FailedScheduling`).
    pub reason: String,
    /// The event message.
    pub message: String,
}

/// A container's state as shown by `kubectl describe pod` or `-o yaml`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct ContainerState {
    /// `State` or `Last State`.
    pub which: String,
    /// `Waiting`, `Running` or `Terminated`.
    pub state: String,
    /// The reason (`OOMKilled`, `CrashLoopBackOff`), when shown.
    pub reason: Option<String>,
    /// The exit code, when shown.
    pub exit_code: Option<i64>,
}

/// Everything extracted from one input.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Signals {
    /// How the input looks: `question`, `error`, `events`, `describe`, `yaml` or `log`.
    pub input_style: String,
    /// Event reasons seen (from Events tables, event lines, or as known reason words).
    pub event_reasons: Vec<String>,
    /// Status reasons seen (`CrashLoopBackOff`, `OOMKilled`, `Evicted`, `Terminating`).
    pub status_reasons: Vec<String>,
    /// Container exit codes seen.
    pub exit_codes: Vec<i64>,
    /// HTTP status codes seen (409, 410, 429, ...).
    pub http_codes: Vec<u16>,
    /// Metric names seen (known to the graph).
    pub metrics: Vec<String>,
    /// Kubernetes versions mentioned ("1.30").
    pub versions: Vec<String>,
    /// Symptom templates that matched.
    pub templates: Vec<TemplateMatch>,
    /// Event rows parsed from tables or event lines.
    pub events: Vec<EventLine>,
    /// Container states parsed from describe or YAML output.
    pub containers: Vec<ContainerState>,
}

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("static regex is valid"))
}

/// Status reasons kubewhy knows even when no symptom names them (kubelet and kubectl spellings).
pub const WELL_KNOWN_STATUS_REASONS: &[&str] = &[
    "CrashLoopBackOff",
    "ImagePullBackOff",
    "ErrImagePull",
    "ErrImageNeverPull",
    "InvalidImageName",
    "OOMKilled",
    "CreateContainerConfigError",
    "CreateContainerError",
    "RunContainerError",
    "StartError",
    "ContainerCreating",
    "PodInitializing",
    "ContainerStatusUnknown",
    "Evicted",
    "Terminating",
    "Completed",
    "Unschedulable",
    "NodeLost",
    "DeadlineExceeded",
    "Init:CrashLoopBackOff",
    "Init:Error",
];

/// HTTP status for the reason kubectl prints in `Error from server (Reason)`.
fn status_reason_code(reason: &str) -> Option<u16> {
    Some(match reason {
        "BadRequest" => 400,
        "Unauthorized" => 401,
        "Forbidden" => 403,
        "NotFound" => 404,
        "MethodNotAllowed" => 405,
        "NotAcceptable" => 406,
        "AlreadyExists" | "Conflict" => 409,
        "Gone" | "Expired" => 410,
        "Invalid" | "UnprocessableEntity" => 422,
        "TooManyRequests" => 429,
        "InternalError" => 500,
        "ServiceUnavailable" => 503,
        "Timeout" | "ServerTimeout" => 504,
        _ => return None,
    })
}

/// What the extractor needs to know about the graph: the reasons and metric names it holds.
#[derive(Debug, Default, Clone)]
pub struct Vocabulary {
    /// Event reasons named by symptoms (and other known event reasons).
    pub event_reasons: BTreeSet<String>,
    /// Status reasons named by symptoms plus [`WELL_KNOWN_STATUS_REASONS`].
    pub status_reasons: BTreeSet<String>,
    /// Metric names of Metric entities.
    pub metrics: BTreeSet<String>,
    /// `metrics` in one automaton, so an input is scanned once for all of them; built on the
    /// first extraction (`metrics` is complete by then), or stored with compiled knowledge.
    pub(crate) metrics_automaton: OnceLock<PatternSet>,
}

impl Vocabulary {
    /// The metric names found in `normalized` as substrings, in name order.
    fn metrics_in(&self, normalized: &str) -> Vec<String> {
        let automaton = self.metrics_automaton();
        if automaton.len() != self.metrics.len() {
            return self.metrics.iter().filter(|m| normalized.contains(m.as_str())).cloned().collect();
        }
        let present = automaton.present(normalized.as_bytes());
        self.metrics.iter().zip(present).filter(|(_, found)| *found).map(|(m, _)| m.clone()).collect()
    }

    /// `metrics` in one automaton (pattern id = place in name order), built on first use.
    pub(crate) fn metrics_automaton(&self) -> &PatternSet {
        self.metrics_automaton.get_or_init(|| PatternSet::new(&self.metrics.iter().collect::<Vec<_>>()))
    }
}

/// Which table a line is the header of, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TableKind {
    /// `kubectl describe` events: Type Reason Age From Message.
    DescribeEvents,
    /// `kubectl get events`: LAST SEEN TYPE REASON OBJECT MESSAGE.
    GetEvents,
    /// `kubectl get pods`: NAME READY STATUS RESTARTS AGE.
    GetPods,
}

impl TableKind {
    fn of(line: &str) -> Option<TableKind> {
        let t = line.trim();
        if t.starts_with("Type") && t.contains("Reason") && t.contains("Message") {
            Some(TableKind::DescribeEvents)
        } else if t.starts_with("LAST SEEN") && t.contains("REASON") && t.contains("MESSAGE") {
            Some(TableKind::GetEvents)
        } else if t.starts_with("NAME") && t.contains("STATUS") && t.contains("READY") {
            Some(TableKind::GetPods)
        } else {
            None
        }
    }
}

/// Parses a table whose header holds the given column names, slicing rows at the header's column
/// offsets. The table ends at a blank line, at a section header and at the next table header.
/// Returns the rows and the index of the first line after the table, so that every line is read
/// by at most one table (linear in the input, issue 16).
fn parse_table(lines: &[&str], header_idx: usize, cols: &[&str]) -> (Vec<Vec<String>>, usize) {
    let header = lines[header_idx];
    let mut offsets = Vec::new();
    for c in cols {
        match header.find(c) {
            Some(o) => offsets.push(o),
            None => return (Vec::new(), header_idx + 1),
        }
    }
    let mut rows = Vec::new();
    let mut end = lines.len();
    for (j, line) in lines.iter().enumerate().skip(header_idx + 1) {
        if line.trim().is_empty() || TableKind::of(line).is_some() {
            end = j;
            break;
        }
        if line.trim_start().starts_with("----") {
            continue;
        }
        // A row must be long enough to reach the last column and not be the next section header.
        if !line.starts_with(' ') && !line.starts_with('\t') && header.starts_with(' ') {
            end = j;
            break;
        }
        let mut row = Vec::new();
        for (i, &o) in offsets.iter().enumerate() {
            let end = offsets.get(i + 1).copied().unwrap_or(line.len());
            let cell = line.get(o.min(line.len())..end.min(line.len()).max(o.min(line.len()))).unwrap_or("");
            row.push(cell.trim().to_string());
        }
        rows.push(row);
    }
    (rows, end)
}

/// Extracts the signals of `input` (any text; no size limit is applied here).
pub fn extract(input: &str, normalized: &str, vocab: &Vocabulary, templates: &(impl Templates + ?Sized)) -> Signals {
    extract_with(input, normalized, vocab, templates, None)
}

/// Message templates by number: a slice, or the matcher's table (whose templates compiled
/// knowledge decodes when they are first tried).
pub trait Templates {
    /// Number of templates.
    fn count(&self) -> usize;
    /// Template `i` (`None` past the end).
    fn template(&self, i: usize) -> Option<&Template>;
}

impl Templates for [Template] {
    fn count(&self) -> usize {
        self.len()
    }
    fn template(&self, i: usize) -> Option<&Template> {
        self.get(i)
    }
}

impl<const N: usize> Templates for [Template; N] {
    fn count(&self) -> usize {
        N
    }
    fn template(&self, i: usize) -> Option<&Template> {
        self.get(i)
    }
}

impl Templates for Vec<Template> {
    fn count(&self) -> usize {
        self.len()
    }
    fn template(&self, i: usize) -> Option<&Template> {
        self.get(i)
    }
}

impl Templates for crate::compiled::Table<Template> {
    fn count(&self) -> usize {
        self.len()
    }
    fn template(&self, i: usize) -> Option<&Template> {
        self.get(i)
    }
}

/// [`extract`] trying only the templates `index` (built from the same `templates`) says can
/// match; the result is the same as [`extract`]'s.
pub fn extract_indexed(input: &str, normalized: &str, vocab: &Vocabulary, templates: &(impl Templates + ?Sized), index: &TemplateIndex) -> Signals {
    extract_with(input, normalized, vocab, templates, Some(&index.candidates(normalized)))
}

fn extract_with(input: &str, normalized: &str, vocab: &Vocabulary, templates: &(impl Templates + ?Sized), candidates: Option<&[bool]>) -> Signals {
    static EXIT: OnceLock<Regex> = OnceLock::new();
    static EXIT_YAML: OnceLock<Regex> = OnceLock::new();
    static REASON_LINE: OnceLock<Regex> = OnceLock::new();
    static STATE_LINE: OnceLock<Regex> = OnceLock::new();
    static HTTP: OnceLock<Regex> = OnceLock::new();
    static HTTP_TEXT: OnceLock<Regex> = OnceLock::new();
    static HTTP_BARE: OnceLock<Regex> = OnceLock::new();
    static FROM_SERVER: OnceLock<Regex> = OnceLock::new();
    static VERSION: OnceLock<Regex> = OnceLock::new();
    static WORD: OnceLock<Regex> = OnceLock::new();
    static EVENT_LINE: OnceLock<Regex> = OnceLock::new();

    let mut s = Signals::default();
    let lines: Vec<&str> = input.lines().collect();
    let mut event_reasons = BTreeSet::new();
    let mut status_reasons = BTreeSet::new();
    let mut exit_codes = BTreeSet::new();
    let mut http_codes = BTreeSet::new();

    // Events tables: `kubectl describe` (Type Reason Age From Message) and `kubectl get events`.
    let mut i = 0;
    while i < lines.len() {
        let Some(kind) = TableKind::of(lines[i]) else {
            i += 1;
            continue;
        };
        let cols: &[&str] = match kind {
            TableKind::DescribeEvents => &["Type", "Reason", "Age", "From", "Message"],
            TableKind::GetEvents => &["TYPE", "REASON", "MESSAGE"],
            TableKind::GetPods => &["STATUS", "RESTARTS"],
        };
        let (rows, next) = parse_table(&lines, i, cols);
        i = next.max(i + 1);
        for row in rows {
            match kind {
                TableKind::DescribeEvents => {
                    if row.len() == 5 && !row[1].is_empty() {
                        s.events.push(EventLine { event_type: Some(row[0].clone()), reason: row[1].clone(), message: row[4].clone() });
                    }
                }
                TableKind::GetEvents => {
                    if row.len() == 3 && !row[1].is_empty() {
                        // The REASON column is followed by OBJECT in `kubectl get events`: keep the first word.
                        let reason = row[1].split_whitespace().next().unwrap_or("").to_string();
                        s.events.push(EventLine { event_type: Some(row[0].clone()), reason, message: row[2].clone() });
                    }
                }
                TableKind::GetPods => {
                    if let Some(st) = row.first() {
                        if vocab.status_reasons.contains(st.as_str()) || WELL_KNOWN_STATUS_REASONS.contains(&st.as_str()) {
                            status_reasons.insert(st.clone());
                        }
                    }
                }
            }
        }
    }
    // Event lines such as `Warning  FailedScheduling  pod/x  0/3 nodes ...` or `... Warning FailedMount ...`.
    let event_line = re(&EVENT_LINE, r"\b(Normal|Warning)\s+([A-Z][A-Za-z]+)\s+(.+)$");
    if s.events.is_empty() {
        for line in &lines {
            if let Some(c) = event_line.captures(line) {
                s.events.push(EventLine { event_type: Some(c[1].to_string()), reason: c[2].to_string(), message: c[3].trim().to_string() });
            }
        }
    }
    for e in &s.events {
        event_reasons.insert(e.reason.clone());
    }

    // Container State / Last State blocks of `kubectl describe pod`.
    let state_line = re(&STATE_LINE, r"^\s*(State|Last State):\s+(Waiting|Running|Terminated)\b");
    let reason_line = re(&REASON_LINE, r"^\s*[Rr]eason:\s+([A-Za-z][A-Za-z:]+)\s*$");
    let exit = re(&EXIT, r"(?i)\bexit(?:ed)?(?:\s+with)?\s*(?:code|status)?\s*[:=]?\s*\(?(\d{1,3})\b");
    let exit_yaml = re(&EXIT_YAML, r"^\s*exitCode:\s*(\d{1,3})\s*$");
    let mut current: Option<ContainerState> = None;
    for line in &lines {
        if let Some(c) = state_line.captures(line) {
            if let Some(cs) = current.take() {
                s.containers.push(cs);
            }
            current = Some(ContainerState { which: c[1].to_string(), state: c[2].to_string(), ..Default::default() });
            continue;
        }
        if let Some(c) = reason_line.captures(line) {
            let r = c[1].to_string();
            if let Some(cs) = current.as_mut() {
                cs.reason.get_or_insert(r.clone());
            }
            status_reasons.insert(r);
            continue;
        }
        if let Some(c) = exit_yaml.captures(line) {
            if let Ok(n) = c[1].parse::<i64>() {
                exit_codes.insert(n);
            }
        }
        if let Some(c) = exit.captures(line) {
            if let Ok(n) = c[1].parse::<i64>() {
                if n <= 255 {
                    exit_codes.insert(n);
                    if let Some(cs) = current.as_mut() {
                        cs.exit_code.get_or_insert(n);
                    }
                }
            }
        }
        let t = line.trim();
        if current.is_some() && (t.starts_with("Ready:") || t.starts_with("Restart Count:") || t.is_empty()) {
            if let Some(cs) = current.take() {
                s.containers.push(cs);
            }
        }
    }
    if let Some(cs) = current.take() {
        s.containers.push(cs);
    }

    // Known reason words anywhere (whole words, case-sensitive as Kubernetes spells them).
    let word = re(&WORD, r"[A-Za-z][A-Za-z:]*[A-Za-z]");
    let mut seen_words = BTreeSet::new();
    for m in word.find_iter(input) {
        if seen_words.len() > 50_000 {
            break;
        }
        seen_words.insert(m.as_str());
    }
    for w in &seen_words {
        if vocab.status_reasons.contains(*w) || WELL_KNOWN_STATUS_REASONS.contains(w) {
            status_reasons.insert((*w).to_string());
        } else if vocab.event_reasons.contains(*w) && w.chars().skip(1).any(|c| c.is_ascii_uppercase()) {
            // Only CamelCase reasons count as free-text mentions: plain words ("Failed") are too common.
            event_reasons.insert((*w).to_string());
        }
    }

    // HTTP status codes.
    let http = re(&HTTP, r"(?i)(?:\bhttp/\d(?:\.\d)?\s+|\bstatus(?:\s*code)?\s*[:=]?\s*|\bcode\s*[:=]\s*|\bhttp\s+|\bstatuscode:\s*)([1-5]\d\d)\b");
    let http_text = re(&HTTP_TEXT, r"(?i)\b([45]\d\d)\s+(?:too many requests|conflict|gone|forbidden|unauthorized|service unavailable|internal server error|unprocessable entity|not found|bad request|gateway timeout)\b");
    let from_server = re(&FROM_SERVER, r"Error from server \(([A-Za-z]+)\)");
    for c in http.captures_iter(input).take(1000) {
        // "statuscode: 404" is an HTTP probe's result, not an API status: it is matched by templates instead.
        if c[0].to_ascii_lowercase().contains("statuscode") {
            continue;
        }
        // "Exit Code: 137" and "exit status 1" are a process's exit, not an HTTP status.
        let at = c.get(0).map(|m| m.start()).unwrap_or(0);
        let mut from = at.saturating_sub(6);
        while !input.is_char_boundary(from) {
            from -= 1;
        }
        if input[from..at].to_ascii_lowercase().trim_end().ends_with("exit") {
            continue;
        }
        if let Ok(n) = c[1].parse() {
            http_codes.insert(n);
        }
    }
    for c in http_text.captures_iter(input).take(1000) {
        if let Ok(n) = c[1].parse() {
            http_codes.insert(n);
        }
    }
    for c in from_server.captures_iter(input).take(1000) {
        if let Some(n) = status_reason_code(&c[1]) {
            http_codes.insert(n);
        }
    }
    if input.len() < 600 {
        let bare = re(&HTTP_BARE, r"(?:^|[\s(])(401|403|409|410|422|429|500|502|503|504)s?(?:$|[\s),.:;!?])");
        for c in bare.captures_iter(input) {
            if let Ok(n) = c[1].parse() {
                http_codes.insert(n);
            }
        }
    }

    // Versions: "v1.30.2", "Kubernetes 1.30", "k8s 1.22", "Server Version: v1.29.1".
    let version = re(&VERSION, r"(?i)(?:\bv|kubernetes\s+v?|k8s\s+v?|version:?\s+v?|gitversion:\s*\x22?v)1\.(\d{1,2})(?:\.\d+)?\b");
    let mut versions = BTreeSet::new();
    for c in version.captures_iter(input).take(100) {
        let whole = c.get(0).expect("group 0 always exists");
        // A bare "v1.N" is Kubernetes only when no other product names it ("containerd v1.7.3",
        // "Gateway API v1.5", "cert-manager v1.14") and the minor is one Kubernetes reports
        // name (1.10 and later); "Kubernetes 1.9" and "Server Version: v1.9" still count.
        let bare = whole.as_str().get(..2).is_some_and(|v| v.eq_ignore_ascii_case("v1"));
        if let Ok(minor) = c[1].parse::<u16>() {
            if bare && (minor < 10 || names_other_product(&input[..whole.start()])) {
                continue;
            }
            if (1..=60).contains(&minor) {
                versions.insert(minor);
            }
        }
    }
    s.versions = versions.into_iter().map(|m| format!("1.{m}")).collect();

    // Metric names known to the graph.
    s.metrics = vocab.metrics_in(normalized);

    // Templates.
    s.templates = (0..templates.count())
        .filter(|i| candidates.is_none_or(|c| c.get(*i).copied().unwrap_or(true)))
        .filter_map(|i| templates.template(i)?.find(normalized))
        .collect();
    if !s.templates.is_empty() {
        let kept = normalize_keep_case(input, normalized);
        for m in &mut s.templates {
            m.text = shown_text(kept.as_deref(), normalized, m.span);
        }
    }

    s.event_reasons = event_reasons.into_iter().collect();
    s.status_reasons = status_reasons.into_iter().collect();
    s.exit_codes = exit_codes.into_iter().collect();
    s.http_codes = http_codes.into_iter().collect();
    s.input_style = classify(input, &s);
    s
}

/// Classifies the input's style.
fn classify(input: &str, s: &Signals) -> String {
    let style = if input.contains("Events:") && (input.contains("Containers:") || input.contains("Conditions:") || input.contains("Namespace:")) {
        "describe"
    } else if input.contains("apiVersion:") && input.contains("kind:") {
        "yaml"
    } else if !s.events.is_empty() {
        "events"
    } else if input.lines().count() > 3 {
        "log"
    } else if input.trim_end().ends_with('?')
        || input.split_whitespace().next().is_some_and(|w| {
            ["why", "how", "what", "my", "our", "pods", "pod", "i", "after", "when", "is", "can"].contains(&w.to_ascii_lowercase().as_str())
        })
    {
        "question"
    } else {
        "error"
    };
    style.to_string()
}

/// Products whose own versions look like Kubernetes' ("v1.7.3"): when one of them is the word
/// just before a bare `v1.N`, the version is that product's, not the cluster's.
const OTHER_PRODUCTS: &[&str] = &[
    "containerd", "runc", "crun", "cri-o", "crio", "docker", "moby", "helm", "calico", "cilium", "flannel", "weave", "coredns",
    "etcd", "istio", "linkerd", "envoy", "api", "gateway", "cert-manager", "ingress-nginx", "nginx", "argo", "argocd", "flux",
    "karpenter", "kustomize", "terraform", "go", "golang", "csi", "driver", "chart", "operator", "plugin", "controller", "provider",
    "metallb", "longhorn", "rook", "ceph", "velero", "prometheus", "grafana", "keda", "knative", "tekton", "traefik", "kong",
    "vault", "consul", "multus", "antrea", "kube-router", "kube-vip", "metrics-server", "cluster-autoscaler", "autoscaler",
    "aws-load-balancer-controller", "external-dns", "node-local-dns", "nodelocaldns", "kyverno", "gatekeeper", "opa", "openssl",
    "cni", "vpc-cni", "amazon-k8s-cni", "aws-node", "kuik", "kube-image-keeper",
];

/// Whether the word just before a version (on the same line, ignoring `:`, `=`, `@` and spaces)
/// is one of [`OTHER_PRODUCTS`] (or a `name/image` path ending in one).
fn names_other_product(before: &str) -> bool {
    let line = before.rsplit('\n').next().unwrap_or(before);
    let trimmed = line.trim_end_matches(|c: char| c.is_whitespace() || matches!(c, ':' | '=' | '@' | '(' | '"' | '\''));
    let word = trimmed.rsplit(|c: char| c.is_whitespace() || c == '/' || c == '(').next().unwrap_or("").to_ascii_lowercase();
    OTHER_PRODUCTS.contains(&word.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tpl(t: &str) -> Template {
        Template::compile("symptom/x", t).expect("compiles")
    }

    /// The index tries a template only when its required word is in the input; the word must
    /// survive what a full match does not require (the final period) and what a partial match
    /// accepts (only the longest literal part), or the index would drop real matches.
    #[test]
    fn template_index_keeps_every_match_extract_finds() {
        let templates = vec![
            tpl("Pod sandbox changed, it will be killed and re-created."),
            tpl("failed to garbage collect required amount of images. Wanted to free {n} bytes"),
            tpl("Insufficient {resource}"),
        ];
        let index = TemplateIndex::new(&templates);
        for input in [
            "Normal  SandboxChanged  Pod sandbox changed, it will be killed and re-created",
            "Pod sandbox changed, it will be killed and re-created.",
            "failed to garbage collect required amount of images. Wanted to free 1000",
            "0/3 nodes are available: 3 Insufficient cpu.",
            "nothing to see here",
        ] {
            let n = normalize(input);
            let plain = extract(input, &n, &Vocabulary::default(), &templates);
            let indexed = extract_indexed(input, &n, &Vocabulary::default(), &templates, &index);
            assert_eq!(indexed.templates, plain.templates, "input {input:?}");
        }
        let n = normalize("Pod sandbox changed, it will be killed and re-created");
        assert!(index.candidates(&n)[0], "the template without its final period is still tried");
        assert!(!index.candidates(&normalize("nothing to see here"))[0]);
    }

    /// The expression is compiled only for an input holding every literal word of the
    /// template (a full match needs each verbatim); the partial match of a truncated paste
    /// does not need it.
    #[test]
    fn template_expression_is_compiled_only_when_every_word_is_present() {
        let t = tpl("failed to garbage collect required amount of images. Wanted to free {n} bytes");
        assert!(t.find(&normalize("failed to garbage collect required amount of images. Wanted to free")).is_some_and(|m| !m.full));
        assert!(t.regex.get().is_none(), "\"bytes\" is missing: no full match is possible and nothing is compiled");
        let m = t.find(&normalize("Warning  ImageGCFailed  failed to garbage collect required amount of images. Wanted to free 1024 bytes, but freed 0 bytes"));
        assert!(m.is_some_and(|m| m.full));
        assert!(t.regex.get().is_some_and(Option::is_some));
        // A trailing period is optional in a full match, so it is no required word.
        let p = tpl("Pod sandbox changed, it will be killed and re-created.");
        assert!(p.words.iter().all(|w| !w.ends_with('.')), "{:?}", p.words);
        assert!(p.find(&normalize("Pod sandbox changed, it will be killed and re-created")).is_some_and(|m| m.full));
    }

    #[test]
    fn template_matches_with_placeholders_and_case() {
        let t = tpl("0/{n} nodes are available: {reasons}");
        assert!(t.find(&normalize("0/3 nodes are available: 3 Insufficient cpu.")).is_some());
        let t = tpl("Insufficient {resource}");
        assert!(t.find(&normalize("0/3 nodes are available: 3 Insufficient cpu.")).is_some());
        assert!(t.find(&normalize("insufficient")).is_none());
    }

    /// Issue 15 (8): the evidence showed "insufficient c", a lowercased template cut inside a word.
    #[test]
    fn matched_text_is_the_input_spelling_cut_at_a_word_end() {
        let input = "0/3 nodes are available: 3 Insufficient cpu.";
        let s = extract(input, &normalize(input), &Vocabulary::default(), &[tpl("Insufficient {resource}")]);
        assert_eq!(s.templates.len(), 1);
        assert_eq!(s.templates[0].text, "Insufficient cpu");
        let input = "Warning  FailedMount  Unable to attach or mount volumes: unmounted volumes=[data";
        let t = tpl("Unable to attach or mount volumes: unmounted volumes=[{v}], unattached volumes=[{u}]: timed out waiting for the condition");
        let s = extract(input, &normalize(input), &Vocabulary::default(), &[t]);
        assert_eq!(s.templates[0].text, "Unable to attach or mount volumes: unmounted volumes=[data");
    }

    #[test]
    fn template_rejects_bad_braces() {
        assert!(check_template("a {b").is_err());
        assert!(check_template("a } b").is_err());
        assert!(check_template("{} nodes are available").is_err());
        assert!(check_template("{x}").is_err());
        assert!(check_template("failed calling webhook \"{name}\": {error}").is_ok());
    }

    #[test]
    fn partial_match_of_truncated_message() {
        let t = tpl("Unable to attach or mount volumes: unmounted volumes=[{v}], unattached volumes=[{u}]: timed out waiting for the condition");
        let m = t.find(&normalize("Warning FailedMount Unable to attach or mount volumes: unmounted volumes=[data")).expect("partial");
        assert!(!m.full);
    }

    #[test]
    fn describe_pod_states_and_events() {
        let input = "Name: web\nNamespace: default\nContainers:\n  app:\n    State:          Waiting\n      Reason:       CrashLoopBackOff\n    Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137\n    Ready:          False\nEvents:\n  Type     Reason   Age                From     Message\n  ----     ------   ----               ----     -------\n  Warning  BackOff  3m (x5 over 10m)   kubelet  Back-off restarting failed container\n";
        let s = extract(input, &normalize(input), &Vocabulary::default(), &[]);
        assert_eq!(s.input_style, "describe");
        assert_eq!(s.exit_codes, vec![137]);
        assert!(s.status_reasons.contains(&"OOMKilled".to_string()));
        assert!(s.status_reasons.contains(&"CrashLoopBackOff".to_string()));
        assert_eq!(s.events.len(), 1);
        assert_eq!(s.events[0].reason, "BackOff");
        assert_eq!(s.events[0].message, "Back-off restarting failed container");
        assert_eq!(s.containers.len(), 2);
        assert_eq!(s.containers[1].reason.as_deref(), Some("OOMKilled"));
        assert_eq!(s.containers[1].exit_code, Some(137));
    }

    #[test]
    fn http_codes_and_versions() {
        let input = "Error from server (Conflict): Operation cannot be fulfilled; cluster is Kubernetes v1.30.2, got 429 Too Many Requests";
        let s = extract(input, &normalize(input), &Vocabulary::default(), &[]);
        assert_eq!(s.http_codes, vec![409, 429]);
        assert_eq!(s.versions, vec!["1.30".to_string()]);
        let s = extract("0/500 nodes are available", "0/500 nodes are available", &Vocabulary::default(), &[]);
        assert!(s.http_codes.is_empty());
    }

    /// Another product's version is not the cluster's: "Gateway API v1.5" once filtered out
    /// every cause with `since` >= 1.6.
    #[test]
    fn other_products_versions_are_not_kubernetes() {
        for input in [
            "HTTPRoute not accepted with Gateway API v1.5 CRDs",
            "nodes run containerd v1.7.3 and pods fail",
            "installed cert-manager v1.14.2 via helm",
            "image: registry.k8s.io/ingress-nginx/controller:v1.10.1",
            "we pinned calico v1.2",
            "image: 602401143452.dkr.ecr.us-west-2.amazonaws.com/amazon-k8s-cni:v1.12.6",
        ] {
            let s = extract(input, &normalize(input), &Vocabulary::default(), &[]);
            assert!(s.versions.is_empty(), "{input:?} gave {:?}", s.versions);
        }
        for (input, want) in [
            ("cluster upgraded to v1.29 last week", "1.29"),
            ("Server Version: v1.9.11", "1.9"),
            ("Kubernetes 1.8 cluster", "1.8"),
            ("node-1   Ready    <none>   3d   v1.30.4", "1.30"),
            ("containerd v1.7.3 on a Kubernetes v1.28 cluster", "1.28"),
        ] {
            let s = extract(input, &normalize(input), &Vocabulary::default(), &[]);
            assert_eq!(s.versions, vec![want.to_string()], "{input:?}");
        }
    }

    /// Issue 16: n header lines must not give n²/2 events (each header used to start a table that
    /// ran over every later header).
    #[test]
    fn repeated_table_headers_are_linear() {
        let header = "  Type     Reason   Age   From     Message\n";
        let input = header.repeat(2_000);
        let s = extract(&input, &normalize(&input), &Vocabulary::default(), &[]);
        assert!(s.events.len() < 2_000, "{} events from 2000 header lines", s.events.len());
        // Two real tables one after the other still give both rows.
        let two = "  Type     Reason   Age   From     Message\n  Warning  BackOff  3m    kubelet  back-off\n  Type     Reason   Age   From     Message\n  Warning  Failed   1m    kubelet  failed\n";
        let s = extract(two, &normalize(two), &Vocabulary::default(), &[]);
        let reasons: Vec<&str> = s.events.iter().map(|e| e.reason.as_str()).collect();
        assert_eq!(reasons, vec!["BackOff", "Failed"]);
    }
}
