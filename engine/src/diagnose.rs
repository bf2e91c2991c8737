//! Diagnosis: the five steps of "Answering a symptom" (DESIGN.md).
//!
//! 1. Read the input.
//! 2. Extract signals ([`crate::signals`]).
//! 3. Score failure modes: exact signal matches weigh most (each weighed down by how many
//!    failure modes share it), aliases people use next, BM25 relevance after that, then
//!    propagation through `causedBy` so root causes one or two hops upstream surface.
//! 4. Apply the cluster version: drop what does not apply, and say so.
//! 5. Answer: ranked candidates with their mechanism chain, checks (marking the ones that
//!    tell the top candidates apart), fixes, references and a confidence.

use crate::knowledge::KnowledgeBase;
use crate::model::{Entity, Kind, KindData, Level, SignalKind, Version, VersionRange};
use crate::search::SearchIndex;
use crate::context::{InputContext, Names};
use crate::scorers;
use crate::signals::{self, Signals, Template, TemplateMatch, Vocabulary};
use crate::tables::{KeyPostings, Postings, StrIndex};
use serde::Serialize;
use rustc_hash::FxHashMap as HashMap;
use std::collections::{BTreeMap, BTreeSet};

/// Largest input accepted, in bytes (16 MiB).
pub const MAX_INPUT_BYTES: usize = 16 * 1024 * 1024;
/// Characters of the input echoed back in [`Diagnosis::input`].
const ECHO_CHARS: usize = 2000;

/// Errors of [`crate::Engine::diagnose`].
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DiagnoseError {
    /// The input is empty or only whitespace.
    #[error("empty input: paste an error message, event lines or `kubectl describe` output, or ask a question")]
    EmptyInput,
    /// The input is larger than [`MAX_INPUT_BYTES`].
    #[error("input is {bytes} bytes, more than the {limit} byte limit: paste the relevant part (the events, the failing container's state, the error lines)")]
    TooLarge {
        /// Size of the input in bytes.
        bytes: usize,
        /// The limit in bytes.
        limit: usize,
    },
}

/// Options of one diagnosis.
#[derive(Debug, Clone, Copy)]
pub struct DiagnoseOptions {
    /// The cluster's Kubernetes minor version; failure modes that do not apply to it are left out.
    pub k8s_version: Option<Version>,
    /// How many candidates to return (at least 1).
    pub top: usize,
}

impl Default for DiagnoseOptions {
    fn default() -> Self {
        DiagnoseOptions { k8s_version: None, top: 5 }
    }
}

/// A reference to an entity: id, kind and title.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct EntityRef {
    /// Entity id.
    pub id: String,
    /// Kind prefix (`loop`).
    pub kind: String,
    /// Title.
    pub title: String,
}

impl EntityRef {
    /// The reference for `id`: its kind and title from `kb`, or (for an id not in the knowledge,
    /// such as a KEP that was not imported) the id's prefix as kind and the id as title.
    pub fn of(kb: &KnowledgeBase, id: &str) -> EntityRef {
        let e = kb.get(id);
        EntityRef {
            id: id.to_string(),
            kind: e.map(|e| e.kind.prefix().to_string()).unwrap_or_else(|| id.split('/').next().unwrap_or("").to_string()),
            title: e.map(|e| e.title.clone()).unwrap_or_else(|| id.to_string()),
        }
    }
}

/// One step of a mechanism chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ChainStep {
    /// Entity id.
    pub id: String,
    /// Kind prefix.
    pub kind: String,
    /// Title.
    pub title: String,
    /// How this step relates to the previous one: `observed` (the matched symptom), `manifestsAs`,
    /// `inLoop`, `partOf`, `involves` or `causedBy`.
    pub relation: String,
}

/// A piece of evidence for a candidate: what one scorer saw in the input, and what it is worth.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Evidence {
    /// The scorer that produced it: `message` (a symptom's text, reason or code), `alias` (a
    /// name people use, verbatim or in other words), `relevance` (BM25 text relevance),
    /// `context` (a context cue of a cause), `hub` (the evidence of the hub it was reached
    /// through), `upstream` (propagated from a failure mode it causes), `version` (the input's
    /// version lies in the cause's bounded range), `ruled-out` (the user ruled it out; a
    /// negative score) or `setting-contradicted` (the input gives a setting another value).
    pub scorer: String,
    /// Symptom id (for `message`), else the id of what the evidence is about (the candidate, or the hub for `hub`).
    pub symptom: String,
    /// What was seen: `template`, `partial-template`, `event-reason`, `status-reason`, `exit-code`,
    /// `http-status`, `metric`, `alias`, `alias-words`, `bm25`, a cue kind (`phrase`, `history`,
    /// `setting`, `platform`, `timing`, `exit-code`, `port`), `hub`, `caused-by`, `version` or `ruled-out`.
    pub matched: String,
    /// The text, reason or code seen.
    pub value: String,
    /// Score contributed (before propagation).
    pub score: f64,
    /// Byte range of a template match in the normalised input (for overlap checks).
    #[serde(skip)]
    pub span: Option<(usize, usize)>,
}

/// A check as shown in an answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CheckOut {
    /// Check id.
    pub id: String,
    /// Title.
    pub title: String,
    /// Command to run, when there is one.
    pub command: Option<String>,
    /// What confirms the candidate.
    pub look_for: String,
    /// What the check shows when the candidate is not the cause, when the knowledge says.
    pub rules_out: Option<String>,
    /// Other top candidates this check tells this one apart from (empty when it is shared).
    pub distinguishes: Vec<String>,
}

/// A fix as shown in an answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FixOut {
    /// Fix id.
    pub id: String,
    /// Title.
    pub title: String,
    /// What to do.
    pub action: String,
    /// Command, when there is one.
    pub command: Option<String>,
    /// low, medium or high.
    pub risk: String,
}

/// The fixes a failure mode names, in its order, as shown in answers (ids that are not
/// fixes are skipped).
pub fn fixes_of(kb: &KnowledgeBase, fm: &crate::model::FailureModeData) -> Vec<FixOut> {
    fm.fixes
        .iter()
        .filter_map(|f| kb.get(f))
        .filter_map(|f| match &f.data {
            KindData::Fix { action, command, risk } => Some(FixOut {
                id: f.id.clone(),
                title: f.title.clone(),
                action: action.clone(),
                command: command.clone(),
                risk: risk.clone(),
            }),
            _ => None,
        })
        .collect()
}

/// Version applicability of a candidate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Applies {
    /// First minor it applies to, if bounded.
    pub since: Option<String>,
    /// First minor it no longer applies to, if bounded.
    pub until: Option<String>,
    /// "all versions", "1.24+", "before 1.25", "1.22 to before 1.25".
    pub description: String,
    /// Whether it applies to the diagnosis' version (`None` when no version was given).
    pub at_version: Option<bool>,
}

impl Applies {
    fn new(r: VersionRange, v: Option<Version>) -> Applies {
        Applies {
            since: r.since.map(|v| v.to_string()),
            until: r.until.map(|v| v.to_string()),
            description: r.describe(),
            at_version: v.map(|v| r.contains(v)),
        }
    }
}

/// One ranked failure mode.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Candidate {
    /// 1-based rank.
    pub rank: usize,
    /// Failure-mode id.
    pub id: String,
    /// Always `failure-mode`.
    pub kind: String,
    /// Title.
    pub title: String,
    /// Area slug.
    pub area: String,
    /// `symptom` (a hub: the surface failure; see `causes`) or `cause` (one specific mechanism).
    pub level: String,
    /// For a cause reached through a matched hub: that hub's id.
    pub hub: Option<String>,
    /// For a hub: its causes, most likely first (by their scores for this input, then the hub's
    /// order), each with the check that tells it apart.
    pub causes: Vec<CauseOut>,
    /// Confidence in [0, 1]: how strong and how distinctive the evidence is.
    pub confidence: f64,
    /// Raw score (sum of evidence, relevance and propagation).
    pub score: f64,
    /// The main component (of the main loop, else the first involved).
    pub component: Option<EntityRef>,
    /// The main loop.
    #[serde(rename = "loop")]
    pub loop_: Option<EntityRef>,
    /// The mechanism path: observed symptom → failure mode → loop → component → upstream causes.
    pub chain: Vec<ChainStep>,
    /// What in the input supports it.
    pub evidence: Vec<Evidence>,
    /// A one-paragraph explanation.
    pub summary: String,
    /// Checks that confirm it.
    pub checks: Vec<CheckOut>,
    /// Fixes.
    pub fixes: Vec<FixOut>,
    /// References (docs, KEPs, source paths).
    pub references: Vec<String>,
    /// KEP numbers.
    pub keps: Vec<u32>,
    /// Feature gates it depends on.
    pub feature_gates: Vec<String>,
    /// Version applicability.
    pub applies: Applies,
}

/// One cause of a hub, as listed under the hub.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CauseOut {
    /// Failure-mode id of the cause.
    pub id: String,
    /// Title.
    pub title: String,
    /// Its score for this input (hub share included).
    pub score: f64,
    /// Whether the input has evidence of its own for it (a message, alias or context cue).
    pub separated: bool,
    /// Its first own check (command with the input's names filled in), if any.
    pub check: Option<CheckOut>,
}

