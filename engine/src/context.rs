//! What an input says besides its machine-produced messages: the settings and fields it states,
//! the durations, ports and exit codes it names, the platform, the words it uses (for phrase
//! cues), and the names of the objects it is about (for check commands).
//!
//! [`InputContext::new`] reads an input once; the scorers in [`crate::scorers`] ask it questions
//! (`setting`, `duration_near`, `phrase`, ...). Everything is linear in the input's length.

use crate::model::PLATFORMS;
use regex::Regex;
use rustc_hash::FxHashMap as HashMap;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

/// Largest number of words read from one input for phrase and setting matching.
const MAX_WORDS: usize = 50_000;

/// Words that turn a phrase around ("the secret does not exist").
const NEGATIONS: &[&str] = &["not", "no", "never", "none", "without", "miss", "missing", "cannot", "nor", "neither", "absent"];

/// Words left out of phrase matching (short function words); negations are kept apart.
const STOP: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "for", "if", "in", "into", "is", "it", "its", "of", "on",
    "or", "such", "that", "the", "their", "then", "there", "these", "they", "this", "to", "was", "were", "will", "with",
    "we", "our", "i", "my", "me", "you", "your", "has", "have", "had", "do", "does", "did", "so", "from", "after",
    "before", "when", "which", "who", "what", "all", "any", "some", "also", "just", "still", "only", "same", "very",
    "can", "could", "would", "should", "may", "might", "s", "t",
];

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("static regex is valid"))
}

/// A light stem: lowercase, trailing plural and verb endings off, so "exists", "existed" and
/// "existing" meet "exist". Not a linguistic stemmer; both sides go through the same function.
pub fn stem(word: &str) -> String {
    let w = word.to_ascii_lowercase();
    for suffix in ["ing", "ed", "es", "s"] {
        if w.len() > suffix.len() + 3 && w.ends_with(suffix) {
            let base = &w[..w.len() - suffix.len()];
            return base.to_string();
        }
    }
    w
}

/// The content words of a phrase, stemmed, stop words out (negations kept: "no network plugin"
/// keeps "no").
pub fn phrase_words(text: &str) -> Vec<String> {
    let expanded = text.to_ascii_lowercase().replace("n't", " not");
    expanded
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty() && !STOP.contains(w))
        .map(stem)
        .collect()
}

/// The content words of a phrase split by [`phrase_words`]: those that are not negations.
/// [`InputContext::phrase_of_words`] finds a phrase only where every one of them is among the
/// input's stems, and never a phrase without one.
pub(crate) fn content_words(words: &[String]) -> impl Iterator<Item = &str> {
    words.iter().map(String::as_str).filter(|w| !NEGATIONS.contains(w))
}

/// A field, flag or key in its canonical spelling: lowercase, without `-`, `_` and a leading
/// `--` (`--image-pull-policy` and `imagePullPolicy` → `imagepullpolicy`).
pub fn canonical_field(field: &str) -> String {
    let f = field.trim().trim_start_matches('-');
    f.chars().filter(|c| *c != '-' && *c != '_').flat_map(char::to_lowercase).collect()
}

/// The spellings a setting cue's field is looked up by: the whole field, and for a dotted path
/// (`securityContext.readOnlyRootFilesystem`) also its last segment when that is specific
/// enough (ten characters or more: `readOnlyRootFilesystem` yes, `available` of
/// `nodefs.available` no).
pub(crate) fn field_spellings(field: &str) -> Vec<String> {
    let mut out = vec![canonical_field(field)];
    let f = field.trim().trim_start_matches('-');
    if f.contains('.') && !f.contains('/') {
        if let Some(last) = f.rsplit('.').next().filter(|l| l.len() >= 10) {
            out.push(canonical_field(last));
        }
    }
    out
}

/// A value in its canonical spelling: lowercase, quotes off.
pub fn canonical_value(value: &str) -> String {
    value.trim().trim_matches(|c| c == '"' || c == '\'').to_ascii_lowercase()
}

