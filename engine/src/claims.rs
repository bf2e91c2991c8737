//! The claim checker: finds checkable claims in free text (an assistant's answer, a runbook)
//! and marks each supported, contradicted or unknown against the graph's facts.
//!
//! Claims it reads:
//! - feature gates: a known gate's name, with a stage and version ("SidecarContainers went beta
//!   in 1.29") or a default ("enabled by default in 1.30"), checked against the imported
//!   lifecycle; a CamelCase word called a "feature gate" that no lifecycle knows is contradicted;
//! - KEPs: "KEP-753" must exist, and a title given with it must be the KEP's;
//! - metrics: a metric-shaped name (known prefix or suffix) must be an imported metric;
//! - removal and GA versions: "X was removed in 1.25" / "X went GA in 1.33", checked against a
//!   gate's or KEP's milestones or a curated entity's `until`.
//!
//! Anything else is left alone: the checker states only what the graph can back.

use crate::knowledge::KnowledgeBase;
use crate::model::{Kind, Version};
use crate::upstream::{normalize_stage, FeatureGate};
use regex::Regex;
use serde::Serialize;
use std::sync::OnceLock;

/// A claim's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The graph has the fact and it agrees.
    Supported,
    /// The graph has the fact and it disagrees (or the named thing does not exist).
    Contradicted,
    /// The graph cannot tell.
    Unknown,
}

impl Verdict {
    /// The verdict as serialised: `supported`, `contradicted` or `unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Supported => "supported",
            Verdict::Contradicted => "contradicted",
            Verdict::Unknown => "unknown",
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One checkable claim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Claim {
    /// `feature-gate`, `kep`, `metric` or `version`.
    pub kind: String,
    /// The thing the claim is about (gate name, KEP number, metric name, subject).
    pub subject: String,
    /// The claim as found in the text (at most 200 characters).
    pub text: String,
    /// Supported, contradicted or unknown.
    pub verdict: Verdict,
    /// The graph's fact, in words.
    pub fact: String,
    /// The id of the entity holding the fact, when there is one.
    pub entity: Option<String>,
}

fn re(cell: &'static OnceLock<Regex>, p: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(p).expect("static regex is valid"))
}

/// Splits text into sentences (on `.`, `!`, `?` followed by a space, and on newlines).
/// Longest sentence read as one, in bytes: a longer run of text without a sentence end is read in
/// pieces of this size, so the work per sentence is bounded and the checker stays linear in the
/// text (issue 16).
const MAX_SENTENCE_BYTES: usize = 2048;

fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for s in whole_sentences(text) {
        let mut rest = s;
        while rest.len() > MAX_SENTENCE_BYTES {
            let mut cut = MAX_SENTENCE_BYTES;
            while !rest.is_char_boundary(cut) {
                cut -= 1;
            }
            // Prefer to cut at a space, so that words stay whole.
            let cut = rest[..cut].rfind(' ').filter(|&c| c > 0).unwrap_or(cut);
            let piece = rest[..cut].trim();
            if !piece.is_empty() {
                out.push(piece);
            }
            rest = rest[cut..].trim_start();
        }
        if !rest.is_empty() {
            out.push(rest);
        }
    }
    out
}

fn whole_sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let b = text.as_bytes();
    for i in 0..b.len() {
        let end = match b[i] {
            b'\n' => true,
            b'.' | b'!' | b'?' => i + 1 >= b.len() || b[i + 1] == b' ' || b[i + 1] == b'\n',
            _ => false,
        };
        if end {
            if text.is_char_boundary(start) && text.is_char_boundary(i + 1) {
                let s = text[start..=i].trim();
                if !s.is_empty() {
                    out.push(s);
                }
            }
            start = i + 1;
        }
    }
    if start < text.len() && text.is_char_boundary(start) {
        let s = text[start..].trim();
        if !s.is_empty() {
            out.push(s);
        }
    }
    out
}

fn clip(s: &str) -> String {
    let t: String = s.chars().take(200).collect();
    if t.len() < s.len() {
        format!("{t}…")
    } else {
        t
    }
}