/// A check that tells one top candidate apart from the others.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DistinguishingCheck {
    /// Check id.
    pub check: String,
    /// Title.
    pub title: String,
    /// Command, when there is one.
    pub command: Option<String>,
    /// What to look for.
    pub look_for: String,
    /// The candidate it confirms.
    pub confirms: String,
    /// The other top candidates it tells apart.
    pub versus: Vec<String>,
}

/// A failure mode left out because it does not apply at the version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Excluded {
    /// Failure-mode id.
    pub id: String,
    /// Title.
    pub title: String,
    /// Its version range.
    pub applies: String,
}

/// The answer to one symptom.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diagnosis {
    /// The input (its first 2,000 characters).
    pub input: String,
    /// Size of the whole input in bytes.
    pub input_bytes: usize,
    /// The version used for filtering ("1.30"), if any.
    pub k8s_version: Option<String>,
    /// Where the version came from: `option`, `input` or `none`.
    pub k8s_version_source: String,
    /// What was extracted from the input.
    pub signals: Signals,
    /// Names of the objects the input is about (filled into check commands).
    pub names: Names,
    /// Ranked candidates, best first (in confidence order).
    pub candidates: Vec<Candidate>,
    /// Checks that tell the top candidates apart.
    pub distinguishing_checks: Vec<DistinguishingCheck>,
    /// Candidates left out by version filtering.
    pub excluded: Vec<Excluded>,
    /// Notes for the reader (no signal recognised, version taken from input, ...).
    pub notices: Vec<String>,
}

/// Status words that every pod or node shows at some point: as evidence alone they weigh a
/// quarter of a specific status reason (CrashLoopBackOff, OOMKilled).
pub const BARE_STATUS: &[&str] = &["Pending", "Running", "Terminating", "NotReady", "Ready", "Unknown", "Failed", "Succeeded", "ContainerCreating", "Error", "Completed"];

/// Precomputed matching tables over the knowledge.
#[derive(Debug)]
pub struct Matcher {
    /// The tables from analysing the knowledge's text: aliases and their automaton, cue and
    /// ruled-out words, alias tokens, templates (its `template_index` is moved out below).
    pub(crate) text: Prepared,
    /// The templates' required words, to try only the templates that can match.
    pub(crate) template_index: signals::TemplateIndex,
    /// The reasons and metric names the extractor knows.
    pub(crate) vocab: Vocabulary,
    /// The symptoms some failure mode manifests as, in knowledge order, with what scoring one
    /// needs (its failure modes and how many failure modes share its template, reason or code).
    pub(crate) symptoms: crate::compiled::Table<SymptomTable>,
    /// The ids of `symptoms`, in the same order: symptom id → its place in `symptoms` (for
    /// the templates an input matched).
    pub(crate) symptom_at: StrIndex,
    /// reason → places in `symptoms` of the symptoms with that reason.
    pub(crate) symptoms_by_reason: HashMap<String, Vec<usize>>,
    /// (signal kind, code) → places in `symptoms` of the exit-code and HTTP-status symptoms.
    pub(crate) symptoms_by_code: HashMap<(SignalKind, i64), Vec<usize>>,
    /// Places in `symptoms` of the metric symptoms.
    pub(crate) metric_symptoms: Vec<usize>,
    /// The failure modes' ids in knowledge order: a failure mode's place here (its ordinal)
    /// indexes the per-failure-mode tables below, so scoring one needs no lookup by id.
    /// Looked up by id, it gives the ordinal.
    pub(crate) fm_ids: StrIndex,
    /// What an input must hold for each direct scorer to have anything to say about a failure
    /// mode: a diagnosis scores only the failure modes it reaches this way (see
    /// [`CandidateKeys`]).
    pub(crate) keys: CandidateKeys,
    /// Per failure-mode ordinal: its upstream causes (causedBy and inverse leadsTo), sorted
    /// (see [`Matcher::causes_of`]).
    pub(crate) causes: crate::compiled::Table<Vec<String>>,
    /// hub → its causes, most common first.
    pub(crate) hub_causes: BTreeMap<String, Vec<String>>,
    /// hub → its own checks (a cause's check that the hub also has does not tell causes apart).
    pub(crate) hub_checks: BTreeMap<String, BTreeSet<String>>,
}

/// An alias and its analyzer tokens (as ids into [`Matcher::alias_vocab`]).
type AliasTokens = (String, Vec<usize>);

/// What the direct scorers read of one failure mode: its row of the matcher, by ordinal (its
/// place in [`Matcher::fm_ids`]), so that scoring needs no entity (compiled knowledge decodes
/// entities only for the candidates it shows, and a row only for the failure modes an input
/// reaches).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FmRow {
    /// Pattern ids (places in `Prepared::alias_patterns`) of its normalised aliases of six
    /// characters or more, sorted by alias.
    pub(crate) alias_ids: Vec<usize>,
    /// Each alias of three analyzer tokens or more, with its token ids.
    pub(crate) alias_tokens: Vec<AliasTokens>,
    /// Its context cues (what the `context` scorer reads).
    pub(crate) context: Vec<crate::model::ContextCue>,
    /// Per context cue, in order: its prepared words (phrase words of a phrase, history or
    /// product cue, the spellings of a setting's field; none for the others).
    pub(crate) cue_words: Vec<Option<Vec<String>>>,
    /// The versions it applies to (what the `version` scorer and the version filter read).
    pub(crate) applies: VersionRange,
    /// Its `ruled_out_by` phrases (what the `ruled-out` line shows).
    pub(crate) ruled_out: Vec<String>,
    /// The content words of each `ruled_out_by` phrase.
    pub(crate) ruled_out_words: Vec<Vec<String>>,
}

/// Inverted tables from what an input holds to the failure modes (by ordinal) that a direct
/// scorer could give evidence for it. A failure mode reached by none of them gets no line from
/// any direct scorer: `message` needs one of its messages, `relevance` a BM25 hit, `alias` one
/// of its aliases verbatim or every token of one in other words, `context` every content word
/// of a phrase cue, a spelling of a setting's field, a named platform, or a timing, exit code
/// or port cue (those few are always scored), and `version` a message or a context line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CandidateKeys {
    /// Alias pattern id → failure modes with that normalised alias.
    pub(crate) by_pattern: Postings,
    /// Alias token id → failure modes with an alias in other words keyed by that token (see
    /// [`CandidateKeys::new`]).
    pub(crate) by_token: Postings,
    /// Stem → failure modes with a phrase or history cue keyed by that content word.
    pub(crate) by_stem: KeyPostings,
    /// Canonical field spelling → failure modes with a setting cue on that field.
    pub(crate) by_field: KeyPostings,
    /// Platform slug → failure modes with a platform cue on it.
    pub(crate) by_platform: KeyPostings,
    /// Failure modes with a timing, exit-code or port cue.
    pub(crate) always: Vec<u32>,
}