/// Names of the objects an input is about, for filling the placeholders of check commands.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Names {
    /// Pod name (`POD`).
    pub pod: Option<String>,
    /// Namespace (`NS`).
    pub namespace: Option<String>,
    /// Node name (`NODE`).
    pub node: Option<String>,
    /// PersistentVolumeClaim name (`PVC`).
    pub pvc: Option<String>,
    /// Container name (`CONTAINER`).
    pub container: Option<String>,
    /// Service name (`SVC`).
    pub service: Option<String>,
}

impl Names {
    /// True when no name was found.
    pub fn is_empty(&self) -> bool {
        *self == Names::default()
    }

    /// `command` with its placeholders (`POD`, `NS`, `NODE`, `PVC`, `CONTAINER`, `SVC`, as whole
    /// words) replaced by the names found; placeholders without a name stay as they are.
    pub fn fill(&self, command: &str) -> String {
        let pairs: [(&str, &Option<String>); 6] = [
            ("POD", &self.pod),
            ("NS", &self.namespace),
            ("NODE", &self.node),
            ("PVC", &self.pvc),
            ("CONTAINER", &self.container),
            ("SVC", &self.service),
        ];
        if pairs.iter().all(|(_, v)| v.is_none()) {
            return command.to_string();
        }
        let mut out = String::with_capacity(command.len());
        let mut word = String::new();
        let flush = |word: &mut String, out: &mut String| {
            let rep = pairs.iter().find(|(k, v)| *k == word.as_str() && v.is_some()).and_then(|(_, v)| v.as_deref());
            out.push_str(rep.unwrap_or(word));
            word.clear();
        };
        for c in command.chars() {
            if c.is_ascii_alphanumeric() || c == '_' {
                word.push(c);
            } else {
                flush(&mut word, &mut out);
                out.push(c);
            }
        }
        flush(&mut word, &mut out);
        out
    }
}

/// One word of the input with where it is.
#[derive(Debug, Clone)]
struct Word {
    /// Canonical spelling (see [`canonical_field`]) for setting lookups.
    canon: String,
    /// Stem for phrase lookups.
    stem: String,
    /// Whether `:` or `=` follows it before the next word (a `key: value` form).
    keyed: bool,
}

/// What one input says, read once.
#[derive(Debug, Clone, Default)]
pub struct InputContext {
    words: Vec<Word>,
    /// stem → positions.
    stems: HashMap<String, Vec<usize>>,
    /// canonical spelling → positions.
    canon: HashMap<String, Vec<usize>>,
    /// Durations named, in seconds.
    pub durations: Vec<u64>,
    /// Ports named.
    pub ports: BTreeSet<i64>,
    /// Exit codes named in prose or output.
    pub exit_codes: BTreeSet<i64>,
    /// Platform slugs named.
    pub platforms: BTreeSet<&'static str>,
    /// Object names found.
    pub names: Names,
}

static WORD_RE: OnceLock<Regex> = OnceLock::new();
static DURATION_RE: OnceLock<Regex> = OnceLock::new();
static EVERY_RE: OnceLock<Regex> = OnceLock::new();
static COMPOUND_RE: OnceLock<Regex> = OnceLock::new();
static PORT_RE: OnceLock<Regex> = OnceLock::new();
static HOSTPORT_RE: OnceLock<Regex> = OnceLock::new();
static EXIT_RE: OnceLock<Regex> = OnceLock::new();
static NAME_RES: OnceLock<Vec<(usize, Regex)>> = OnceLock::new();

fn unit_seconds(unit: &str) -> Option<f64> {
    let u = unit.to_ascii_lowercase();
    Some(match u.as_str() {
        "ms" | "millisecond" | "milliseconds" => 0.001,
        "s" | "sec" | "secs" | "second" | "seconds" => 1.0,
        "m" | "min" | "mins" | "minute" | "minutes" => 60.0,
        "h" | "hr" | "hrs" | "hour" | "hours" => 3600.0,
        "d" | "day" | "days" => 86_400.0,
        _ => return None,
    })
}

