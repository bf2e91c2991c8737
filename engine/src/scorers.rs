//! The named scorers of a diagnosis. Each is a function from the input (its signals and its
//! [`InputContext`]) and one candidate failure mode to evidence lines; a candidate's score is the
//! sum of its lines, and the lines appear in the answer, so a reader sees why it ranked where it
//! did.
//!
//! Direct scorers ([`DIRECT`]) look only at the input and the candidate:
//! - `message`: the failure mode's symptoms (templates, reasons, codes, metrics) found in the
//!   input, each weighed down by how many failure modes share it;
//! - `alias`: a name people use for it, verbatim (generic ones weigh less) or in other words;
//! - `relevance`: BM25 text relevance, normalised to the best hit;
//! - `context`: its context cues (settings and their values, phrases, what happened before,
//!   platform, timings, exit codes, ports); a setting the input gives another value counts
//!   against it;
//! - `version`: the input's version lies in the candidate's bounded version range.
//!
//! Then [`propagate`]: a matched hub hands its evidence to its causes (most common first, so
//! that without context the hub stays first and its causes follow in likely order; with
//! context a cause passes its hub); other matched failure modes raise their upstream causes a
//! hop or two away, never past themselves. Last, [`product_absent`]: a cause that happens only
//! with products the input does not name ranks lower; and [`ruled_out`]: what the user ruled
//! out lowers the candidate.

use crate::context::InputContext;
use crate::diagnose::{Evidence, Matcher};
use crate::knowledge::KnowledgeBase;
use crate::model::{CueKind, Level, Version};
use crate::search::Hit as SearchHit;
use crate::signals::{self, Signals};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// What every scorer gets: the knowledge, the matching tables and the read input.
pub struct ScoringInput<'a> {
    /// The knowledge.
    pub kb: &'a KnowledgeBase,
    /// The matching tables.
    pub m: &'a Matcher,
    /// The extracted signals.
    pub sig: &'a Signals,
    /// The normalised input.
    pub normalized: &'a str,
    /// What the input says besides its messages.
    pub cx: &'a InputContext,
    /// Positions of the input's analyzer tokens (stemmed, stop words out) that aliases have, by
    /// alias token id ([`Matcher::alias_vocab`]), for aliases in other words.
    pub positions: &'a [Vec<usize>],
    /// The version in force (option or input).
    pub version: Option<Version>,
    /// Message evidence per failure mode (computed once for all symptoms).
    pub messages: &'a BTreeMap<String, (f64, Vec<Evidence>)>,
    /// `messages` by failure-mode ordinal ([`Matcher::fm_ids`]).
    pub messages_at: &'a [Option<&'a (f64, Vec<Evidence>)>],
    /// BM25 hits over failure modes, best first.
    pub bm25: &'a [SearchHit],
    /// Per failure-mode ordinal, the score of its first BM25 hit.
    pub bm25_at: &'a [Option<f32>],
    /// Per alias pattern id of the matcher, whether that normalised alias occurs in the
    /// normalised input (found once for all failure modes).
    pub aliases_present: &'a [bool],
}