impl CandidateKeys {
    /// The keys of `rows` (failure modes in ordinal order) with `patterns` alias patterns and
    /// `tokens` alias tokens.
    ///
    /// A phrase cue is found only where all its content words are, and an alias in other words
    /// only where all its tokens are: each is keyed by the one of its words that the fewest
    /// phrases (tokens: aliases) have, so that a common word ("node", "pod") does not reach
    /// every failure mode with a phrase that starts with it.
    fn new<'a>(rows: impl Iterator<Item = &'a FmRow> + Clone, patterns: usize, tokens: usize) -> CandidateKeys {
        use crate::model::CueKind;
        let phrase_words = |cue: &'a crate::model::ContextCue, words: &'a Option<Vec<String>>| -> Option<std::borrow::Cow<'a, [String]>> {
            match (&cue.kind, words) {
                (CueKind::Phrase { .. } | CueKind::History { .. }, Some(w)) => Some(std::borrow::Cow::Borrowed(w.as_slice())),
                (CueKind::Phrase { text } | CueKind::History { text }, None) => Some(std::borrow::Cow::Owned(crate::context::phrase_words(text))),
                _ => None,
            }
        };
        // How many phrases have each content word, and how many aliases each token.
        let mut word_df: HashMap<String, u32> = HashMap::default();
        let mut token_df = vec![0u32; tokens];
        for row in rows.clone() {
            for (cue, words) in row.context.iter().zip(&row.cue_words) {
                if let Some(w) = phrase_words(cue, words) {
                    for k in crate::context::content_words(&w).collect::<BTreeSet<_>>() {
                        *word_df.entry(k.to_string()).or_default() += 1;
                    }
                }
            }
            for (_, toks) in &row.alias_tokens {
                for &t in toks.iter().collect::<BTreeSet<_>>() {
                    token_df[t] += 1;
                }
            }
        }
        let mut by_pattern = vec![Vec::new(); patterns];
        let mut by_token = vec![Vec::new(); tokens];
        let (mut by_stem, mut by_field, mut by_platform): (BTreeMap<String, Vec<u32>>, BTreeMap<String, Vec<u32>>, BTreeMap<String, Vec<u32>>) = Default::default();
        let mut always = Vec::new();
        let add = |v: &mut Vec<u32>, n: u32| {
            if v.last() != Some(&n) {
                v.push(n);
            }
        };
        for (n, row) in rows.enumerate() {
            let n = n as u32;
            for &p in &row.alias_ids {
                add(&mut by_pattern[p], n);
            }
            for (_, toks) in &row.alias_tokens {
                if let Some(&t) = toks.iter().min_by_key(|&&t| token_df[t]) {
                    add(&mut by_token[t], n);
                }
            }
            for (cue, words) in row.context.iter().zip(&row.cue_words) {
                match &cue.kind {
                    CueKind::Phrase { .. } | CueKind::History { .. } => {
                        let words = phrase_words(cue, words).unwrap_or_default();
                        if let Some(k) = crate::context::content_words(&words).min_by_key(|k| word_df.get(*k).copied().unwrap_or(0)) {
                            add(by_stem.entry(k.to_string()).or_default(), n);
                        }
                    }
                    CueKind::Setting { field, .. } => {
                        let spellings = words.clone().unwrap_or_else(|| crate::context::field_spellings(field));
                        for f in spellings {
                            add(by_field.entry(f).or_default(), n);
                        }
                    }
                    CueKind::Platform { text } => add(by_platform.entry(text.clone()).or_default(), n),
                    CueKind::Timing { .. } | CueKind::ExitCode { .. } | CueKind::Port { .. } => add(&mut always, n),
                    CueKind::Product { .. } => {}
                }
            }
        }
        CandidateKeys {
            by_pattern: Postings::new(by_pattern),
            by_token: Postings::new(by_token),
            by_stem: KeyPostings::new(&by_stem),
            by_field: KeyPostings::new(&by_field),
            by_platform: KeyPostings::new(&by_platform),
            always,
        }
    }

    /// Whether the tables fit `fms` failure modes, `patterns` alias patterns and `tokens`
    /// alias tokens (checked when read back from bytes).
    pub(crate) fn fits(&self, fms: usize, patterns: usize, tokens: usize) -> bool {
        let bound = fms as u32;
        self.by_pattern.len() == patterns
            && self.by_token.len() == tokens
            && self.by_pattern.valid(bound)
            && self.by_token.valid(bound)
            && [&self.by_stem, &self.by_field, &self.by_platform].iter().all(|t| t.valid(bound))
            && self.always.iter().all(|&n| n < bound)
    }

    /// Per failure-mode ordinal (`fms` of them), whether the input reaches it (see the type).
    fn reached(&self, fms: usize, cx: &InputContext, aliases_present: &[bool], positions: &[Vec<usize>], direct: &[bool]) -> Vec<bool> {
        let mut out = direct.to_vec();
        out.resize(fms, false);
        let mut mark = |ns: &[u32]| {
            for &n in ns {
                if let Some(x) = out.get_mut(n as usize) {
                    *x = true;
                }
            }
        };
        for (p, _) in aliases_present.iter().enumerate().filter(|(_, &here)| here) {
            mark(self.by_pattern.get(p));
        }
        for (t, _) in positions.iter().enumerate().filter(|(_, ps)| !ps.is_empty()) {
            mark(self.by_token.get(t));
        }
        for s in cx.stem_keys() {
            mark(self.by_stem.get(s));
        }
        for f in cx.canon_keys() {
            mark(self.by_field.get(f));
        }
        for p in &cx.platforms {
            mark(self.by_platform.get(p));
        }
        mark(&self.always);
        out
    }
}

/// What scoring needs of one symptom, computed once per knowledge base.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SymptomTable {
    /// Symptom id.
    pub(crate) id: String,
    /// The failure modes that manifest as it (hub causes that get it through their hub left out).
    pub(crate) fms: Vec<String>,
    /// How many failure modes have a symptom with its template (at least 1).
    pub(crate) template_df: usize,
    /// Literal characters of its compiled template (0 without one).
    pub(crate) literal_len: usize,
    /// How many failure modes have a symptom with its reason (at least 1).
    pub(crate) reason_df: usize,
    /// How many failure modes have a symptom with its signal kind and code (at least 1).
    pub(crate) code_df: usize,
}

/// Compiles the process-wide regular expressions that every diagnosis uses (signal and context
/// extraction) by extracting from a short canned input. [`crate::compiled::load`] runs it on
/// its second thread while the entities decode, so a one-shot `why` does not compile them on
/// its critical path; it is never needed for correctness (they compile on first use anyway).
pub fn warm_up() {
    const INPUT: &str = "Warning  FailedScheduling  12s  default-scheduler  0/3 nodes are available: 3 Insufficient cpu.\n    State:          Waiting\n      Reason:       CrashLoopBackOff\n    Last State:     Terminated\n      exitCode: 137\nexited with code 1, HTTP 503, Error from server (Forbidden): pods \"web-0\" is forbidden, Kubernetes v1.30, -n default pod/web-0 container web failed, port 8080, 10.0.0.1:6443 every 5 minutes after 2h30m";
    let normalized = signals::normalize(INPUT);
    std::hint::black_box(signals::extract(INPUT, &normalized, &Vocabulary::default(), &[] as &[Template]));
    std::hint::black_box(InputContext::new(INPUT));
}

/// The tables of a [`Matcher`] that come from analysing the knowledge's text (tokenising and
/// stemming aliases and cues, counting the failure modes that share an alias) plus the alias
/// automaton: most of the cost of building a matcher. [`Prepared::new`] computes them from a
/// knowledge base; compiled knowledge (see [`crate::compiled`]) stores them, so a one-shot
/// start-up only decodes them.
#[derive(Debug)]
pub struct Prepared {
    /// Every distinct normalised alias of the failure modes (six characters or more), sorted.
    pub(crate) alias_patterns: StrIndex,
    /// Per pattern: how many failure modes carry it ([`crate::scorers::alias_df`]).
    pub(crate) alias_pattern_df: Vec<usize>,
    /// Token id → analyzer token (the ids of [`FmRow::alias_tokens`]); looked up by token, the
    /// id.
    pub(crate) alias_vocab: StrIndex,
    /// The symptoms' message templates, in knowledge order (expressions not compiled).
    pub(crate) templates: crate::compiled::Table<Template>,
    /// `alias_patterns` in one automaton (pattern id = place in `alias_patterns`).
    pub(crate) alias_automaton: crate::patterns::PatternSet,
    /// Per failure-mode ordinal: its row.
    pub(crate) rows: crate::compiled::Table<FmRow>,
}

impl Prepared {
    /// Computes the tables from `kb`, failure modes in knowledge order.
    pub fn new(kb: &KnowledgeBase) -> Prepared {
        let mut alias_names: Vec<Vec<String>> = Vec::new();
        let mut alias_vocab: HashMap<String, usize> = HashMap::default();
        let mut rows = Vec::new();
        for fm in kb.of_kind(Kind::FailureMode) {
            let mut names: Vec<String> = fm.aliases.iter().map(|a| signals::normalize(a)).filter(|a| a.len() >= 6).collect();
            names.sort();
            names.dedup();
            alias_names.push(names);
            let alias_tokens: Vec<AliasTokens> = fm
                .aliases
                .iter()
                .map(|a| (a, crate::search::token_sequence(a, 16)))
                .filter(|(_, t)| t.len() >= 3)
                .map(|(a, t)| {
                    let ids = t
                        .into_iter()
                        .map(|t| {
                            let next = alias_vocab.len();
                            *alias_vocab.entry(t).or_insert(next)
                        })
                        .collect();
                    (a.clone(), ids)
                })
                .collect();
            let d = fm.failure_mode();
            let context = d.map(|d| d.context.clone()).unwrap_or_default();
            let cue_words = context
                .iter()
                .map(|c| match &c.kind {
                    crate::model::CueKind::Phrase { text } | crate::model::CueKind::History { text } | crate::model::CueKind::Product { text } => {
                        Some(crate::context::phrase_words(text))
                    }
                    crate::model::CueKind::Setting { field, .. } => Some(crate::context::field_spellings(field)),
                    _ => None,
                })
                .collect();
            let ruled_out = d.map(|d| d.ruled_out_by.clone()).unwrap_or_default();
            rows.push(FmRow {
                alias_ids: Vec::new(),
                alias_tokens,
                cue_words,
                context,
                applies: fm.applies.clone(),
                ruled_out_words: ruled_out.iter().map(|p| crate::context::phrase_words(p)).collect(),
                ruled_out,
            });
        }
        let alias_patterns: Vec<String> = alias_names.iter().flatten().cloned().collect::<BTreeSet<String>>().into_iter().collect();
        let alias_df = crate::scorers::alias_df(kb);
        let alias_pattern_df = alias_patterns.iter().map(|a| alias_df.get(a).copied().unwrap_or(1)).collect();
        let pattern_of: HashMap<&str, usize> = alias_patterns.iter().enumerate().map(|(i, a)| (a.as_str(), i)).collect();
        for (row, names) in rows.iter_mut().zip(&alias_names) {
            row.alias_ids = names.iter().filter_map(|a| pattern_of.get(a.as_str()).copied()).collect();
        }
        let mut vocab = vec![String::new(); alias_vocab.len()];
        for (t, id) in alias_vocab {
            vocab[id] = t;
        }
        let templates: Vec<Template> =
            kb.of_kind(Kind::Symptom).filter_map(|s| s.symptom().and_then(|d| d.text.as_ref()).and_then(|t| Template::compile(&s.id, t))).collect();
        Prepared {
            alias_automaton: crate::patterns::PatternSet::new(&alias_patterns),
            alias_patterns: StrIndex::new(alias_patterns.iter().map(String::as_str)),
            alias_pattern_df,
            alias_vocab: StrIndex::new(vocab.iter().map(String::as_str)),
            templates: templates.into(),
            rows: rows.into(),
        }
    }