fn number_word(w: &str) -> Option<f64> {
    Some(match w {
        "one" | "a" | "an" | "every" | "each" | "per" => 1.0,
        "two" => 2.0,
        "three" => 3.0,
        "four" => 4.0,
        "five" => 5.0,
        "six" => 6.0,
        "ten" => 10.0,
        "fifteen" => 15.0,
        "twenty" => 20.0,
        "thirty" => 30.0,
        "sixty" => 60.0,
        "ninety" => 90.0,
        _ => return None,
    })
}

impl InputContext {
    /// Reads `input` (linear in its length; at most [`MAX_WORDS`] words are kept for phrase and
    /// setting matching).
    pub fn new(input: &str) -> InputContext {
        let mut cx = InputContext::default();
        let lower = input.to_ascii_lowercase().replace("n't", " not");
        // Words for settings and phrases. A word may hold `.`, `-`, `_` and `/` inside
        // (`image-pull-policy`, `node.kubernetes.io/not-ready`), never at its ends.
        let word_re = re(&WORD_RE, r"[A-Za-z0-9][A-Za-z0-9_.\-/]*[A-Za-z0-9]|[A-Za-z0-9]");
        let ms: Vec<regex::Match<'_>> = word_re.find_iter(&lower).take(MAX_WORDS).collect();
        for (i, m) in ms.iter().enumerate() {
            let next_start = ms.get(i + 1).map(|n| n.start()).unwrap_or(lower.len());
            let between = &lower[m.end()..next_start];
            let keyed = between.contains(':') || between.contains('=');
            let w = m.as_str();
            cx.words.push(Word { canon: canonical_field(w), stem: stem(w), keyed });
        }
        for (i, (w, m)) in cx.words.iter().zip(&ms).enumerate() {
            cx.canon.entry(w.canon.clone()).or_default().push(i);
            if !STOP.contains(&w.stem.as_str()) {
                cx.stems.entry(w.stem.clone()).or_default().push(i);
            }
            // Words joined by punctuation ("read-only", "pod/web-0") also count by their parts for
            // phrases, each part stemmed on its own ("node-local-dns" gives "dns", not the "dn"
            // of the whole word's stem). Positions stay in order: every push is at `i`.
            let raw = m.as_str();
            if raw.contains(['-', '/', '.', '_']) {
                for part in raw.split(['-', '/', '.', '_']).filter(|p| !p.is_empty()) {
                    let ps = cx.stems.entry(stem(part)).or_default();
                    if ps.last() != Some(&i) {
                        ps.push(i);
                    }
                }
            }
        }
        // Durations: "90s", "10 minutes", "2m30s", "every 10 minutes", "an hour".
        // A number that is part of a name ("us-east-1d", "v1.30s") is no duration.
        let dur = re(&DURATION_RE, r"(?i)(?:^|[^\w.\-/])(\d+(?:\.\d+)?)\s?(milliseconds?|ms|seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d)\b");
        let mut last_end: Option<(usize, f64)> = None;
        // Durations in table rows (the Age column of `kubectl get`, the Events table of
        // `kubectl describe`) say how old an object is, not how a mechanism is timed.
        let tabular: Vec<(usize, usize)> = line_spans(&lower).filter(|&(a, b)| is_table_row(&lower[a..b])).collect();
        for c in dur.captures_iter(&lower).take(1000) {
            let (Some(whole), Ok(n)) = (c.get(1).zip(c.get(0)).map(|(num, all)| (num.start(), all.end())), c[1].parse::<f64>()) else { continue };
            if tabular.iter().any(|&(a, b)| whole.0 >= a && whole.1 <= b) {
                continue;
            }
            let Some(unit) = unit_seconds(&c[2]) else { continue };
            let secs = n * unit;
            // "2m30s": parts written back to back add up.
            match last_end {
                Some((end, acc)) if end == whole.0 => {
                    if let Some(last) = cx.durations.last_mut() {
                        *last = (acc + secs).round() as u64;
                    }
                    last_end = Some((whole.1, acc + secs));
                }
                _ => {
                    cx.durations.push(secs.round() as u64);
                    last_end = Some((whole.1, secs));
                }
            }
        }
        // Go-style compound durations: "2m30s", "1h30m", "1h0m0s".
        let compound = re(&COMPOUND_RE, r"(?i)(?:^|[^\w.\-/])(?:(\d+)h)?(?:(\d+)m(?:in)?)?(?:(\d+)s)?\b");
        for c in compound.captures_iter(&lower).take(1000) {
            let parts = [(1, 3600u64), (2, 60), (3, 1)];
            let present = parts.iter().filter(|(g, _)| c.get(*g).is_some()).count();
            if present < 2 {
                continue;
            }
            let secs: u64 = parts.iter().filter_map(|(g, mul)| c.get(*g).and_then(|m| m.as_str().parse::<u64>().ok()).map(|n| n * mul)).sum();
            cx.durations.push(secs);
        }
        let every = re(&EVERY_RE, r"(?i)\b(one|a|an|every|each|per|two|three|four|five|six|ten|fifteen|twenty|thirty|sixty|ninety)\s+(seconds?|minutes?|hours?|days?)\b");
        for c in every.captures_iter(&lower).take(1000) {
            if let (Some(n), Some(u)) = (number_word(&c[1]), unit_seconds(&c[2])) {
                cx.durations.push((n * u).round() as u64);
            }
        }
        // Ports: "port 6443", "containerPort: 8080", "10.0.0.5:10250", "localhost:8080".
        let port = re(&PORT_RE, r"(?i)\b(?:port|ports|containerport|targetport|hostport|nodeport)\b\s*[:=]?\s*(\d{2,5})\b");
        for c in port.captures_iter(&lower).take(1000) {
            if let Ok(p) = c[1].parse::<i64>() {
                if (1..=65535).contains(&p) {
                    cx.ports.insert(p);
                }
            }
        }
        let hostport = re(&HOSTPORT_RE, r"(?:\d\.\d+|[a-z\]]):([1-9]\d{1,4})(?:[^\d:]|$)");
        for c in hostport.captures_iter(&lower).take(1000) {
            if let Ok(p) = c[1].parse::<i64>() {
                if (1..=65535).contains(&p) {
                    cx.ports.insert(p);
                }
            }
        }
        // Exit codes in prose or output: "exit code 0", "Exit Code: 137", "exited with 1", "exit status 2".
        let exit = re(&EXIT_RE, r"(?i)\bexit(?:ed)?(?:\s*(?:code|status|with(?:\s+code)?))?\s*[:=]?\s*(\d{1,3})\b");
        for c in exit.captures_iter(&lower).take(1000) {
            if let Ok(n) = c[1].parse::<i64>() {
                if n <= 255 {
                    cx.exit_codes.insert(n);
                }
            }
        }
        // Platforms by their usual names, as whole words.
        for (slug, names) in PLATFORMS {
            if names.iter().any(|n| contains_words(&lower, n)) {
                cx.platforms.insert(slug);
            }
        }
        cx.names = find_names(input);
        cx
    }