fn lifecycle(g: &FeatureGate) -> String {
    g.step
        .iter()
        .map(|s| {
            let d = match s.default {
                Some(true) => " (on)",
                Some(false) => " (off)",
                None => "",
            };
            format!("{} {}{d}", s.stage, s.version)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Stage words in a sentence, normalised (`alpha`, `beta`, `ga`, `deprecated`).
fn stage_of(s: &str) -> Option<String> {
    static STAGE: OnceLock<Regex> = OnceLock::new();
    let r = re(&STAGE, r"(?i)\b(alpha|beta|GA|stable|generally available|deprecated)\b");
    r.captures(s).map(|c| normalize_stage(&c[1]))
}

/// The first Kubernetes minor version in a sentence.
fn version_of(s: &str) -> Option<Version> {
    static V: OnceLock<Regex> = OnceLock::new();
    let r = re(&V, r"\b(?:v|Kubernetes\s+|k8s\s+)?1\.(\d{1,2})\b");
    r.captures(s).and_then(|c| c[1].parse::<u16>().ok()).map(|minor| Version { major: 1, minor })
}

/// Whether `phrase` occurs in `sentence` (both lowercased) between word boundaries.
fn has_phrase(sentence: &str, phrase: &str) -> bool {
    let mut from = 0;
    while let Some(i) = sentence[from..].find(phrase) {
        let (a, b) = (from + i, from + i + phrase.len());
        let before = sentence[..a].chars().next_back().is_none_or(|c| !c.is_alphanumeric());
        let after = sentence[b..].chars().next().is_none_or(|c| !c.is_alphanumeric());
        if before && after {
            return true;
        }
        from = b;
    }
    false
}

/// Curated entities the sentence names by title or alias (two words or more) that cite KEPs
/// or feature gates: the subjects a KEP number or a gate in the same sentence is attached to.
fn named_subjects<'a>(kb: &'a KnowledgeBase, sentence: &str) -> Vec<(&'a crate::model::Entity, String)> {
    let l = sentence.to_lowercase();
    let mut out: Vec<(&crate::model::Entity, String)> = Vec::new();
    for e in kb.entities() {
        if matches!(e.kind, Kind::Symptom | Kind::Check | Kind::Fix | Kind::Kep | Kind::FeatureGate | Kind::Release) || (e.keps.is_empty() && e.feature_gates.is_empty()) {
            continue;
        }
        let name = std::iter::once(&e.title).chain(&e.aliases).map(|n| n.to_lowercase()).filter(|n| n.split_whitespace().count() >= 2 && n.len() >= 10).find(|n| has_phrase(&l, n));
        if let Some(n) = name {
            out.push((e, n));
        }
    }
    out
}

/// Why KEP `n` does not fit the subject the sentence attaches it to, if it does not: another
/// KEP's title, a curated entity described by other KEPs, or a gate of other KEPs.
fn kep_subject_mismatch(kb: &KnowledgeBase, sentence: &str, n: u32) -> Option<String> {
    let up = kb.upstream();
    let k = up.keps.get(&n)?;
    let l = sentence.to_lowercase();
    let own = std::iter::once(&k.title).chain(&k.other_titles).any(|t| has_phrase(&l, &t.to_lowercase()));
    if own {
        return None;
    }
    // Another KEP named by its title.
    if let Some(o) = up.keps.values().find(|o| o.number != n && o.title.split_whitespace().count() >= 2 && has_phrase(&l, &o.title.to_lowercase())) {
        return Some(format!("\"{}\" is KEP-{}, not KEP-{n}", o.title, o.number));
    }
    // A gate of other KEPs.
    static CAMEL: OnceLock<Regex> = OnceLock::new();
    for c in re(&CAMEL, r"\b([A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+)\b").captures_iter(sentence) {
        if let Some(g) = up.gates.get(&c[1]) {
            if !g.keps.is_empty() && !g.keps.contains(&n) && !k.feature_gates.contains(&g.name) {
                let ks: Vec<String> = g.keps.iter().map(|x| format!("KEP-{x}")).collect();
                return Some(format!("the feature gate {} belongs to {}, not KEP-{n}", g.name, ks.join(", ")));
            }
        }
    }
    // A curated subject described by other KEPs.
    let subjects = named_subjects(kb, sentence);
    let with_keps: Vec<_> = subjects.iter().filter(|(e, _)| !e.keps.is_empty()).collect();
    if !with_keps.is_empty() && with_keps.iter().all(|(e, _)| !e.keps.contains(&n)) {
        let (e, name) = with_keps[0];
        let ks: Vec<String> = e.keps.iter().map(|x| format!("KEP-{x}")).collect();
        return Some(format!("{name} is described by {} ({}), not KEP-{n}", ks.join(", "), e.id));
    }
    None
}

/// Why gate `g` does not fit the subject the sentence attaches it to, if it does not: a curated
/// entity gated by other gates and described by KEPs the gate is not part of.
fn gate_subject_mismatch(kb: &KnowledgeBase, sentence: &str, g: &FeatureGate) -> Option<String> {
    // Only a sentence that attaches the gate to something ("X enables Y", "X is the gate for Y").
    let l = sentence.to_lowercase();
    if ![" enables ", " enabled ", " gates ", " controls ", " turns on ", " introduces ", " introduced ", " is the gate for ", " is the feature gate for ", " adds "].iter().any(|v| l.contains(v)) {
        return None;
    }
    let subjects = named_subjects(kb, sentence);
    let gated: Vec<_> = subjects.iter().filter(|(e, _)| !e.feature_gates.is_empty()).collect();
    if gated.is_empty() || gated.iter().any(|(e, _)| e.feature_gates.contains(&g.name) || e.keps.iter().any(|k| g.keps.contains(k))) {
        return None;
    }
    let (e, name) = gated[0];
    Some(format!("{name} is gated by {}, not {} ({})", e.feature_gates.join(", "), g.name, e.id))
}

/// Why metric `component` does not fit the component the sentence says exposes it, if it does not.
fn metric_component_mismatch(kb: &KnowledgeBase, sentence: &str, name: &str, component: &str) -> Option<String> {
    static BY: OnceLock<Regex> = OnceLock::new();
    if component == "component/client-go" {
        return None;
    }
    let l = sentence.to_lowercase();
    let by = re(&BY, r"(?i)\b(?:exposed|emitted|exported|reported|published)\s+by\s+(?:the\s+)?(.{3,60})");
    let said = by.captures(&l)?.get(1)?.as_str().to_string();
    let said_component = kb.of_kind(Kind::Component).find(|c| {
        let names: Vec<String> = std::iter::once(c.title.as_str()).chain(c.aliases.iter().map(String::as_str)).chain(std::iter::once(c.slug())).map(str::to_lowercase).collect();
        names.iter().any(|n| n.len() >= 3 && said.starts_with(n.as_str()) && said[n.len()..].chars().next().is_none_or(|c| !c.is_alphanumeric() && c != '-'))
    })?;
    if said_component.id == component || kb.get(component).is_some_and(|c| matches!(&c.data, crate::model::KindData::Component { part_of: Some(p), .. } if *p == said_component.id)) {
        return None;
    }
    Some(format!("{name} is exposed by {component}, not {}", said_component.id))
}

/// Finds and checks every claim in `text`, in order of appearance.
pub fn check(kb: &KnowledgeBase, text: &str) -> Vec<Claim> {
    static CAMEL: OnceLock<Regex> = OnceLock::new();
    static GATE_WORD: OnceLock<Regex> = OnceLock::new();
    static KEP: OnceLock<Regex> = OnceLock::new();
    static METRIC: OnceLock<Regex> = OnceLock::new();
    static REMOVED: OnceLock<Regex> = OnceLock::new();
    let up = kb.upstream();
    let mut claims: Vec<Claim> = Vec::new();
    let camel = re(&CAMEL, r"`?\b([A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+)\b`?");
    let gate_word = re(&GATE_WORD, r"(?i)^\s*`?\s*(?:feature[- ]gate|gate)\b");
    let kep = re(&KEP, r#"\bKEP[- #]?(\d{1,5})\b(?:\s*(?:\(\s*"?([A-Z][^()"\n0-9]{3,100}?)"?\s*\)|:?\s*"([^"\n]{4,100})"))?"#);
    let metric = re(&METRIC, r"\b([a-z][a-z0-9]*(?:_[a-z0-9]+){2,})\b");
    let removed = re(
        &REMOVED,
        r"(?i)\b((?:the\s+)?[A-Za-z][\w\-/ ]{2,40}?)\s+(?:was|were|is|got|has been|have been)?\s*(removed|graduated to GA|went GA|became GA|reached GA|graduated to stable|became stable|is GA)\s+in\s+(?:Kubernetes\s+|k8s\s+|v)?1\.(\d{1,2})\b",
    );
    for sentence in sentences(text) {
        // Claims of this sentence start here (a removal already checked as a gate claim is one of
        // them; looking only here keeps the checker linear).
        let first = claims.len();
        // Feature gates.
        for c in camel.captures_iter(sentence) {
            let name = &c[1];
            let after = &sentence[c.get(0).map(|m| m.end()).unwrap_or(0)..];
            let called_gate = gate_word.is_match(after);
            match up.gates.get(name) {
                Some(g) => {
                    let stage = stage_of(sentence);
                    let version = version_of(sentence);
                    let default = {
                        let l = sentence.to_lowercase();
                        if l.contains("enabled by default") || l.contains("on by default") {
                            Some(true)
                        } else if l.contains("disabled by default") || l.contains("off by default") {
                            Some(false)
                        } else {
                            None
                        }
                    };
                    let (verdict, fact) = match (stage.as_deref(), version, default) {
                        (Some(st), Some(v), _) => {
                            let ok = g.step.iter().any(|s| normalize_stage(&s.stage) == st && Version::parse(&s.version).is_ok_and(|x| x == v));
                            let at = g.at(v).map(|s| format!("{} at {v}", s.stage)).unwrap_or_else(|| format!("not present at {v}"));
                            if ok || (!g.in_feature_list && g.step.is_empty()) {
                                (if ok { Verdict::Supported } else { Verdict::Unknown }, format!("{}: {}", g.name, lifecycle(g)))
                            } else {
                                (Verdict::Contradicted, format!("{} is {at}; lifecycle: {}", g.name, lifecycle(g)))
                            }
                        }
                        (_, Some(v), Some(d)) => match g.at(v).and_then(|s| s.default) {
                            Some(x) if x == d => (Verdict::Supported, format!("{}: {}", g.name, lifecycle(g))),
                            Some(_) => (Verdict::Contradicted, format!("{} default at {v} is {}; lifecycle: {}", g.name, !d, lifecycle(g))),
                            None => (Verdict::Unknown, format!("{}: {}", g.name, lifecycle(g))),
                        },
                        (Some(st), None, _) => {
                            let ever = g.step.iter().any(|s| normalize_stage(&s.stage) == st);
                            (if ever { Verdict::Supported } else { Verdict::Contradicted }, format!("{}: {}", g.name, lifecycle(g)))
                        }
                        _ => (Verdict::Supported, format!("{} is a feature gate: {}", g.name, lifecycle(g))),
                    };
                    let (verdict, fact) = match gate_subject_mismatch(kb, sentence, g) {
                        Some(why) if verdict != Verdict::Contradicted => (Verdict::Contradicted, format!("{why}; {fact}")),
                        _ => (verdict, fact),
                    };
                    if !claims.iter().any(|x| x.kind == "feature-gate" && x.subject == g.name && x.text == clip(sentence)) {
                        claims.push(Claim {
                            kind: "feature-gate".into(),
                            subject: g.name.clone(),
                            text: clip(sentence),
                            verdict,
                            fact,
                            entity: Some(format!("feature-gate/{}", g.name)),
                        });
                    }
                }
                None if called_gate => {
                    let close = up.gates.keys().min_by_key(|n| crate::knowledge::strsim_distance(n, name)).cloned().unwrap_or_default();
                    claims.push(Claim {
                        kind: "feature-gate".into(),
                        subject: name.to_string(),
                        text: clip(sentence),
                        verdict: if up.gates.is_empty() { Verdict::Unknown } else { Verdict::Contradicted },
                        fact: format!("no feature gate named {name} is known (closest: {close})"),
                        entity: None,
                    });
                }
                None => {}
            }
        }
        // KEPs.
        for c in kep.captures_iter(sentence) {
            let Ok(n) = c[1].parse::<u32>() else { continue };
            let title = c.get(2).or_else(|| c.get(3)).map(|m| m.as_str().trim().to_string());
            let (verdict, fact, entity) = match up.keps.get(&n) {
                None if up.keps.is_empty() => (Verdict::Unknown, "KEP list not loaded".to_string(), None),
                None => (Verdict::Contradicted, format!("there is no KEP {n}"), None),
                Some(k) => {
                    let ok_title = title.as_deref().is_none_or(|t| {
                        let tw: Vec<String> = t.to_lowercase().split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() > 2).map(str::to_string).collect();
                        std::iter::once(&k.title).chain(&k.other_titles).any(|kt| {
                            let kl = kt.to_lowercase();
                            let common = tw.iter().filter(|w| kl.contains(w.as_str())).count();
                            common * 2 >= tw.len().max(1)
                        })
                    });
                    // A stage claim in the same sentence is checked against the milestones.
                    let stage = stage_of(sentence);
                    let version = version_of(sentence);
                    let milestone = match stage.as_deref() {
                        Some("alpha") => Some(&k.alpha),
                        Some("beta") => Some(&k.beta),
                        Some("ga") => Some(&k.stable),
                        _ => None,
                    };
                    let stage_ok = match (milestone, version) {
                        (Some(m), Some(v)) if !m.is_empty() => Some(Version::parse(m).is_ok_and(|x| x == v)),
                        _ => None,
                    };
                    let fact = format!(
                        "KEP-{n} is \"{}\" ({}{}{}{})",
                        k.title,
                        k.sig,
                        if k.alpha.is_empty() { String::new() } else { format!(", alpha {}", k.alpha) },
                        if k.beta.is_empty() { String::new() } else { format!(", beta {}", k.beta) },
                        if k.stable.is_empty() { String::new() } else { format!(", stable {}", k.stable) }
                    );
                    // Without a title in brackets, the subject the sentence attaches the number to.
                    let mismatch = if title.is_none() { kep_subject_mismatch(kb, sentence, n) } else { None };
                    let verdict = if !ok_title || stage_ok == Some(false) || mismatch.is_some() { Verdict::Contradicted } else { Verdict::Supported };
                    let fact = match mismatch {
                        Some(why) => format!("{fact}; {why}"),
                        None => fact,
                    };
                    (verdict, fact, Some(format!("kep/{n}")))
                }
            };
            claims.push(Claim { kind: "kep".into(), subject: format!("KEP-{n}"), text: clip(sentence), verdict, fact, entity });
        }
        // Metrics.
        for c in metric.captures_iter(sentence) {
            let name = &c[1];
            let known_prefix = ["apiserver_", "etcd_", "kubelet_", "scheduler_", "coredns_", "kube_", "workqueue_", "rest_client_", "kubeproxy_", "container_", "node_", "process_", "go_"]
                .iter()
                .any(|p| name.starts_with(p));
            let metric_suffix = ["_total", "_seconds", "_bytes", "_count", "_bucket", "_sum", "_ratio", "_info"].iter().any(|s| name.ends_with(s));
            if !(known_prefix || metric_suffix) || claims.iter().any(|x| x.kind == "metric" && x.subject == name) {
                continue;
            }
            let base = ["_bucket", "_sum", "_count"].iter().find_map(|s| name.strip_suffix(s)).filter(|b| up.metrics.contains_key(*b)).unwrap_or(name);
            let (verdict, fact, entity) = match up.metrics.get(base) {
                Some(m) => match metric_component_mismatch(kb, sentence, &m.name, &m.component) {
                    Some(why) => (Verdict::Contradicted, format!("{why} ({})", m.source), Some(format!("metric/{}", m.name))),
                    None => (Verdict::Supported, format!("{} is a {} exposed by {} ({})", m.name, m.metric_type, m.component, m.source), Some(format!("metric/{}", m.name))),
                },
                None if known_prefix && !up.metrics.is_empty() && !name.starts_with("process_") && !name.starts_with("go_") && !name.starts_with("container_") && !name.starts_with("node_") => {
                    let close = up.metrics.keys().min_by_key(|n| crate::knowledge::strsim_distance(n, name)).cloned().unwrap_or_default();
                    (Verdict::Contradicted, format!("no metric named {name} is known (closest: {close})"), None)
                }
                None => (Verdict::Unknown, format!("{name} is not in the imported metric lists"), None),
            };
            claims.push(Claim { kind: "metric".into(), subject: name.to_string(), text: clip(sentence), verdict, fact, entity });
        }
        // Removal and GA versions of named things.
        for c in removed.captures_iter(sentence) {
            let subject = c[1].trim().trim_start_matches("the ").trim().to_string();
            let what = c[2].to_lowercase();
            let Ok(minor) = c[3].parse::<u16>() else { continue };
            let v = Version { major: 1, minor };
            let is_removal = what.contains("removed");
            if claims[first..].iter().any(|x| x.kind == "feature-gate" && subject.contains(x.subject.as_str())) {
                continue; // already checked as a gate claim
            }
            // A curated entity whose title or alias names the subject, with a version bound.
            let subj_l = subject.to_lowercase();
            // "X removed" is either the end of an entity about X (its `until`) or the start of an
            // entity about X's removal (its `since`, e.g. the failure mode "dockershim removed").
            let names_subject = |e: &&crate::model::Entity| e.aliases.iter().any(|a| a.to_lowercase() == subj_l) || e.title.to_lowercase().starts_with(&subj_l);
            let about_removal = |e: &&crate::model::Entity| {
                e.aliases.iter().chain(std::iter::once(&e.title)).any(|a| {
                    let a = a.to_lowercase();
                    a.contains(&subj_l) && a.contains("removed")
                })
            };
            let by_until = kb.entities().iter().filter(|e| e.kind != Kind::Symptom).find(|e| {
                (is_removal && e.applies.until.is_some() || !is_removal && e.applies.since.is_some()) && names_subject(e)
            });
            let by_since = || kb.entities().iter().filter(|e| e.kind != Kind::Symptom && e.applies.since.is_some()).find(|e| is_removal && about_removal(e));
            let (hit, use_since) = match by_until {
                Some(e) => (Some(e), !is_removal),
                None => (by_since(), true),
            };
            let kep_hit = up.keps.values().find(|k| k.title.to_lowercase() == subj_l);
            let (verdict, fact, entity) = if let Some(e) = hit {
                let bound = if use_since { e.applies.since } else { e.applies.until };
                match bound {
                    Some(b) if b == v => (Verdict::Supported, format!("{}: {}", e.title, e.applies.describe()), Some(e.id.clone())),
                    Some(b) => (Verdict::Contradicted, format!("{}: applies {} (so {} in {b})", e.title, e.applies.describe(), if is_removal { "removed" } else { "introduced" }), Some(e.id.clone())),
                    None => (Verdict::Unknown, e.applies.describe(), Some(e.id.clone())),
                }
            } else if let (Some(k), false) = (kep_hit, is_removal) {
                match Version::parse(&k.stable) {
                    Ok(s) if s == v => (Verdict::Supported, format!("KEP-{} stable in {}", k.number, k.stable), Some(format!("kep/{}", k.number))),
                    Ok(s) => (Verdict::Contradicted, format!("KEP-{} (\"{}\") went stable in {s}", k.number, k.title), Some(format!("kep/{}", k.number))),
                    Err(_) => (Verdict::Unknown, format!("KEP-{} has no stable milestone", k.number), Some(format!("kep/{}", k.number))),
                }
            } else {
                (Verdict::Unknown, format!("the graph has no version fact for \"{subject}\""), None)
            };
            claims.push(Claim { kind: "version".into(), subject, text: clip(sentence), verdict, fact, entity });
        }
    }
    claims
}