    /// Whether the tables fit `fms` failure modes: one row per failure mode, one count per
    /// alias pattern, one automaton pattern per alias pattern (compiled tables are checked
    /// before use, so a damaged file is an error, not an out-of-bounds index). Checks nothing
    /// inside the rows: see [`Prepared::rows_fit`].
    pub(crate) fn fits(&self, fms: usize) -> bool {
        self.rows.len() == fms
            && self.alias_pattern_df.len() == self.alias_patterns.len()
            && self.alias_automaton.len() == self.alias_patterns.len()
            && self.alias_patterns.valid()
            && self.alias_vocab.valid()
    }

    /// Whether every row fits the tables: pattern and token ids within them, one prepared
    /// word list per cue and per `ruled_out_by` phrase. Decodes every row: for
    /// [`crate::compiled::verify`], not for start-up.
    pub(crate) fn rows_fit(&self) -> bool {
        let (patterns, vocab) = (self.alias_patterns.len(), self.alias_vocab.len());
        self.rows.iter().all(|r| {
            r.alias_ids.iter().all(|&i| i < patterns)
                && r.alias_tokens.iter().all(|(_, ids)| !ids.is_empty() && ids.iter().all(|&i| i < vocab))
                && r.cue_words.len() == r.context.len()
                && r.ruled_out_words.len() == r.ruled_out.len()
        })
    }
}

impl Matcher {
    /// Whether decoded tables fit each other and a knowledge base with `symptoms` symptom
    /// entities (the failure-mode ids are compared by the caller): one row per failure mode,
    /// and every place within its table, so that a damaged compiled file is an error, not an
    /// out-of-bounds index. The rows themselves are checked by [`Prepared::rows_fit`].
    pub(crate) fn fits(&self, symptoms: usize) -> bool {
        let fms = self.fm_ids.len();
        let places = |v: &[usize], len: usize| v.iter().all(|&i| i < len);
        let ix = &self.template_index;
        self.text.fits(fms)
            && self.symptoms.len() <= symptoms
            && self.symptom_at.len() == self.symptoms.len()
            && self.symptom_at.valid()
            && self.fm_ids.valid()
            && self.causes.len() == fms
            && self.keys.fits(fms, self.text.alias_patterns.len(), self.text.alias_vocab.len())
            && ix.len == self.text.templates.len()
            && ix.owners.len() == ix.automaton.len()
            && ix.owners.iter().all(|o| places(o, ix.len))
            && places(&ix.always, ix.len)
            && self.symptoms_by_reason.values().chain(self.symptoms_by_code.values()).all(|v| places(v, self.symptoms.len()))
            && places(&self.metric_symptoms, self.symptoms.len())
    }

    /// Builds the tables from the knowledge.
    pub fn new(kb: &KnowledgeBase) -> Matcher {
        Matcher::with_prepared(kb, Prepared::new(kb))
    }

    /// Builds the tables from the knowledge and its [`Prepared`] tables (which must have been
    /// computed from the same failure modes, see [`Prepared::fits`]).
    pub fn with_prepared(kb: &KnowledgeBase, prepared: Prepared) -> Matcher {
        let text = prepared;
        let templates: Vec<&Template> = text.templates.iter().collect();
        let template_index = signals::TemplateIndex::new(templates.iter().copied());
        // Per symptom entity in knowledge order: its message template, normalised.
        let symptom_texts: Vec<Option<String>> = kb.of_kind(Kind::Symptom).map(|s| s.symptom().and_then(|d| d.text.as_deref()).map(signals::normalize)).collect();
        let keys = CandidateKeys::new(text.rows.iter(), text.alias_patterns.len(), text.alias_vocab.len());
        let mut symptom_fms: HashMap<String, Vec<String>> = HashMap::default();
        let mut fm_ids = Vec::new();
        for fm in kb.of_kind(Kind::FailureMode) {
            fm_ids.push(fm.id.clone());
            if let Some(d) = fm.failure_mode() {
                for s in &d.symptoms {
                    symptom_fms.entry(s.clone()).or_default().push(fm.id.clone());
                }
            }
        }
        // A hub's message names the hub: a cause of that hub that lists the same symptom gets it
        // through the hub (scorer `hub`), not as evidence of its own.
        let hub_causes = crate::scorers::hub_causes(kb);
        for fms in symptom_fms.values_mut() {
            let hubs: Vec<&String> = fms.iter().filter(|f| hub_causes.contains_key(*f)).collect();
            if hubs.is_empty() {
                continue;
            }
            let inherited: BTreeSet<String> = hubs.iter().flat_map(|h| hub_causes.get(*h).into_iter().flatten().cloned()).collect();
            fms.retain(|f| !inherited.contains(f));
        }
        let mut template_fms: HashMap<&str, BTreeSet<String>> = HashMap::default();
        let mut reason_fms: HashMap<String, BTreeSet<String>> = HashMap::default();
        let mut code_fms: HashMap<(SignalKind, i64), BTreeSet<String>> = HashMap::default();
        let mut vocab = Vocabulary::default();
        for (s, text) in kb.of_kind(Kind::Symptom).zip(&symptom_texts) {
            let Some(d) = s.symptom() else { continue };
            let fms = symptom_fms.get(&s.id).cloned().unwrap_or_default();
            if let Some(t) = text {
                template_fms.entry(t.as_str()).or_default().extend(fms.iter().cloned());
            }
            if let Some(r) = &d.reason {
                reason_fms.entry(r.clone()).or_default().extend(fms.iter().cloned());
                match d.signal {
                    SignalKind::StatusReason => {
                        vocab.status_reasons.insert(r.clone());
                    }
                    _ => {
                        vocab.event_reasons.insert(r.clone());
                    }
                }
            }
            if let Some(c) = d.code {
                code_fms.entry((d.signal, c)).or_default().extend(fms.iter().cloned());
            }
        }
        for m in kb.of_kind(Kind::Metric) {
            if let KindData::Metric { name, .. } = &m.data {
                vocab.metrics.insert(name.clone());
            }
        }
        // Per symptom that some failure mode manifests as: its failure modes and shares, and
        // where to find it by what an input shows (template, reason, code, metric).
        let lens: HashMap<&str, usize> = templates.iter().map(|t| (t.symptom_id.as_str(), t.literal_len())).collect();
        let mut symptoms = Vec::new();
        let mut symptom_ids = Vec::new();
        let mut symptoms_by_reason: HashMap<String, Vec<usize>> = HashMap::default();
        let mut symptoms_by_code: HashMap<(SignalKind, i64), Vec<usize>> = HashMap::default();
        let mut metric_symptoms = Vec::new();
        for (s, text) in kb.of_kind(Kind::Symptom).zip(&symptom_texts) {
            let Some(d) = s.symptom() else { continue };
            let Some(fms) = symptom_fms.get(&s.id) else { continue };
            let at = symptoms.len();
            symptom_ids.push(s.id.as_str());
            if let Some(r) = &d.reason {
                symptoms_by_reason.entry(r.clone()).or_default().push(at);
            }
            if let (Some(c), SignalKind::ExitCode | SignalKind::HttpStatus) = (d.code, d.signal) {
                symptoms_by_code.entry((d.signal, c)).or_default().push(at);
            }
            if d.signal == SignalKind::Metric {
                metric_symptoms.push(at);
            }
            let df = |n: Option<&BTreeSet<String>>| n.map_or(1, |v| v.len().max(1));
            symptoms.push(SymptomTable {
                id: s.id.clone(),
                fms: fms.clone(),
                template_df: text.as_ref().map_or(1, |t| df(template_fms.get(t.as_str()))),
                literal_len: lens.get(s.id.as_str()).copied().unwrap_or(0),
                reason_df: d.reason.as_ref().map_or(1, |r| df(reason_fms.get(r))),
                code_df: d.code.map_or(1, |c| df(code_fms.get(&(d.signal, c)))),
            });
        }
        Matcher {
            template_index,
            vocab,
            symptom_at: StrIndex::new(symptom_ids),
            symptoms: symptoms.into(),
            symptoms_by_reason,
            symptoms_by_code,
            metric_symptoms,
            fm_ids: StrIndex::new(fm_ids.iter().map(String::as_str)),
            keys,
            causes: {
                let mut by_id = crate::graph::direct_causes(kb);
                fm_ids.iter().map(|id| by_id.remove(id).map(|c| c.into_iter().collect()).unwrap_or_default()).collect::<Vec<Vec<String>>>().into()
            },
            hub_checks: hub_causes.keys().filter_map(|h| kb.get(h)).map(|h| (h.id.clone(), h.failure_mode().map(|d| d.checks.iter().cloned().collect()).unwrap_or_default())).collect(),
            hub_causes: hub_causes.clone(),
            text,
        }
    }