/// A direct scorer: the input and the candidate's ordinal ([`Matcher::fm_ids`]). Direct
/// scorers read the candidate from the matcher's per-ordinal tables, not from its entity, so
/// scoring every failure mode decodes none (see [`crate::compiled`]).
pub type Scorer = fn(&ScoringInput<'_>, usize) -> Vec<Evidence>;

/// The direct scorers, by name, in the order their lines are shown.
pub const DIRECT: [(&str, Scorer); 5] = [("message", message), ("alias", alias), ("context", context), ("version", version), ("relevance", relevance)];

fn line(scorer: &str, about: &str, matched: &str, value: impl Into<String>, score: f64) -> Evidence {
    Evidence { scorer: scorer.into(), symptom: about.into(), matched: matched.into(), value: value.into(), score, span: None }
}

/// `message`: the candidate's symptoms seen in the input.
pub fn message(i: &ScoringInput<'_>, n: usize) -> Vec<Evidence> {
    i.message_at(n).map(|(_, evs)| evs.clone()).unwrap_or_default()
}

/// `alias`: a name people use for the candidate, verbatim in the input (weighed by length and
/// by how many failure modes share the name; one-word names weigh less), else all its words
/// close together. Nothing when one of the candidate's message templates matched: the machine
/// text says more than the user's name for it.
pub fn alias(i: &ScoringInput<'_>, n: usize) -> Vec<Evidence> {
    let id = i.fm_id(n);
    if i.message_at(n).is_some_and(|(_, evs)| evs.iter().any(|e| e.matched.ends_with("template"))) {
        return Vec::new();
    }
    let Some(row) = i.m.row(n) else { return Vec::new() };
    let mut best: Option<(f64, &str)> = None;
    {
        for &id in &row.alias_ids {
            if !i.aliases_present.get(id).copied().unwrap_or(false) {
                continue;
            }
            let Some(a) = i.m.text.alias_patterns.get(id) else { continue };
            let df = i.m.text.alias_pattern_df[id].max(1) as f64;
            let one_word = !a.contains(' ');
            let mut s = 1.2 * (0.5 + 0.5 * (a.len() as f64 / 25.0).min(1.0)) / df.sqrt();
            if one_word {
                s *= 0.6;
            }
            if best.is_none_or(|(b, _)| s > b) {
                best = Some((s, a));
            }
        }
    }
    if let Some((s, a)) = best {
        return vec![line("alias", id, "alias", a, s)];
    }
    // In other words: every word of an alias (stemmed) within a few words of each other.
    let mut best: Option<(f64, &str)> = None;
    for (alias, toks) in &row.alias_tokens {
        let Some(first) = i.m_positions(toks[0]) else { continue };
        let window = 3 * toks.len() + 2;
        let found = first.iter().take(500).any(|&p| {
            toks[1..].iter().all(|&t| i.m_positions(t).is_some_and(|ps| crate::context::nearest_within(ps, p, window).is_some()))
        });
        if found {
            let s = 0.25 * (toks.len() as f64 / 4.0).min(1.0);
            if best.is_none_or(|(b, _)| s > b) {
                best = Some((s, alias.as_str()));
            }
        }
    }
    best.map(|(s, a)| vec![line("alias", id, "alias-words", a, s)]).unwrap_or_default()
}

impl ScoringInput<'_> {
    /// Positions of an alias token (by id) in the input; `None` when it does not occur.
    fn m_positions(&self, token: usize) -> Option<&[usize]> {
        self.positions.get(token).map(Vec::as_slice).filter(|ps| !ps.is_empty())
    }

    /// The id of the failure mode with ordinal `n` (empty past the table).
    fn fm_id(&self, n: usize) -> &str {
        self.m.fm_ids.get(n).unwrap_or("")
    }

    /// The message evidence of the failure mode with ordinal `n`.
    fn message_at(&self, n: usize) -> Option<&(f64, Vec<Evidence>)> {
        self.messages_at.get(n).copied().flatten()
    }
}

/// Score of one matched cue before its weight, by kind.
fn cue_base(kind: &CueKind) -> f64 {
    match kind {
        CueKind::Setting { value: Some(_), .. } => 1.4,
        CueKind::Setting { value: None, .. } => 0.5,
        CueKind::Phrase { .. } | CueKind::History { .. } | CueKind::Timing { .. } => 1.0,
        CueKind::ExitCode { .. } => 0.9,
        CueKind::Port { .. } => 0.7,
        CueKind::Platform { .. } => 0.6,
        CueKind::Product { .. } => 0.0,
    }
}