    /// Whether the input states `field` (any spelling), and with what: `Some(true)` when it
    /// names it with `value` within the next three words (or without `value` at all),
    /// `Some(false)` when it gives it another value in a `key: value` / `key=value` form, `None`
    /// when it does not name it.
    pub fn setting(&self, field: &str, value: Option<&str>) -> Option<bool> {
        self.setting_spelled(&field_spellings(field), value)
    }

    /// [`InputContext::setting`] for a field already turned into its spellings (the matcher
    /// keeps those of every setting cue, so they are not recomputed per input).
    /// The stems of the input's words, each once (a phrase is in the input only if all its
    /// [`content_words`] are among them).
    pub(crate) fn stem_keys(&self) -> impl Iterator<Item = &str> + '_ {
        self.stems.keys().map(String::as_str)
    }

    /// The canonical spellings of the input's words, each once (a setting is in the input
    /// only if one of its field's spellings is one of them).
    pub(crate) fn canon_keys(&self) -> impl Iterator<Item = &str> + '_ {
        self.canon.keys().map(String::as_str)
    }

    pub(crate) fn setting_spelled(&self, spellings: &[String], value: Option<&str>) -> Option<bool> {
        if !spellings.iter().any(|f| self.canon.contains_key(f)) {
            return None;
        }
        let positions: Vec<usize> = spellings.iter().filter_map(|f| self.canon.get(f)).flatten().copied().collect();
        if positions.is_empty() {
            return None;
        }
        let Some(value) = value else { return Some(true) };
        let want = canonical_value(value);
        let want_canon = canonical_field(value);
        let mut contradicted = false;
        for p in positions {
            let next: Vec<&Word> = self.words.iter().skip(p + 1).take(3).collect();
            if next.iter().any(|w| w.canon == want_canon || w.stem == want) {
                return Some(true);
            }
            if self.words[p].keyed && next.first().is_some_and(|w| !w.canon.is_empty()) {
                contradicted = true;
            }
        }
        if contradicted {
            Some(false)
        } else {
            None
        }
    }

    /// Whether all content words of `text` occur close together (within a window that grows
    /// with the phrase), and whether that occurrence is negated (a negation word right before
    /// or inside it that the phrase itself does not have). `None` when the words are not there.
    pub fn phrase(&self, text: &str) -> Option<PhraseMatch> {
        self.phrase_of_words(&phrase_words(text))
    }

    /// [`InputContext::phrase`] for a phrase already split by [`phrase_words`] (the matcher keeps
    /// the words of every context cue, so they are not recomputed per input).
    pub fn phrase_of_words(&self, words: &[String]) -> Option<PhraseMatch> {
        let is_content = |w: &&String| !NEGATIONS.contains(&w.as_str());
        // Most phrases are not in an input: their first word tells, before anything is collected.
        let starts = self.stems.get(content_words(words).next()?)?;
        let content: Vec<&String> = words.iter().filter(is_content).collect();
        let window = 2 * content.len() + 3;
        for &p in starts.iter().take(500) {
            let mut lo = p;
            let mut hi = p;
            let all = content[1..].iter().all(|w| {
                self.stems.get(w.as_str()).and_then(|ps| nearest_within(ps, p, window)).is_some_and(|q| {
                    lo = lo.min(q);
                    hi = hi.max(q);
                    true
                })
            });
            if !all {
                continue;
            }
            let own_neg: BTreeSet<&str> = words.iter().map(String::as_str).filter(|w| NEGATIONS.contains(w)).collect();
            let from = lo.saturating_sub(3);
            let negated_here = self.words[from..=hi.min(self.words.len().saturating_sub(1))]
                .iter()
                .any(|w| NEGATIONS.contains(&w.stem.as_str()) && !own_neg.contains(w.stem.as_str()));
            // A phrase that carries its own negation ("no network plugin") needs it in the input too.
            let has_own = own_neg.is_empty()
                || self.words[from..=hi.min(self.words.len().saturating_sub(1))].iter().any(|w| own_neg.contains(w.stem.as_str()));
            return Some(PhraseMatch { words: content.len(), negated: negated_here || !has_own });
        }
        None
    }

    /// Whether a named duration lies within 10 % of `seconds`.
    pub fn duration_near(&self, seconds: u64) -> Option<u64> {
        let s = seconds as f64;
        self.durations.iter().copied().find(|&d| (d as f64 - s).abs() <= 0.1 * s)
    }
}