    /// Per alias pattern id (see [`Matcher::alias_ids`]), whether the normalised alias occurs in
    /// `normalized` (the output of [`signals::normalize`]) as a substring; one pass over the input.
    pub(crate) fn aliases_in(&self, normalized: &str) -> Vec<bool> {
        self.text.alias_automaton.present(normalized.as_bytes())
    }

    /// The row of the failure mode with ordinal `n` (its place in `fm_ids`), decoded now if it
    /// was not; `None` past the table.
    pub(crate) fn row(&self, n: usize) -> Option<&FmRow> {
        self.text.rows.get(n)
    }

    /// How many failure-mode rows are decoded, of how many (compiled knowledge decodes a row
    /// when a diagnosis first reaches its failure mode).
    pub fn rows_decoded(&self) -> (usize, usize) {
        self.text.rows.decoded()
    }

    /// The upstream causes of failure mode `fm` (causedBy and inverse leadsTo), sorted; empty
    /// for a failure mode without any and for an id that is not a failure mode's.
    pub(crate) fn causes_of(&self, fm: &str) -> &[String] {
        self.ordinal(fm).and_then(|n| self.causes.get(n)).map_or(&[], Vec::as_slice)
    }

    /// The ordinal of failure mode `fm` (its place in `fm_ids`), if it is one.
    pub(crate) fn ordinal(&self, fm: &str) -> Option<usize> {
        self.fm_ids.position(fm)
    }

    /// Extracts the signals of an input.
    pub fn extract(&self, input: &str) -> Signals {
        let normalized = signals::normalize(input);
        signals::extract_indexed(input, &normalized, &self.vocab, &self.text.templates, &self.template_index)
    }
}

#[cfg(test)]
thread_local! {
    /// Tests set it to score every failure mode, not only those the input reaches, and compare.
    static SCORE_EVERY_FAILURE_MODE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The lines of every direct scorer for the failure modes with ordinals `ordinals`, by id;
/// failure modes without a line are left out.
fn score_direct(input: &scorers::ScoringInput<'_>, ordinals: impl Iterator<Item = usize>) -> BTreeMap<String, Vec<Evidence>> {
    let mut lines = BTreeMap::new();
    for n in ordinals {
        let Some(id) = input.m.fm_ids.get(n) else { continue };
        let id = id.to_string();
        let mut evs = Vec::new();
        for (_, scorer) in scorers::DIRECT {
            evs.extend(scorer(input, n));
        }
        if !evs.is_empty() {
            lines.insert(id.clone(), evs);
        }
    }
    lines
}

fn eref(kb: &KnowledgeBase, id: &str) -> EntityRef {
    EntityRef::of(kb, id)
}

/// Scores every failure mode for the signals; returns direct scores and evidence.
/// For a match inside a scheduler message "0/N nodes are available: 3 reason, 2 reason.", the
/// weight of that reason: its node count against the largest count in the message (0.5 to 1),
/// halved for the control-plane taint, which the scheduler meets on every cluster by design and
/// which is the cause only when no other reason is given. `None` outside such a message.
pub fn scheduler_reason_factor(normalized: &str, span: (usize, usize)) -> Option<f64> {
    static COUNT: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let count_re = COUNT.get_or_init(|| regex::Regex::new(r"(?:available: |, )(\d+) ").expect("static regex is valid"));
    let head = normalized.get(..span.0)?;
    let start = head.rfind("nodes are available: ")?;
    // The reason list ends at "preemption:" or at the end of the sentence (". " after the last reason).
    let rest = normalized.get(span.0..)?;
    let msg_end = span.0 + rest.find("preemption:").or_else(|| rest.find(". ")).unwrap_or(rest.len());
    if msg_end < span.1 {
        return None; // the match spans the whole message: it is not one reason of it
    }
    let message = normalized.get(start..msg_end)?;
    let counts: Vec<(usize, f64)> = count_re
        .captures_iter(message)
        .filter_map(|c| Some((start + c.get(1)?.start(), c[1].parse::<f64>().ok()?)))
        .collect();
    if counts.len() < 2 {
        return None;
    }
    let max = counts.iter().map(|c| c.1).fold(0.0, f64::max).max(1.0);
    let mine = counts.iter().rev().find(|(pos, _)| *pos < span.0).map(|c| c.1)?;
    let tail = normalized.get(span.1..msg_end).unwrap_or("");
    // Reasons are separated by ", " and the list ends with ". " (a taint's key has dots of its own).
    let reason_end = span.1 + [tail.find(", "), tail.find(". ")].into_iter().flatten().min().unwrap_or(tail.len());
    let reason_text = normalized.get(span.0..reason_end).unwrap_or("");
    let mut f = 0.5 + 0.5 * mine / max;
    if reason_text.contains("taint") && (reason_text.contains("node-role.kubernetes.io/control-plane") || reason_text.contains("node-role.kubernetes.io/master")) {
        f *= 0.5;
    }
    Some(f)
}

fn score_signals(kb: &KnowledgeBase, m: &Matcher, sig: &Signals, normalized: &str) -> BTreeMap<String, (f64, Vec<Evidence>)> {
    let mut per_fm: BTreeMap<String, (f64, Vec<Evidence>)> = BTreeMap::new();
    let by_symptom: HashMap<&str, &TemplateMatch> = sig.templates.iter().map(|t| (t.symptom.as_str(), t)).collect();
    let reasons: BTreeSet<&str> = sig.event_reasons.iter().chain(&sig.status_reasons).map(String::as_str).collect();
    // Only the symptoms the input can show: a template it matched, a reason, code or metric it
    // names; taken in knowledge order.
    let mut reached: Vec<usize> = sig.templates.iter().filter_map(|t| m.symptom_at.position(t.symptom.as_str())).collect();
    reached.extend(reasons.iter().filter_map(|r| m.symptoms_by_reason.get(*r)).flatten());
    reached.extend(sig.exit_codes.iter().filter_map(|&c| m.symptoms_by_code.get(&(SignalKind::ExitCode, c))).flatten());
    reached.extend(sig.http_codes.iter().filter_map(|&c| m.symptoms_by_code.get(&(SignalKind::HttpStatus, i64::from(c)))).flatten());
    if !sig.metrics.is_empty() {
        reached.extend(&m.metric_symptoms);
    }
    reached.sort_unstable();
    reached.dedup();
    for table in reached.into_iter().filter_map(|at| m.symptoms.get(at)) {
        let Some(s) = kb.get(&table.id) else { continue };
        let Some(d) = s.symptom() else { continue };
        let fms = &table.fms;
        let w = d.weight;
        let mut best: Option<Evidence> = None;
        let mut offer = |e: Evidence| {
            if best.as_ref().is_none_or(|b| e.score > b.score) {
                best = Some(e);
            }
        };
        if let (Some(_), Some(tm)) = (&d.text, by_symptom.get(s.id.as_str())) {
            let df = table.template_df as f64;
            let spec = 0.5 + 0.5 * (table.literal_len as f64 / 40.0).min(1.0);
            let base = if tm.full { 3.0 * spec } else { 1.8 * tm.coverage };
            let share = scheduler_reason_factor(normalized, tm.span).unwrap_or(1.0);
            let mut score = base * w * share / df.sqrt();
            if d.reason.as_deref().is_some_and(|r| reasons.contains(r)) {
                score += 0.3 * w;
            }
            offer(Evidence {
                scorer: "message".into(),
                symptom: s.id.clone(),
                matched: if tm.full { "template" } else { "partial-template" }.into(),
                value: tm.text.clone(),
                score,
                span: Some(tm.span),
            });
        }
        if let Some(r) = &d.reason {
            if reasons.contains(r.as_str()) {
                let df = table.reason_df as f64;
                let (matched, base) = if d.text.is_some() {
                    ("event-reason", 0.5)
                } else if d.signal == SignalKind::StatusReason {
                    // A bare status word (Pending, Running, NotReady) says little on its own.
                    ("status-reason", if BARE_STATUS.contains(&r.as_str()) { 0.5 } else { 2.0 })
                } else {
                    ("event-reason", 1.2)
                };
                offer(Evidence { scorer: "message".into(), symptom: s.id.clone(), matched: matched.into(), value: r.clone(), score: base * w / df.sqrt(), span: None });
            }
        }
        if let Some(c) = d.code {
            let seen = match d.signal {
                SignalKind::ExitCode => sig.exit_codes.contains(&c),
                SignalKind::HttpStatus => sig.http_codes.iter().any(|&h| i64::from(h) == c),
                _ => false,
            };
            if seen {
                let df = table.code_df as f64;
                offer(Evidence { scorer: "message".into(), symptom: s.id.clone(), matched: d.signal.as_str().into(), value: c.to_string(), score: 1.5 * w / df.sqrt(), span: None });
            }
        }
        if d.signal == SignalKind::Metric {
            if let Some(name) = sig.metrics.iter().find(|n| d.text.as_deref().is_some_and(|t| t.contains(n.as_str())) || s.title.contains(n.as_str())) {
                offer(Evidence { scorer: "message".into(), symptom: s.id.clone(), matched: "metric".into(), value: name.clone(), score: 1.5 * w, span: None });
            }
        }
        if let Some(ev) = best {
            for fm in fms {
                let entry = per_fm.entry(fm.clone()).or_insert((0.0, Vec::new()));
                entry.1.push(ev.clone());
            }
        }
    }
    // A reason or code counts once per failure mode, however many of its symptoms name it,
    // and not at all when one of those symptoms' templates matched (the template says more).
    for (_, (score, evs)) in per_fm.iter_mut() {
        evs.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.symptom.cmp(&b.symptom)));
        let mut seen: BTreeSet<(String, String)> = BTreeSet::new();
        let templated: BTreeSet<String> = evs.iter().filter(|e| e.matched.ends_with("template")).map(|e| e.symptom.clone()).collect();
        // Two templates of one failure mode matching overlapping text are one piece of evidence.
        let mut taken: Vec<(usize, usize)> = Vec::new();
        evs.retain(|e| {
            if let Some((a, b)) = e.span {
                if taken.iter().any(|&(x, y)| a < y && x < b) {
                    return false;
                }
                taken.push((a, b));
                return true;
            }
            if e.matched.ends_with("template") {
                return true;
            }
            if e.matched == "event-reason" && !templated.is_empty() {
                let reason_of_templated = templated
                    .iter()
                    .filter_map(|id| kb.get(id))
                    .filter(|s| s.kind == Kind::Symptom)
                    .any(|s| s.symptom().and_then(|d| d.reason.as_deref()) == Some(e.value.as_str()));
                if reason_of_templated {
                    return false;
                }
            }
            seen.insert((e.matched.clone(), e.value.clone()))
        });
        *score = evs.iter().map(|e| e.score).sum();
    }
    per_fm
}