/// `context`: the candidate's context cues found in the input. A phrase the input negates
/// ("the secret does not exist" for "secret exists") does not count; a one-word phrase counts
/// half; a setting the input gives another value (`imagePullPolicy: Always` for a cue on
/// `IfNotPresent`) counts against the candidate (`setting-contradicted`).
pub fn context(i: &ScoringInput<'_>, n: usize) -> Vec<Evidence> {
    let Some(row) = i.m.row(n) else { return Vec::new() };
    let (cues, prepared) = (&row.context, &row.cue_words);
    let id = i.fm_id(n);
    let mut out = Vec::new();
    for (n, cue) in cues.iter().enumerate() {
        let base = cue_base(&cue.kind) * cue.weight;
        let words = prepared.get(n).and_then(Option::as_ref);
        let (matched, value, score) = match &cue.kind {
            CueKind::Phrase { text } | CueKind::History { text } => match phrase_in(i, text, words) {
                Some(p) if !p.negated => {
                    let kind = if matches!(cue.kind, CueKind::History { .. }) { "history" } else { "phrase" };
                    (kind, text.clone(), if p.words <= 1 { base * 0.5 } else { base })
                }
                _ => continue,
            },
            CueKind::Setting { field, value } => match words.map_or_else(|| i.cx.setting(field, value.as_deref()), |s| i.cx.setting_spelled(s, value.as_deref())) {
                Some(true) => ("setting", cue.describe().trim_start_matches("setting ").to_string(), base),
                Some(false) => {
                    out.push(line("setting-contradicted", id, "setting", format!("{field} is not {}", value.as_deref().unwrap_or("")), -0.6 * cue.weight));
                    continue;
                }
                None => continue,
            },
            CueKind::Platform { text } => {
                if i.cx.platforms.contains(text.as_str()) {
                    ("platform", text.clone(), base)
                } else {
                    continue;
                }
            }
            // Naming a product does not pick one of its causes over another: a product cue
            // only spares its cause the `product-absent` line.
            CueKind::Product { .. } => continue,
            CueKind::Timing { seconds } => match i.cx.duration_near(*seconds) {
                Some(d) => ("timing", format!("{d}s"), base),
                None => continue,
            },
            CueKind::ExitCode { code } => {
                if i.cx.exit_codes.contains(code) || i.sig.exit_codes.contains(code) {
                    ("exit-code", code.to_string(), base)
                } else {
                    continue;
                }
            }
            CueKind::Port { code } => {
                if i.cx.ports.contains(code) {
                    ("port", code.to_string(), base)
                } else {
                    continue;
                }
            }
        };
        out.push(line("context", id, matched, value, score));
    }
    out
}

/// `version`: the input's version lies in the candidate's bounded range (a behaviour of some
/// releases only). Unbounded candidates get nothing; out-of-range ones are left out later.
pub fn version(i: &ScoringInput<'_>, n: usize) -> Vec<Evidence> {
    let (Some(v), Some(applies)) = (i.version, i.m.row(n).map(|r| &r.applies)) else { return Vec::new() };
    if (applies.since.is_none() && applies.until.is_none()) || !applies.contains(v) {
        return Vec::new();
    }
    // Only a candidate something else in the input already points to (one of its messages, or
    // one of its context cues matched): a version alone picks nothing, and neither does a cue
    // list that matched nothing.
    if i.message_at(n).is_none() && !context(i, n).iter().any(|e| e.score > 0.0) {
        return Vec::new();
    }
    vec![line("version", i.fm_id(n), "version", format!("{v} in {}", applies.describe()), 0.3)]
}

/// `relevance`: BM25 text relevance over titles, aliases, symptom texts and bodies,
/// normalised to the best hit (at most 1.0).
pub fn relevance(i: &ScoringInput<'_>, n: usize) -> Vec<Evidence> {
    let max = i.bm25.first().map(|h| h.score).unwrap_or(0.0);
    if max <= 0.0 {
        return Vec::new();
    }
    let factor = 1.0;
    i.bm25_at
        .get(n)
        .copied()
        .flatten()
        .map(|score| vec![line("relevance", i.fm_id(n), "bm25", format!("{:.2}", score / max), factor * f64::from(score / max))])
        .unwrap_or_default()
}

/// Share of a hub's evidence its first cause inherits; later causes a little less each
/// (`HUB_ORDER_STEP` per place, at most five places), so the hub's order is the order of
/// causes when nothing else separates them.
const HUB_SHARE: f64 = 0.8;
const HUB_ORDER_STEP: f64 = 0.03;