/// The position in sorted `ps` nearest to `p` within `window` of it (binary search).
pub(crate) fn nearest_within(ps: &[usize], p: usize, window: usize) -> Option<usize> {
    let i = ps.partition_point(|&q| q < p);
    let after = ps.get(i).copied().filter(|&q| q <= p + window);
    let before = i.checked_sub(1).and_then(|j| ps.get(j)).copied().filter(|&q| q + window >= p);
    match (before, after) {
        (Some(b), Some(a)) => Some(if p - b <= a - p { b } else { a }),
        (b, a) => b.or(a),
    }
}

/// A phrase found in the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhraseMatch {
    /// How many content words the phrase has.
    pub words: usize,
    /// Whether the input turns it around ("does not exist").
    pub negated: bool,
}

/// Byte spans of the lines of `text`.
fn line_spans(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut start = 0;
    text.split_inclusive('\n').map(move |l| {
        let span = (start, start + l.len());
        start += l.len();
        span
    })
}

/// Whether a line looks like a row of a table: three or more runs of two or more spaces (or a
/// tab) between cells, or an Events row (`Normal` / `Warning` first).
fn is_table_row(line: &str) -> bool {
    let t = line.trim_start();
    if t.starts_with("normal ") || t.starts_with("warning ") {
        return true;
    }
    t.trim_end().matches("  ").count() >= 3 || t.matches('\t').count() >= 2
}