/// Runs a diagnosis. See the module doc for the steps.
///
/// # Errors
/// [`DiagnoseError::EmptyInput`] and [`DiagnoseError::TooLarge`].
pub fn diagnose(
    kb: &KnowledgeBase,
    index: &SearchIndex,
    m: &Matcher,
    input: &str,
    opts: DiagnoseOptions,
) -> Result<Diagnosis, DiagnoseError> {
    if input.trim().is_empty() {
        return Err(DiagnoseError::EmptyInput);
    }
    if input.len() > MAX_INPUT_BYTES {
        return Err(DiagnoseError::TooLarge { bytes: input.len(), limit: MAX_INPUT_BYTES });
    }
    let mut notices = Vec::new();
    // Steps 1-2: read the input and extract signals.
    let normalized = signals::normalize(input);
    let sig = signals::extract_indexed(input, &normalized, &m.vocab, &m.text.templates, &m.template_index);

    // Step 4 needs the version early: an option wins; else one unambiguous version in the input.
    let (version, version_source) = match opts.k8s_version {
        Some(v) => (Some(v), "option"),
        None if sig.versions.len() == 1 => match Version::parse(&sig.versions[0]) {
            Ok(v) => {
                notices.push(format!("using Kubernetes {v}, the version named in the input (pass --k8s-version to override)"));
                (Some(v), "input")
            }
            Err(_) => (None, "none"),
        },
        None => (None, "none"),
    };

    // Step 3: score. Each named scorer (module `scorers` below) turns the input and one
    // candidate into evidence lines; a candidate's score is the sum of its lines.
    let cx = InputContext::new(input);
    let direct_msgs = score_signals(kb, m, &sig, &normalized);
    let structured: BTreeSet<String> = direct_msgs.keys().cloned().collect();
    // Positions of the input's analyzer tokens that some alias has (by alias token id).
    let mut positions: Vec<Vec<usize>> = vec![Vec::new(); m.text.alias_vocab.len()];
    crate::search::for_each_token(input, 20_000, |i, t| {
        if let Some(id) = m.text.alias_vocab.position(t) {
            positions[id].push(i);
        }
    });
    let hits = index.search(input, Some(&[Kind::FailureMode]), 60).unwrap_or_default();
    // Per failure-mode ordinal: its BM25 hit (the first, as hits are best first) and its
    // message evidence.
    let mut bm25_at: Vec<Option<f32>> = vec![None; m.fm_ids.len()];
    for h in &hits {
        if let Some(slot) = m.ordinal(&h.id).and_then(|n| bm25_at.get_mut(n)) {
            slot.get_or_insert(h.score);
        }
    }
    let mut messages_at: Vec<Option<&(f64, Vec<Evidence>)>> = vec![None; m.fm_ids.len()];
    for (fm, msg) in &direct_msgs {
        if let Some(slot) = m.ordinal(fm).and_then(|n| messages_at.get_mut(n)) {
            *slot = Some(msg);
        }
    }
    let aliases_present = m.aliases_in(&normalized);
    let input_ev = scorers::ScoringInput {
        kb,
        m,
        sig: &sig,
        normalized: &normalized,
        cx: &cx,
        positions: &positions,
        version,
        messages: &direct_msgs,
        messages_at: &messages_at,
        bm25: &hits,
        bm25_at: &bm25_at,
        aliases_present: &aliases_present,
    };
    // The failure modes some direct scorer could have a line for (every other one would get
    // none), from the matcher's tables alone: entities are read only for the candidates that
    // got evidence, rows only for the failure modes reached.
    let direct: Vec<bool> = messages_at.iter().zip(&bm25_at).map(|(msg, bm25)| msg.is_some() || bm25.is_some()).collect();
    let reached = m.keys.reached(m.fm_ids.len(), &cx, &aliases_present, &positions, &direct);
    #[cfg(test)]
    let reached = if SCORE_EVERY_FAILURE_MODE.with(std::cell::Cell::get) { vec![true; m.fm_ids.len()] } else { reached };
    let mut lines = score_direct(&input_ev, reached.iter().enumerate().filter(|(_, &r)| r).map(|(n, _)| n));
    // What a hub's messages matched belongs to the hub: a cause's own copy of the same text,
    // reason or code (a shorter variant of the hub's message) does not tell it from its siblings.
    // A cause's own full template inside the hub's match (a specific x509 text inside the hub's
    // "failed calling webhook ... {detail}") is its own evidence; a partial match over the hub's
    // text, or the very same template, is not.
    // Compared by their literal parts, whatever the placeholders are called: "lookup {service}
    // on {server}" is the hub's "lookup {name} on {server}" under another name.
    let template_of = |id: &str| kb.get(id).and_then(|e| e.symptom()).and_then(|d| d.text.as_deref()).map(|t| signals::literal_parts(&signals::normalize(t)));
    for (hub, causes) in &m.hub_causes {
        let Some(hub_evs) = lines.get(hub) else { continue };
        let spans: Vec<(usize, usize)> = hub_evs.iter().filter(|e| e.scorer == "message").filter_map(|e| e.span).collect();
        let hub_templates: BTreeSet<Vec<String>> = hub_evs.iter().filter(|e| e.scorer == "message").filter_map(|e| template_of(&e.symptom)).collect();
        let values: BTreeSet<(String, String)> =
            hub_evs.iter().filter(|e| e.scorer == "message" && e.span.is_none()).map(|e| (e.matched.clone(), e.value.clone())).collect();
        if spans.is_empty() && values.is_empty() {
            continue;
        }
        for c in causes {
            if let Some(evs) = lines.get_mut(c) {
                evs.retain(|e| {
                    e.scorer != "message"
                        || match e.span {
                            Some((a, b)) => {
                                let overlaps = spans.iter().any(|&(x, y)| a < y && x < b);
                                let copy = e.matched == "partial-template" || template_of(&e.symptom).is_some_and(|t| hub_templates.contains(&t));
                                !(overlaps && copy)
                            }
                            None => !values.contains(&(e.matched.clone(), e.value.clone())),
                        }
                });
            }
        }
    }
    lines.retain(|_, evs| !evs.is_empty());
    // Propagation: a matched hub hands its evidence to its causes; other matched failure modes
    // raise their upstream causes a hop or two away.
    let direct_scores: BTreeMap<String, f64> = lines.iter().map(|(k, v)| (k.clone(), v.iter().map(|e| e.score).sum::<f64>())).collect();
    let propagated = scorers::propagate(kb, m, &direct_scores, &lines);
    for (fm, evs) in propagated {
        lines.entry(fm).or_default().extend(evs);
    }
    scorers::discount_unsupported_context(&mut lines);
    // Ruled out by the user: the last word, after everything else is summed.
    let mut scores: BTreeMap<String, f64> = BTreeMap::new();
    for (fm, evs) in lines.iter_mut() {
        let Some(n) = m.ordinal(fm) else { continue };
        let mut total: f64 = evs.iter().map(|e| e.score).sum();
        if let Some(r) = scorers::product_absent(&input_ev, n, total) {
            total += r.score;
            evs.push(r);
        }
        if let Some(r) = scorers::ruled_out(&input_ev, n, total) {
            total += r.score;
            evs.push(r);
        }
        scores.insert(fm.clone(), total);
    }

    // Step 4: version filter.
    let mut excluded = Vec::new();
    let mut ranked: Vec<(String, f64)> = Vec::new();
    for (fm, s) in &scores {
        let Some(applies) = m.ordinal(fm).and_then(|n| m.row(n)).map(|r| &r.applies) else { continue };
        if *s <= 0.05 {
            continue;
        }
        if let Some(v) = version {
            if !applies.contains(v) {
                let title = kb.get(fm).map(|e| e.title.clone()).unwrap_or_default();
                excluded.push((*s, Excluded { id: fm.clone(), title, applies: applies.describe() }));
                continue;
            }
        }
        ranked.push((fm.clone(), *s));
    }
    excluded.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.id.cmp(&b.1.id)));
    let mut excluded: Vec<Excluded> = excluded.into_iter().map(|(_, e)| e).collect();
    excluded.truncate(10);
    if let (Some(v), false) = (version, excluded.is_empty()) {
        notices.push(format!(
            "{} matching failure mode(s) do not apply to Kubernetes {v} and were left out: {}",
            excluded.len(),
            excluded.iter().map(|e| format!("{} ({})", e.id, e.applies)).collect::<Vec<_>>().join(", ")
        ));
    }
    if structured.is_empty() && !lines.values().flatten().any(|e| e.scorer == "context" || e.scorer == "alias") {
        notices.push(if ranked.is_empty() {
            "nothing in the input matches the knowledge graph: paste the exact error, the event lines or `kubectl describe` output".to_string()
        } else {
            "no machine-produced text was recognised; candidates are ranked by text relevance only (paste the exact error, event lines or `kubectl describe` output for a sharper answer)".to_string()
        });
    }

    // Ranked by score. Confidence is a property of each candidate's evidence, computed over the
    // whole ranking (never over the shown part, so `top` does not change it), and never above
    // the confidence of a candidate ranked higher.
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let field_total: f64 = ranked.iter().take(CONFIDENCE_FIELD).map(|(_, s)| s).sum::<f64>().max(1e-9);
    let mut rated: Vec<(String, f64, f64)> = Vec::with_capacity(ranked.len());
    let mut ceiling = 1.0f64;
    for (fm, s) in &ranked {
        let evs = lines.get(fm).map(Vec::as_slice).unwrap_or(&[]);
        // Never more confident than a candidate ranked above it.
        let c = confidence(*s, field_total, evs).min(ceiling);
        ceiling = c;
        rated.push((fm.clone(), *s, c));
    }

    // The first answer is a cause reached through a hub whose message the input holds: the hub
    // is what was observed and the honest fallback (it lists the other causes and the checks
    // that tell them apart), so it comes second. A hub reached only by a name or by words is not
    // observed and keeps its place.
    let observed = |hub: &str| lines.get(hub).is_some_and(|evs| evs.iter().any(|e| e.scorer == "message" && e.score > 0.0));
    if let Some(hub) = rated
        .first()
        .and_then(|(fm, _, _)| lines.get(fm))
        .and_then(|evs| evs.iter().find(|e| e.scorer == "hub"))
        .map(|e| e.symptom.clone())
        .filter(|h| observed(h))
    {
        if let Some(pos) = rated.iter().position(|(fm, _, _)| *fm == hub).filter(|&p| p > 1) {
            let h = rated.remove(pos);
            rated.insert(1, h);
            let mut ceiling = 1.0f64;
            for r in rated.iter_mut() {
                r.2 = r.2.min(ceiling);
                ceiling = r.2;
            }
        }
    }

    // Step 5: answer.
    let top = opts.top.max(1);
    let all_scores: BTreeMap<String, f64> = scores.clone();
    let mut candidates = Vec::new();
    for (i, (fm, s, conf)) in rated.iter().take(top).enumerate() {
        let Some(e) = kb.get(fm) else { continue };
        let evidence = lines.get(fm).cloned().unwrap_or_default();
        candidates.push(candidate(kb, m, e, i + 1, *conf, *s, evidence, version, &all_scores, &lines, &cx.names));
    }
    // A hub whose causes the input does not separate: say so, with the checks that tell them apart.
    if let Some(first) = candidates.first() {
        if first.level == "symptom" {
            let separated = first.causes.first().is_some_and(|c| c.separated);
            if !separated && first.causes.len() >= 2 {
                notices.push(format!(
                    "nothing in the input separates the causes of `{}`: they are listed in likely order with the check that tells each apart; add what you know (settings, platform, what changed, what you ruled out) for a sharper answer",
                    first.id
                ));
            }
        }
    }
    let distinguishing_checks = mark_distinguishing(&mut candidates);
    let input_echo: String = input.chars().take(ECHO_CHARS).collect();
    Ok(Diagnosis {
        input: input_echo,
        input_bytes: input.len(),
        k8s_version: version.map(|v| v.to_string()),
        k8s_version_source: version_source.into(),
        signals: sig,
        names: cx.names.clone(),
        candidates,
        distinguishing_checks,
        excluded,
        notices,
    })
}