/// Propagation over the graph, from the direct scores: `hub` lines for the causes of a matched
/// hub, `upstream` lines for the upstream causes (one hop 0.3, two hops 0.1 of the effect's
/// score) of any other matched failure mode, capped so that such a cause stays below 90 % of
/// the effect unless its own evidence puts it higher. Relevance alone does not propagate.
pub fn propagate(kb: &KnowledgeBase, m: &Matcher, direct: &BTreeMap<String, f64>, lines: &BTreeMap<String, Vec<Evidence>>) -> BTreeMap<String, Vec<Evidence>> {
    let strength = |fm: &str| -> f64 {
        lines.get(fm).map(|evs| evs.iter().filter(|e| e.scorer != "relevance").map(|e| e.score).sum::<f64>()).unwrap_or(0.0).max(0.0)
    };
    let mut out: BTreeMap<String, Vec<Evidence>> = BTreeMap::new();
    // Hubs.
    let mut best_hub: BTreeMap<&String, (f64, &String)> = BTreeMap::new();
    for (hub, causes) in &m.hub_causes {
        let hs = strength(hub);
        if hs <= 0.0 {
            continue;
        }
        for (n, c) in causes.iter().enumerate() {
            let inherited = HUB_SHARE * hs * (1.0 - HUB_ORDER_STEP * n.min(5) as f64);
            if best_hub.get(c).is_none_or(|(b, _)| inherited > *b) {
                best_hub.insert(c, (inherited, hub));
            }
        }
    }
    // A hub hands a line to each of its causes: its title is looked up once.
    let mut titles: BTreeMap<&String, String> = BTreeMap::new();
    for (c, (score, hub)) in best_hub {
        let title = titles.entry(hub).or_insert_with(|| kb.get(hub).map(|e| e.title.clone()).unwrap_or_default()).clone();
        out.entry(c.clone()).or_default().push(line("hub", hub, "hub", title, score));
    }
    // Other causedBy chains.
    let mut up: BTreeMap<&String, (f64, f64, &String)> = BTreeMap::new(); // cause -> (raise, cap, from)
    for (fm, _) in direct.iter() {
        let s = strength(fm);
        if s <= 0.0 {
            continue;
        }
        let hub_of: BTreeSet<&String> = m.hub_causes.get(fm).map(|v| v.iter().collect()).unwrap_or_default();
        let mut frontier: BTreeSet<&String> = m.causes_of(fm).iter().collect();
        for (hop, factor) in [(1, 0.3), (2, 0.1)] {
            if hop == 2 {
                frontier = frontier.iter().flat_map(|c| m.causes_of(c)).collect();
            }
            for &c in &frontier {
                if c == fm || (hop == 1 && hub_of.contains(c)) {
                    continue;
                }
                let raise = factor * s;
                if up.get(c).is_none_or(|(r, _, _)| raise > *r) {
                    up.insert(c, (raise, 0.9 * s, fm));
                }
            }
        }
    }
    for (c, (raise, cap, from)) in up {
        let own = direct.get(c).copied().unwrap_or(0.0) + out.get(c).map(|v| v.iter().map(|e| e.score).sum::<f64>()).unwrap_or(0.0);
        let room = if own >= cap { 0.0 } else { (cap - own).min(raise) };
        if room > 0.0 {
            let title = kb.get(from).map(|e| e.title.clone()).unwrap_or_default();
            out.entry(c.clone()).or_default().push(line("upstream", from, "caused-by", title, room));
        }
    }
    out
}

/// Share of its weight a context cue keeps when nothing else in the input supports the
/// candidate (no message, alias, hub or upstream evidence; text relevance does not count):
/// context decides among candidates the input points to, it does not pick one
/// out of the whole graph by itself.
pub const UNSUPPORTED_CONTEXT: f64 = 0.35;

/// Scales the `context` lines of every candidate without other support by
/// [`UNSUPPORTED_CONTEXT`] (see there).
pub fn discount_unsupported_context(lines: &mut BTreeMap<String, Vec<Evidence>>) {
    for evs in lines.values_mut() {
        let supported = evs.iter().any(|e| matches!(e.scorer.as_str(), "message" | "alias" | "hub" | "upstream") && e.score > 0.0);
        if !supported {
            for e in evs.iter_mut().filter(|e| e.scorer == "context") {
                e.score *= UNSUPPORTED_CONTEXT;
            }
        }
    }
}

/// Whether the input names a product: its name as a phrase (not negated), or the usual names
/// of the platform with that slug.
/// `words`: the phrase words of `text` when the matcher has them.
fn product_named(i: &ScoringInput<'_>, text: &str, words: Option<&Vec<String>>) -> bool {
    if crate::model::PLATFORMS.iter().any(|(slug, _)| *slug == text) {
        // A platform slug ("kind") is also an everyday word: only its usual names count.
        return i.cx.platforms.contains(text);
    }
    phrase_in(i, text, words).is_some_and(|m| !m.negated)
}

/// Where the phrase `text` occurs in the input, from its words as the matcher prepared them
/// (`words`), or split now when the matcher has none for it.
fn phrase_in(i: &ScoringInput<'_>, text: &str, words: Option<&Vec<String>>) -> Option<crate::context::PhraseMatch> {
    match words {
        Some(w) => i.cx.phrase_of_words(w),
        None => i.cx.phrase(text),
    }
}

/// Share of its score a cause keeps when it happens only with certain products (its `product`
/// cues) and the input names none of them: most users with such a cause say which product they
/// run ("k3s", "Karpenter", "helm upgrade"), so a product-specific cause found only by the words
/// it shares with a general one ranks below that general one.
pub const PRODUCT_ABSENT: f64 = 0.6;