fn contains_words(hay: &str, needle: &str) -> bool {
    let mut from = 0;
    while let Some(i) = hay[from..].find(needle) {
        let start = from + i;
        let end = start + needle.len();
        let before = hay[..start].chars().next_back();
        let after = hay[end..].chars().next();
        let edge = |c: Option<char>| c.is_none_or(|c| !c.is_ascii_alphanumeric() && c != '-' && c != '_');
        if edge(before) && edge(after) {
            return true;
        }
        from = end;
    }
    false
}

/// The names an input gives for its objects: `kubectl describe` headers, `kind/name`, quoted
/// names in API messages, `-n NS`.
fn find_names(input: &str) -> Names {
    let res = NAME_RES.get_or_init(|| {
        let pats: [(usize, &str); 14] = [
            (0, r#"(?m)^Name:\s+([a-z0-9][a-z0-9.\-]*)\s*$"#),
            (1, r#"(?m)^Namespace:\s+([a-z0-9][a-z0-9\-]*)\s*$"#),
            (2, r#"(?m)^Node:\s+([a-z0-9][a-z0-9.\-]*)(?:/|\s*$)"#),
            (0, r#"\bpods?/([a-z0-9][a-z0-9.\-]*)"#),
            (0, r#"\b[Pp]od "([a-z0-9][a-z0-9.\-]*)""#),
            (1, r#"(?:\s-n|--namespace)[ =]([a-z0-9][a-z0-9\-]*)"#),
            (1, r#"\b(?:in the namespace|namespace) "([a-z0-9][a-z0-9\-]*)""#),
            (2, r#"\bnodes?/([a-z0-9][a-z0-9.\-]*)"#),
            (2, r#"\b[Nn]ode "([a-z0-9][a-z0-9.\-]*)""#),
            (3, r#"\b(?:persistentvolumeclaims?|pvc)/([a-z0-9][a-z0-9.\-]*)"#),
            (3, r#"\b(?:persistentvolumeclaim|PersistentVolumeClaim|claim) "([a-z0-9][a-z0-9.\-]*)""#),
            (4, r#"\b[Cc]ontainer "?([a-z0-9][a-z0-9\-]*)"? (?:failed|is waiting|in pod|terminated)"#),
            (4, r#"\s-c ([a-z0-9][a-z0-9\-]*)"#),
            (5, r#"\b(?:services?|svc)/([a-z0-9][a-z0-9\-]*)"#),
        ];
        pats.iter().filter_map(|(k, p)| Regex::new(p).ok().map(|r| (*k, r))).collect()
    });
    let mut found: BTreeMap<usize, String> = BTreeMap::new();
    let head: &str = if input.len() > 64 * 1024 {
        let mut end = 64 * 1024;
        while !input.is_char_boundary(end) {
            end -= 1;
        }
        &input[..end]
    } else {
        input
    };
    for (k, r) in res {
        if found.contains_key(k) {
            continue;
        }
        if let Some(c) = r.captures(head) {
            found.insert(*k, c[1].to_string());
        }
    }
    let mut n = Names::default();
    for (k, v) in found {
        let slot = match k {
            0 => &mut n.pod,
            1 => &mut n.namespace,
            2 => &mut n.node,
            3 => &mut n.pvc,
            4 => &mut n.container,
            _ => &mut n.service,
        };
        *slot = Some(v);
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_in_yaml_json_flags_and_prose() {
        let cx = InputContext::new("spec:\n  containers:\n  - image: app:v2\n    imagePullPolicy: IfNotPresent\n");
        assert_eq!(cx.setting("imagePullPolicy", Some("IfNotPresent")), Some(true));
        assert_eq!(cx.setting("imagePullPolicy", Some("Always")), Some(false));
        let cx = InputContext::new(r#"{"securityContext": {"readOnlyRootFilesystem": true}}"#);
        assert_eq!(cx.setting("readOnlyRootFilesystem", Some("true")), Some(true));
        let cx = InputContext::new("kubelet runs with --max-pods=110 and --image-pull-policy Always");
        assert_eq!(cx.setting("--max-pods", Some("110")), Some(true));
        assert_eq!(cx.setting("maxPods", None), Some(true));
        let cx = InputContext::new("the webhook has failurePolicy set to Fail");
        assert_eq!(cx.setting("failurePolicy", Some("Fail")), Some(true));
        assert_eq!(cx.setting("timeoutSeconds", Some("30")), None);
    }

    #[test]
    fn durations_ports_exit_codes_platforms() {
        let cx = InputContext::new("it happens every 10 minutes, and the probe gives up after 90s; 2m30s later on EKS the pod on 10.0.0.5:10250 exited with code 0");
        assert!(cx.duration_near(600).is_some());
        assert!(cx.duration_near(90).is_some());
        assert!(cx.duration_near(150).is_some());
        assert!(cx.duration_near(3600).is_none());
        assert!(cx.ports.contains(&10250));
        assert!(cx.exit_codes.contains(&0));
        assert!(cx.platforms.contains("eks"));
        assert!(InputContext::new("the disk in us-east-1d").durations.is_empty());
        let cx = InputContext::new("at 12:53:01 the job ran for an hour");
        assert!(cx.ports.is_empty(), "{:?}", cx.ports);
        assert!(cx.duration_near(3600).is_some());
    }

    #[test]
    fn joined_words_match_by_their_parts() {
        let cx = InputContext::new("On the broken nodes the node-local-dns DaemonSet pod crashes");
        assert!(cx.phrase("node local dns").is_some_and(|m| !m.negated), "parts of a joined word are stemmed one by one");
        assert!(cx.phrase("node-local-dns").is_some());
        let cx = InputContext::new("resize failed: xfs_growfs exited with an error");
        assert!(cx.phrase("xfs_growfs exited").is_some(), "words joined by '_' match by their parts too");
    }

    #[test]
    fn phrases_and_negation() {
        let cx = InputContext::new("The nodes just joined and no network plugin is installed yet.");
        let m = cx.phrase("network plugin installed").expect("found");
        assert!(m.negated, "'no network plugin is installed' turns 'network plugin installed' around");
        assert!(!cx.phrase("no network plugin").expect("found").negated);
        let cx = InputContext::new("I checked: the secret exists in the namespace.");
        assert!(!cx.phrase("the secret exists").expect("found").negated);
        let cx = InputContext::new("the secret doesn't exist yet");
        assert!(cx.phrase("the secret exists").expect("found").negated);
        assert!(InputContext::new("nothing related").phrase("secret exists").is_none());
    }

    #[test]
    fn names_fill_check_commands() {
        let cx = InputContext::new("Name:         web-0\nNamespace:    prod\nNode:         node-1/10.0.0.5\n");
        assert_eq!(cx.names.pod.as_deref(), Some("web-0"));
        assert_eq!(cx.names.fill("kubectl describe pod POD -n NS; kubectl get node NODE"), "kubectl describe pod web-0 -n prod; kubectl get node node-1");
        let cx = InputContext::new(r#"Error from server (Forbidden): pods "api-7d9" is forbidden: User "x" cannot get resource "pods" in the namespace "ci""#);
        assert_eq!(cx.names.namespace.as_deref(), Some("ci"));
        assert_eq!(cx.names.fill("kubectl auth can-i --list -n NS"), "kubectl auth can-i --list -n ci");
        assert_eq!(Names::default().fill("kubectl get pod POD"), "kubectl get pod POD");
    }
}