/// How many of the best-scored candidates the confidence's share is taken over, whatever
/// `--top` shows.
const CONFIDENCE_FIELD: usize = 5;

/// The confidence of a candidate with score `s` among the best [`CONFIDENCE_FIELD`] scores
/// summing to `field_total`, given its evidence lines: strength of the evidence (saturating in
/// the score) times its share of the field, lowered when nothing machine-produced, no alias and
/// no context supports it, and when it was only reached through a hub (or an effect) without
/// evidence of its own. In [0, 1], rounded to three decimals.
fn confidence(s: f64, field_total: f64, evs: &[Evidence]) -> f64 {
    let strength = 1.0 - (-s / 3.0).exp();
    let share = (s / field_total).min(1.0);
    let mut c = strength.powf(0.7) * (0.5 + 0.5 * share);
    let own = evs.iter().any(|e| matches!(e.scorer.as_str(), "message" | "alias" | "context"));
    let inherited = evs.iter().any(|e| matches!(e.scorer.as_str(), "hub" | "upstream"));
    if !own {
        c *= if inherited { 0.7 } else { 0.6 };
    }
    (c * 1000.0).round() / 1000.0
}

fn check_out(kb: &KnowledgeBase, id: &str, names: &Names) -> Option<CheckOut> {
    let c = kb.get(id)?;
    match &c.data {
        KindData::Check { command, look_for, rules_out, .. } => Some(CheckOut {
            id: c.id.clone(),
            title: c.title.clone(),
            command: command.as_deref().map(|t| names.fill(t)),
            look_for: look_for.clone(),
            rules_out: rules_out.clone(),
            distinguishes: Vec::new(),
        }),
        _ => None,
    }
}

/// The causes of hub `e` for this input: by score (hub share included), then the hub's order.
fn causes_out(kb: &KnowledgeBase, m: &Matcher, e: &Entity, lines: &BTreeMap<String, Vec<Evidence>>, scores: &BTreeMap<String, f64>, version: Option<Version>, names: &Names) -> Vec<CauseOut> {
    let Some(causes) = m.hub_causes.get(&e.id) else { return Vec::new() };
    let mut out: Vec<(usize, CauseOut)> = causes
        .iter()
        .enumerate()
        .filter_map(|(n, c)| {
            let ce = kb.get(c)?;
            if version.is_some_and(|v| !ce.applies.contains(v)) {
                return None;
            }
            let separated = lines.get(c).is_some_and(|evs| evs.iter().any(|x| matches!(x.scorer.as_str(), "message" | "alias" | "context")));
            let own_check = ce.failure_mode().and_then(|d| {
                let shared = |k: &String| m.hub_checks.get(&e.id).is_some_and(|hc| hc.contains(k));
                d.checks.iter().find(|k| !shared(k)).or(d.checks.first()).cloned()
            });
            Some((
                n,
                CauseOut {
                    id: c.clone(),
                    title: ce.title.clone(),
                    score: (scores.get(c).copied().unwrap_or(0.0) * 1000.0).round() / 1000.0,
                    separated,
                    check: own_check.and_then(|k| check_out(kb, &k, names)),
                },
            ))
        })
        .collect();
    out.sort_by(|a, b| b.1.score.total_cmp(&a.1.score).then_with(|| a.0.cmp(&b.0)));
    out.into_iter().map(|(_, c)| c).collect()
}