/// `product-absent`: the candidate has `product` cues, the input names none of them and holds
/// none of the candidate's own messages.
/// Returns a line worth minus `1 - PRODUCT_ABSENT` of the candidate's score so far.
/// `n`: the candidate's ordinal ([`Matcher::fm_ids`]).
pub fn product_absent(i: &ScoringInput<'_>, n: usize, total: f64) -> Option<Evidence> {
    let (id, row) = (i.m.fm_ids.get(n)?, i.m.row(n)?);
    let (cues, prepared) = (&row.context, &row.cue_words);
    if total <= 0.0 {
        return None;
    }
    // Its own machine text in the input shows the product is there.
    if i.message_at(n).is_some_and(|(score, _)| *score > 0.0) {
        return None;
    }
    let products: Vec<(&str, Option<&Vec<String>>)> = cues
        .iter()
        .enumerate()
        .filter_map(|(n, c)| if let CueKind::Product { text } = &c.kind { Some((text.as_str(), prepared.get(n).and_then(Option::as_ref))) } else { None })
        .collect();
    if products.is_empty() || products.iter().any(|(p, w)| product_named(i, p, *w)) {
        return None;
    }
    let products: Vec<&str> = products.into_iter().map(|(p, _)| p).collect();
    Some(line("product-absent", id, "product", products.join(", "), -(1.0 - PRODUCT_ABSENT) * total))
}

/// `ruled-out`: the user said something the candidate's `ruled_out_by` lists (and did not
/// negate it). Returns a line worth minus 70 % of the candidate's score so far.
/// `n`: the candidate's ordinal ([`Matcher::fm_ids`]).
pub fn ruled_out(i: &ScoringInput<'_>, n: usize, total: f64) -> Option<Evidence> {
    let (id, row) = (i.m.fm_ids.get(n)?, i.m.row(n)?);
    let (phrases, words) = (&row.ruled_out, &row.ruled_out_words);
    if total <= 0.0 {
        return None;
    }
    let said = phrases
        .iter()
        .enumerate()
        .find(|(n, p)| phrase_in(i, p, words.get(*n)).is_some_and(|m| !m.negated && m.words >= 2))
        .map(|(_, p)| p)?;
    Some(line("ruled-out", id, "ruled-out", said.clone(), -0.7 * total))
}

/// The hubs (symptom-level failure modes) with their causes in the hub's order.
pub fn hub_causes(kb: &KnowledgeBase) -> BTreeMap<String, Vec<String>> {
    let leads_to = crate::knowledge::leads_to_index(kb);
    kb.of_kind(crate::model::Kind::FailureMode)
        .filter(|e| e.failure_mode().is_some_and(|d| d.level == Level::Symptom))
        .map(|e| (e.id.clone(), crate::knowledge::causes_of_hub_with(kb, e, leads_to.get(e.id.as_str()).map_or(&[][..], Vec::as_slice))))
        .collect()
}

/// For each normalised alias, how many failure modes have aliases holding all of its words
/// (so a generic name such as "stuck terminating", which "pod stuck terminating" and "pvc stuck
/// terminating" also contain, counts as shared and weighs less).
pub fn alias_df(kb: &KnowledgeBase) -> HashMap<String, usize> {
    // Failure modes by ordinal; per word the ordinals (ascending, distinct) of the failure modes
    // with an alias holding it. Intersections of sorted lists, not of sets of ids: this runs at
    // every start-up.
    let normalized: Vec<(u32, String)> = kb
        .of_kind(crate::model::Kind::FailureMode)
        .enumerate()
        .flat_map(|(n, fm)| fm.aliases.iter().map(move |a| (n as u32, signals::normalize(a))))
        .collect();
    let mut by_word: HashMap<&str, Vec<u32>> = HashMap::new();
    for (n, a) in &normalized {
        for w in a.split(' ').filter(|w| !w.is_empty()) {
            let fms = by_word.entry(w).or_default();
            if fms.last() != Some(n) {
                fms.push(*n);
            }
        }
    }
    let mut df: HashMap<String, usize> = HashMap::with_capacity(normalized.len());
    for (_, a) in &normalized {
        if df.contains_key(a.as_str()) {
            continue;
        }
        let mut sets: Vec<&Vec<u32>> = a.split(' ').filter(|w| !w.is_empty()).filter_map(|w| by_word.get(w)).collect();
        if sets.is_empty() {
            continue;
        }
        sets.sort_by_key(|s| s.len());
        let mut common: Vec<u32> = sets[0].clone();
        for s in &sets[1..] {
            common.retain(|x| s.binary_search(x).is_ok());
        }
        df.insert(a.clone(), common.len().max(1));
    }
    df
}