#[allow(clippy::too_many_arguments)]
fn candidate(
    kb: &KnowledgeBase,
    m: &Matcher,
    e: &Entity,
    rank: usize,
    confidence: f64,
    score: f64,
    mut evidence: Vec<Evidence>,
    version: Option<Version>,
    scores: &BTreeMap<String, f64>,
    lines: &BTreeMap<String, Vec<Evidence>>,
    names: &Names,
) -> Candidate {
    let fm = e.failure_mode().cloned().unwrap_or_default();
    evidence.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.scorer.cmp(&b.scorer)).then_with(|| a.symptom.cmp(&b.symptom)));
    let loop_ = fm.loops.first().map(|l| eref(kb, l));
    // The main component: the first one the failure mode names (the loop's owner when it names it).
    let loop_owner = fm.loops.first().and_then(|l| match kb.get(l).map(|l| &l.data) {
        Some(KindData::Loop { part_of, .. }) => Some(part_of.clone()),
        _ => None,
    });
    let component = match &loop_owner {
        Some(o) if fm.components.contains(o) || fm.components.is_empty() => Some(o.clone()),
        _ => fm.components.first().cloned(),
    }
    .map(|c| eref(kb, &c));
    let hub = evidence.iter().find(|ev| ev.scorer == "hub").map(|ev| ev.symptom.clone());
    let mut chain = Vec::new();
    // What was observed: a message of its own, else the hub's message.
    let observed = evidence
        .iter()
        .find(|ev| ev.scorer == "message")
        .map(|ev| ev.symptom.clone())
        .or_else(|| hub.as_ref().and_then(|h| lines.get(h)).and_then(|evs| evs.iter().find(|ev| ev.scorer == "message")).map(|ev| ev.symptom.clone()));
    if let Some(o) = observed {
        let r = eref(kb, &o);
        chain.push(ChainStep { id: r.id, kind: r.kind, title: r.title, relation: "observed".into() });
    }
    if let Some(h) = &hub {
        let r = eref(kb, h);
        chain.push(ChainStep { id: r.id, kind: r.kind, title: r.title, relation: "manifestsAs".into() });
    }
    chain.push(ChainStep {
        id: e.id.clone(),
        kind: "failure-mode".into(),
        title: e.title.clone(),
        relation: if hub.is_some() { "causedBy" } else { "manifestsAs" }.into(),
    });
    if let Some(l) = &loop_ {
        chain.push(ChainStep { id: l.id.clone(), kind: l.kind.clone(), title: l.title.clone(), relation: "inLoop".into() });
    }
    if let Some(c) = &component {
        let relation = if loop_owner.as_deref() == Some(c.id.as_str()) { "partOf" } else { "involves" };
        chain.push(ChainStep { id: c.id.clone(), kind: c.kind.clone(), title: c.title.clone(), relation: relation.into() });
    }
    // Upstream causes, one then two hops away: the ones the input supports first, at most
    // three per hop, so the chain stays a readable path rather than a list of every possibility.
    // A hub lists its causes apart (`causes`), so its chain stops at its frame.
    let mut seen = BTreeSet::new();
    let mut frontier: Vec<String> = if fm.level == Level::Symptom { Vec::new() } else { m.causes_of(&e.id).to_vec() };
    for hop in 0..2 {
        frontier.retain(|c| c != &e.id && !seen.contains(c));
        frontier.sort_by(|a, b| {
            let sa = scores.get(a).copied().unwrap_or(0.0);
            let sb = scores.get(b).copied().unwrap_or(0.0);
            sb.total_cmp(&sa).then_with(|| a.cmp(b))
        });
        frontier.dedup();
        frontier.truncate(if hop == 0 { 3 } else { 2 });
        let mut next = Vec::new();
        for c in frontier {
            if seen.insert(c.clone()) {
                let r = eref(kb, &c);
                chain.push(ChainStep { id: r.id, kind: r.kind, title: r.title, relation: "causedBy".into() });
                next.extend(m.causes_of(&c).iter().cloned());
            }
        }
        frontier = next;
    }
    let checks = fm.checks.iter().filter_map(|c| check_out(kb, c, names)).collect();
    let fixes = fixes_of(kb, &fm);
    let causes = if fm.level == Level::Symptom { causes_out(kb, m, e, lines, scores, version, names) } else { Vec::new() };
    Candidate {
        rank,
        id: e.id.clone(),
        kind: "failure-mode".into(),
        title: e.title.clone(),
        area: fm.area.clone(),
        level: fm.level.as_str().into(),
        hub,
        causes,
        confidence,
        score: (score * 1000.0).round() / 1000.0,
        component,
        loop_,
        chain,
        evidence,
        summary: e.summary(400),
        checks,
        fixes,
        references: e.references.clone(),
        keps: e.keps.clone(),
        feature_gates: e.feature_gates.clone(),
        applies: Applies::new(e.applies, version),
    }
}

/// Marks, among the top three candidates, the checks each has that the others lack.
fn mark_distinguishing(cands: &mut [Candidate]) -> Vec<DistinguishingCheck> {
    let n = cands.len().min(3);
    if n < 2 {
        return Vec::new();
    }
    let sets: Vec<BTreeSet<String>> = cands[..n].iter().map(|c| c.checks.iter().map(|k| k.id.clone()).collect()).collect();
    let ids: Vec<String> = cands[..n].iter().map(|c| c.id.clone()).collect();
    let mut out = Vec::new();
    for (i, c) in cands[..n].iter_mut().enumerate() {
        let others: Vec<String> = (0..n).filter(|&j| j != i).map(|j| ids[j].clone()).collect();
        for k in &mut c.checks {
            let unique = (0..n).filter(|&j| j != i).all(|j| !sets[j].contains(&k.id));
            if unique {
                k.distinguishes = others.clone();
            }
        }
        if let Some(k) = c.checks.iter().find(|k| !k.distinguishes.is_empty()) {
            out.push(DistinguishingCheck {
                check: k.id.clone(),
                title: k.title.clone(),
                command: k.command.clone(),
                look_for: k.look_for.clone(),
                confirms: c.id.clone(),
                versus: others,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::signals::literal_parts;

    /// The hub-message dedupe compares templates by their literal parts.
    #[test]
    fn placeholders_compare_unnamed() {
        assert_eq!(literal_parts("lookup {service} on {server}: no such host"), literal_parts("lookup {name} on {server}: no such host"));
        assert_ne!(literal_parts("lookup {name}.svc on {server}"), literal_parts("lookup {name} on {server}"));
    }
}

#[cfg(test)]
mod automata_tests {
    //! The one-pass automata (template required words, aliases) must find exactly what trying
    //! every template and every alias finds, on the built-in knowledge and real inputs.
    use crate::signals;
    use crate::Engine;

    fn inputs() -> Vec<String> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut out = Vec::new();
        for dir in ["evals/cases", "evals/realworld"] {
            let Ok(entries) = std::fs::read_dir(root.join(dir)) else { continue };
            for e in entries.flatten() {
                if e.path().extension().is_some_and(|x| x == "jsonl") {
                    for line in std::fs::read_to_string(e.path()).unwrap_or_default().lines() {
                        let v: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
                        for k in ["input", "symptom"] {
                            if let Some(s) = v.get(k).and_then(|s| s.as_str()) {
                                out.push(s.to_string());
                            }
                        }
                    }
                }
            }
        }
        out
    }

    #[test]
    fn automata_find_what_one_by_one_search_finds() {
        let (engine, _) = Engine::from_sources(crate::knowledge::sources_from(kubewhy_knowledge::files())).expect("built-in knowledge loads");
        let m = &engine.matcher;
        let inputs = inputs();
        assert!(inputs.len() > 500, "expected the gold and ledger inputs, found {}", inputs.len());
        let mut templates_seen = 0;
        for input in &inputs {
            let normalized = signals::normalize(input);
            let indexed = signals::extract_indexed(input, &normalized, &m.vocab, &m.text.templates, &m.template_index);
            let plain = signals::extract(input, &normalized, &m.vocab, &m.text.templates);
            assert_eq!(indexed.templates, plain.templates, "templates differ for input {input:?}");
            templates_seen += plain.templates.len();
            let present = m.aliases_in(&normalized);
            for (id, alias) in m.text.alias_patterns.iter().enumerate() {
                assert_eq!(present[id], normalized.contains(alias), "alias {alias:?} in {input:?}");
            }
        }
        assert!(templates_seen > 500, "the inputs matched only {templates_seen} templates");
    }

    /// Scoring only the failure modes an input reaches (`CandidateKeys`) gives the very
    /// diagnosis that scoring every failure mode gives, on every gold and ledger input, with
    /// and without a version, over the parsed and the compiled knowledge alike.
    #[test]
    fn scoring_the_reached_failure_modes_changes_no_answer() {
        let (parsed, _) = Engine::from_sources(crate::knowledge::sources_from(kubewhy_knowledge::files())).expect("built-in knowledge loads");
        let compiled = Engine::from_compiled(parsed.compile().expect("compiles")).expect("loads");
        let inputs = inputs();
        for engine in [&parsed, &compiled] {
            for input in &inputs {
                for v in [None, Some(crate::model::Version { major: 1, minor: 30 })] {
                    let opts = super::DiagnoseOptions { k8s_version: v, ..Default::default() };
                    let pruned = serde_json::to_string(&engine.diagnose(input, opts).expect("diagnoses")).expect("serialises");
                    super::SCORE_EVERY_FAILURE_MODE.with(|c| c.set(true));
                    let every = serde_json::to_string(&engine.diagnose(input, opts).expect("diagnoses")).expect("serialises");
                    super::SCORE_EVERY_FAILURE_MODE.with(|c| c.set(false));
                    assert_eq!(pruned, every, "input {input:?}, version {v:?}");
                }
            }
        }
        // The pruning prunes: a one-line input decodes few rows of a fresh compiled engine.
        let one = Engine::from_compiled(parsed.compile().expect("compiles")).expect("loads");
        one.diagnose("0/3 nodes are available: 3 Insufficient cpu.", Default::default()).expect("diagnoses");
        let (d, n) = one.matcher.rows_decoded();
        assert!(d * 5 < n, "one diagnosis decoded {d} of {n} failure-mode rows");
    }
}