#[cfg(test)]
mod tests {
    //! Each scorer through one `check(input, expected_top)` helper over a small knowledge base
    //! written for these tests: a hub with three causes, and an unrelated failure mode. In a
    //! graph this small the hub alone matches the input's words (BM25 relevance 1.0 against 0 for
    //! its causes), so the causes' cues carry weight 2.0, as a cue that alone tells its cause
    //! apart may.
    use crate::diagnose::{DiagnoseOptions, Diagnosis};
    use crate::knowledge::SourceFile;
    use crate::Engine;
    use std::sync::OnceLock;

    const COMMON: &str = "area = \"kubelet\"\ncomponents = [\"component/kubelet\"]\nloops = [\"loop/sync\"]\nreferences = [\"kubernetes/kubernetes:pkg/kubelet/kubelet.go\"]\n";

    fn fm(slug: &str, extra: &str) -> SourceFile {
        SourceFile {
            path: format!("failure-modes/kubelet/{slug}.md"),
            text: format!("+++\nid = \"failure-mode/{slug}\"\ntitle = \"{slug} title\"\n{COMMON}{extra}\n[[fix]]\naction = \"fix {slug}\"\nrisk = \"low\"\n+++\nBody of {slug}.\n"),
        }
    }

    fn engine() -> &'static Engine {
        static E: OnceLock<Engine> = OnceLock::new();
        E.get_or_init(|| {
            let files = vec![
                SourceFile { path: "components/kubelet.md".into(), text: "+++\nid = \"component/kubelet\"\ntitle = \"kubelet\"\n+++\nThe node agent.\n".into() },
                SourceFile { path: "loops/sync.md".into(), text: "+++\nid = \"loop/sync\"\ntitle = \"sync loop\"\npart_of = \"component/kubelet\"\n+++\nSyncs pods.\n".into() },
                fm(
                    "restart-hub",
                    "level = \"symptom\"\ncaused_by = [\"failure-mode/app-error\", \"failure-mode/run-to-completion\", \"failure-mode/stale-image\"]\naliases = [\"pod keeps restarting\"]\n[[symptom]]\nsignal = \"event\"\nreason = \"BackOff\"\ntext = \"Back-off restarting failed container {name} in pod {pod}\"\nsource = \"kubernetes/kubernetes:pkg/kubelet/kuberuntime/kuberuntime_manager.go\"\n[[check]]\ntitle = \"Read the last state\"\ncommand = \"kubectl describe pod POD -n NS\"\nlook_for = \"Last State\"\n",
                ),
                fm(
                    "app-error",
                    "ruled_out_by = [\"environment variables are all set\"]\n[[context]]\ncue = \"phrase\"\ntext = \"missing environment variable\"\n[[context]]\ncue = \"exit-code\"\ncode = 1\nweight = 2.0\n[[check]]\ntitle = \"Read the previous logs\"\ncommand = \"kubectl logs POD -n NS --previous\"\nlook_for = \"the application's error\"\nrules_out = \"a clean exit\"\n",
                ),
                fm(
                    "run-to-completion",
                    "[[context]]\ncue = \"phrase\"\ntext = \"migration script\"\nweight = 2.0\n[[context]]\ncue = \"exit-code\"\ncode = 0\nweight = 2.0\n[[check]]\ntitle = \"See the exit code\"\ncommand = \"kubectl get pod POD -n NS -o jsonpath='{.status.containerStatuses[*].lastState}'\"\nlook_for = \"exitCode 0, reason Completed\"\nrules_out = \"a non-zero exit code\"\n",
                ),
                fm(
                    "stale-image",
                    "[[context]]\ncue = \"setting\"\nfield = \"imagePullPolicy\"\nvalue = \"IfNotPresent\"\n[[context]]\ncue = \"timing\"\nseconds = 600\nweight = 2.0\n[[check]]\ntitle = \"Compare image digests\"\ncommand = \"kubectl get pod POD -n NS -o jsonpath='{.status.containerStatuses[*].imageID}'\"\nlook_for = \"different digests on different nodes\"\nrules_out = \"one digest everywhere\"\n",
                ),
                fm(
                    "sync-hub",
                    "level = \"symptom\"\ncaused_by = [\"failure-mode/chart-hook-left-behind\", \"failure-mode/quota-blocks-sync\"]\n[[symptom]]\nsignal = \"message\"\ntext = \"failed to sync object {name}: already exists\"\nsource = \"local:tests/sync.go\"\n[[check]]\ntitle = \"Look at the object\"\nlook_for = \"its owner\"\n",
                ),
                fm(
                    "chart-hook-left-behind",
                    "[[context]]\ncue = \"product\"\ntext = \"helm\"\n[[context]]\ncue = \"phrase\"\ntext = \"hook job\"\n[[check]]\ntitle = \"List hook objects\"\nlook_for = \"a leftover hook\"\nrules_out = \"no hook objects\"\n",
                ),
                fm(
                    "quota-blocks-sync",
                    "[[context]]\ncue = \"phrase\"\ntext = \"quota\"\n[[check]]\ntitle = \"Read the quota\"\nlook_for = \"used equals hard\"\nrules_out = \"room in the quota\"\n",
                ),
                fm(
                    "pending-thing",
                    "[[symptom]]\nsignal = \"status-reason\"\nreason = \"Pending\"\n[[check]]\ntitle = \"Describe it\"\nlook_for = \"events\"\n",
                ),
            ];
            match Engine::from_sources(files) {
                Ok((e, _)) => e,
                Err(err) => panic!("test knowledge is invalid: {err:?}"),
            }
        })
    }

    const SURFACE: &str = "Warning  BackOff  3m  kubelet  Back-off restarting failed container app in pod web-0_prod(1234)";

    fn diagnose(input: &str, top: usize) -> Diagnosis {
        engine().diagnose(input, DiagnoseOptions { k8s_version: None, top }).expect("diagnosis")
    }

    /// Diagnoses `input` and asserts the first candidate is `failure-mode/<expected_top>`.
    fn check(input: &str, expected_top: &str) -> Diagnosis {
        let d = diagnose(input, 10);
        let ids: Vec<(&str, f64)> = d.candidates.iter().map(|c| (c.id.as_str(), c.confidence)).collect();
        assert_eq!(d.candidates.first().map(|c| c.id.as_str()), Some(format!("failure-mode/{expected_top}").as_str()), "for {input:?}: {ids:?}");
        d
    }

    #[test]
    fn surface_error_alone_answers_the_hub_with_its_causes_in_order() {
        let d = check(SURFACE, "restart-hub");
        let hub = &d.candidates[0];
        assert_eq!(hub.level, "symptom");
        let causes: Vec<&str> = hub.causes.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(causes, ["failure-mode/app-error", "failure-mode/run-to-completion", "failure-mode/stale-image"]);
        assert!(hub.causes.iter().all(|c| !c.separated && c.check.is_some()));
        assert!(d.notices.iter().any(|n| n.contains("nothing in the input separates")), "{:?}", d.notices);
        // The causes follow the hub, reached through it.
        assert_eq!(d.candidates[1].id, "failure-mode/app-error");
        assert_eq!(d.candidates[1].hub.as_deref(), Some("failure-mode/restart-hub"));
        assert!(d.candidates[1].confidence < hub.confidence);
    }

    #[test]
    fn a_phrase_in_prose_picks_the_cause_after_a_message_matched() {
        let d = check(&format!("{SURFACE}\nThe container only runs our database migration script."), "run-to-completion");
        let c = &d.candidates[0];
        assert_eq!(c.level, "cause");
        assert!(c.evidence.iter().any(|e| e.scorer == "context" && e.matched == "phrase"), "{:?}", c.evidence);
        assert!(c.evidence.iter().any(|e| e.scorer == "hub"));
        assert_eq!(c.chain.first().map(|s| s.relation.as_str()), Some("observed"));
    }

    #[test]
    fn an_exit_code_is_a_context_signal() {
        check(&format!("{SURFACE}\n    Last State:     Terminated\n      Reason:       Completed\n      Exit Code:    0\n"), "run-to-completion");
        check(&format!("{SURFACE}\nit exited with code 1"), "app-error");
    }

    #[test]
    fn a_stated_setting_picks_the_cause_and_another_value_counts_against_it() {
        check(&format!("{SURFACE}\nspec:\n  containers:\n  - image: app:latest\n    imagePullPolicy: IfNotPresent\n"), "stale-image");
        let d = diagnose(&format!("{SURFACE}\n    imagePullPolicy: Always\n"), 10);
        let stale = d.candidates.iter().find(|c| c.id == "failure-mode/stale-image").expect("listed");
        assert!(stale.evidence.iter().any(|e| e.scorer == "setting-contradicted"));
        assert_eq!(stale.rank, 4, "{:?}", d.candidates.iter().map(|c| &c.id).collect::<Vec<_>>());
    }

    #[test]
    fn a_timing_is_a_signal() {
        check(&format!("{SURFACE}\nit starts happening every 10 minutes"), "stale-image");
    }

    #[test]
    fn what_the_user_ruled_out_lowers_it() {
        let d = diagnose(&format!("{SURFACE}\nI checked and the environment variables are all set."), 10);
        let ids: Vec<&str> = d.candidates.iter().map(|c| c.id.as_str()).collect();
        let app = ids.iter().position(|i| *i == "failure-mode/app-error").expect("listed");
        assert!(app >= 3, "app-error should fall behind its siblings: {ids:?}");
        let e = &d.candidates[app].evidence;
        assert!(e.iter().any(|x| x.scorer == "ruled-out" && x.score < 0.0));
        // Negated, it rules nothing out.
        let d = diagnose(&format!("{SURFACE}\nthe environment variables are not all set"), 10);
        assert_eq!(d.candidates[1].id, "failure-mode/app-error");
    }

    #[test]
    fn confidence_does_not_change_with_top_and_ranks_follow_it() {
        for input in [SURFACE.to_string(), format!("{SURFACE}\nmigration script")] {
            let one = diagnose(&input, 1);
            let ten = diagnose(&input, 10);
            assert_eq!(one.candidates[0].confidence, ten.candidates[0].confidence);
            assert!(ten.candidates.windows(2).all(|w| w[0].confidence >= w[1].confidence));
        }
    }

    #[test]
    fn a_bare_status_word_is_weak_evidence() {
        let d = diagnose("Pending", 5);
        let c = d.candidates.iter().find(|c| c.id == "failure-mode/pending-thing").expect("listed");
        let status = c.evidence.iter().find(|e| e.matched == "status-reason").expect("status evidence");
        assert!(status.score <= 0.5, "a bare status word weighs a quarter of a specific one: {}", status.score);
    }

    #[test]
    fn names_in_the_input_fill_check_commands() {
        let d = check(&format!("Name:         web-0\nNamespace:    prod\n{SURFACE}\nmigration script"), "run-to-completion");
        let cmd = d.candidates[0].checks[0].command.as_deref().unwrap_or("");
        assert!(cmd.contains("pod web-0 -n prod"), "{cmd}");
        assert_eq!(d.names.pod.as_deref(), Some("web-0"));
    }

    #[test]
    fn a_cause_needing_a_product_the_input_does_not_name_ranks_lower() {
        let rank = |d: &Diagnosis, id: &str| d.candidates.iter().position(|c| c.id == format!("failure-mode/{id}")).expect("listed");
        // The hub lists the Helm cause first, but nothing says Helm is in use.
        let d = check("failed to sync object web: already exists", "sync-hub");
        assert!(rank(&d, "quota-blocks-sync") < rank(&d, "chart-hook-left-behind"), "{:?}", d.candidates.iter().map(|c| &c.id).collect::<Vec<_>>());
        let helm = &d.candidates[rank(&d, "chart-hook-left-behind")];
        assert!(helm.evidence.iter().any(|e| e.scorer == "product-absent" && e.score < 0.0), "{:?}", helm.evidence);
        // Named, the product takes nothing away and adds nothing by itself.
        let d = diagnose("failed to sync object web: already exists (we deploy with helm upgrade)", 10);
        let helm = &d.candidates[rank(&d, "chart-hook-left-behind")];
        assert!(helm.evidence.iter().all(|e| e.scorer != "product-absent" && e.matched != "product"), "{:?}", helm.evidence);
        assert!(helm.evidence.iter().any(|e| e.scorer == "hub"));
    }

    #[test]
    fn exit_codes_are_not_http_codes() {
        let d = diagnose("Last State: Terminated\n  Reason: Error\n  Exit Code: 137\n", 3);
        assert!(d.signals.http_codes.is_empty(), "{:?}", d.signals.http_codes);
        assert!(d.signals.exit_codes.contains(&137));
    }
}
