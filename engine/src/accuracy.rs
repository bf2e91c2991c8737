//! The accuracy lint: curated facts checked against the imported upstream data.
//!
//! Runs only for what upstream data was loaded (a knowledge directory without
//! `generated/` files skips the checks that need it). Checks:
//! - every KEP number in `keps` exists, and a KEP cited in text with a title ("KEP-753
//!   (Sidecar Containers)") uses the KEP's title;
//! - every `feature_gates` name is a known gate, and an entity gated by one gate whose `since`
//!   is set starts at one of that gate's lifecycle steps;
//! - a sentence in a body naming a known gate with a stage and a version ("SidecarContainers
//!   ... beta in 1.29") agrees with the gate's lifecycle;
//! - every curated Metric names an imported metric (or one in `metrics-supplement.toml`) with
//!   the same type and stability, and metric names written in backticks in bodies exist;
//! - every version range lies within released versions (at most the newest release, one more
//!   for `until`).

use crate::knowledge::{Diagnostic, KnowledgeBase, Severity};
use crate::model::{Entity, Kind, KindData, Version};
use crate::upstream::normalize_stage;
use regex::Regex;
use std::collections::BTreeSet;
use std::sync::OnceLock;

fn re(cell: &'static OnceLock<Regex>, p: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(p).expect("static regex is valid"))
}

/// Metric-name prefixes of the imported sources: a backticked name with one of these that is not
/// a known metric is reported.
const METRIC_PREFIXES: &[&str] = &[
    "apiserver_", "etcd_", "kubelet_", "scheduler_", "coredns_", "kube_", "workqueue_", "rest_client_", "kubeproxy_", "container_",
    "aggregator_", "prober_", "node_collector_", "endpoint_slice_", "storage_operation_", "volume_operation_",
];
const METRIC_SUFFIXES: &[&str] = &["_total", "_seconds", "_bytes", "_count", "_sum", "_bucket", "_ratio", "_info", "_depth", "_pods"];

fn err(kb: &KnowledgeBase, e: &Entity, key: &str, message: String) -> Diagnostic {
    Diagnostic {
        severity: Severity::Error,
        location: kb.key_location(&e.id, key).unwrap_or_else(|| e.location.clone()),
        key: Some(key.to_string()),
        message,
    }
}

/// Text of an entity that states facts: title, body, and its kind's text fields.
fn texts(e: &Entity) -> Vec<(&'static str, String)> {
    let mut v = vec![("title", e.title.clone()), ("body", e.body.clone())];
    match &e.data {
        KindData::Myth { correction, .. } => v.push(("correction", correction.clone())),
        KindData::Metric { bad_value: Some(b), .. } => v.push(("bad_value", b.clone())),
        KindData::Check { look_for, .. } => v.push(("look_for", look_for.clone())),
        KindData::Fix { action, .. } => v.push(("action", action.clone())),
        _ => {}
    }
    v
}

fn words(s: &str) -> BTreeSet<String> {
    s.to_lowercase().split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() > 2).map(str::to_string).collect()
}

/// Runs every accuracy check on the entities `include` accepts, appending problems to `diags`.
pub fn check(kb: &KnowledgeBase, include: impl Fn(&crate::model::Entity) -> bool, diags: &mut Vec<Diagnostic>) {
    static KEP_TITLE: OnceLock<Regex> = OnceLock::new();
    static KEP_NUM: OnceLock<Regex> = OnceLock::new();
    static GATE_STAGE: OnceLock<Regex> = OnceLock::new();
    static BACKTICK: OnceLock<Regex> = OnceLock::new();
    let up = kb.upstream();
    let latest = up.latest_release();
    let kep_title = re(&KEP_TITLE, r#"\bKEP[- ]?(\d{1,5})\s*(?:\(\s*"?([A-Z][^()"\n0-9]{3,120}?)"?\s*\)|:?\s*"([^"\n]{4,120})")"#);
    let kep_num = re(&KEP_NUM, r"\bKEP[- ]?(\d{1,5})\b");
    // A stage and version stated within the same clause after a gate's name.
    let gate_stage = re(
        &GATE_STAGE,
        r"^[^.\n;]{0,50}?\b(?i:(alpha|beta|GA|stable|generally available))\b[^.\n;]{0,25}?\b(?i:in|since|from|as of|with)\s+(?i:Kubernetes\s+|v)?1\.(\d{1,2})\b",
    );
    static CAMEL: OnceLock<Regex> = OnceLock::new();
    let camel = re(&CAMEL, r"\b[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+\b");
    let backtick = re(&BACKTICK, r"`([a-z][a-z0-9_]{6,})`");
    for e in kb.entities().iter().filter(|e| include(e)) {
        if e.location.file.starts_with("generated/") || e.location.file.ends_with(crate::knowledge::SUPPLEMENT) {
            continue;
        }
        // KEP numbers in front matter.
        if !up.keps.is_empty() {
            for k in &e.keps {
                if !up.keps.contains_key(k) {
                    diags.push(err(kb, e, "keps", format!("KEP {k} does not exist in the imported KEP list")));
                }
            }
        }
        // Feature gates in front matter.
        if !up.gates.is_empty() {
            for g in &e.feature_gates {
                match up.gates.get(g) {
                    None => {
                        let close = up.gates.keys().min_by_key(|n| crate::knowledge::strsim_distance(n, g)).cloned().unwrap_or_default();
                        diags.push(err(kb, e, "feature_gates", format!("`{g}` is not a known feature gate (closest: `{close}`)")));
                    }
                    Some(gate) if e.feature_gates.len() == 1 && !gate.step.is_empty() => {
                        if let Some(since) = e.applies.since {
                            let steps: Vec<String> = gate.step.iter().map(|s| s.version.clone()).collect();
                            if !steps.iter().any(|v| Version::parse(v).is_ok_and(|v| v == since)) && gate.step.iter().all(|s| s.version != "1.0") {
                                let life: Vec<String> = gate.step.iter().map(|s| format!("{} {}", s.stage, s.version)).collect();
                                diags.push(err(kb, e, "since", format!("`since` {since} is not a step of `{g}`'s lifecycle ({})", life.join(", "))));
                            }
                        }
                    }
                    Some(_) => {}
                }
            }
        }
        // Version ranges within released versions.
        if let Some(latest) = latest {
            if let Some(s) = e.applies.since {
                if s > latest {
                    diags.push(err(kb, e, "since", format!("`since` {s} is after the newest release {latest}")));
                }
            }
            if let Some(u) = e.applies.until {
                if u > (Version { major: latest.major, minor: latest.minor + 1 }) {
                    diags.push(err(kb, e, "until", format!("`until` {u} is beyond the next release after {latest}")));
                }
            }
        }
        // Curated metrics.
        if let KindData::Metric { name, metric_type, stability, .. } = &e.data {
            if !up.metrics.is_empty() {
                match up.metrics.get(name) {
                    None => diags.push(err(
                        kb,
                        e,
                        "name",
                        format!("metric `{name}` is not in the imported metric lists; if it is real, add it to {} with the source path that defines it", crate::knowledge::SUPPLEMENT),
                    )),
                    Some(m) => {
                        // "custom" collectors in the documentation list have no fixed type there.
                        if !m.metric_type.is_empty() && m.metric_type != "custom" && m.metric_type != *metric_type {
                            diags.push(err(kb, e, "type", format!("`{name}` is a {} upstream, not a {metric_type}", m.metric_type)));
                        }
                        if let Some(s) = stability {
                            let upstream = m.stability.to_ascii_uppercase();
                            if ["ALPHA", "BETA", "STABLE"].contains(&upstream.as_str()) && *s != upstream {
                                diags.push(err(kb, e, "stability", format!("`{name}` is {upstream} upstream ({}), not {s}", m.source)));
                            }
                        }
                    }
                }
            }
        }
        for (key, text) in texts(e) {
            if text.is_empty() {
                continue;
            }
            // KEP numbers and titles in text.
            if !up.keps.is_empty() {
                for c in kep_num.captures_iter(&text) {
                    if let Ok(n) = c[1].parse::<u32>() {
                        if !up.keps.contains_key(&n) {
                            diags.push(err(kb, e, key, format!("KEP {n} (in the {key}) does not exist in the imported KEP list")));
                        }
                    }
                }
                for c in kep_title.captures_iter(&text) {
                    let Ok(n) = c[1].parse::<u32>() else { continue };
                    let Some(k) = up.keps.get(&n) else { continue };
                    let used = c.get(2).or_else(|| c.get(3)).map(|m| m.as_str()).unwrap_or("");
                    let used_words = words(used);
                    if used_words.is_empty() {
                        continue;
                    }
                    let ok = std::iter::once(&k.title).chain(&k.other_titles).any(|t| {
                        let tw = words(t);
                        let common = used_words.intersection(&tw).count();
                        common * 2 >= used_words.len().min(tw.len()).max(1)
                    });
                    if !ok {
                        diags.push(err(kb, e, key, format!("KEP {n} is titled \"{}\", not \"{used}\"", k.title)));
                    }
                }
            }
            // Gate stage and version statements.
            if !up.gates.is_empty() {
                for w in camel.find_iter(&text) {
                    let Some(gate) = up.gates.get(w.as_str()) else { continue };
                    // Gates known only from KEP milestones are checked against those milestones.
                    if gate.step.is_empty() {
                        continue;
                    }
                    let Some(c) = gate_stage.captures(&text[w.end()..]) else { continue };
                    let stage = normalize_stage(&c[1]);
                    let Ok(minor) = c[2].parse::<u16>() else { continue };
                    let stated = Version { major: 1, minor };
                    let holds = gate.step.iter().any(|s| normalize_stage(&s.stage) == stage && Version::parse(&s.version).is_ok_and(|v| v == stated))
                        // A gate listed from 1.0 has no recorded history before the list began.
                        || gate.step.first().is_some_and(|s| s.version == "1.0" && normalize_stage(&s.stage) == stage);
                    if !holds {
                        let life: Vec<String> = gate.step.iter().map(|s| format!("{} {}", s.stage, s.version)).collect();
                        diags.push(err(kb, e, key, format!("the {key} says {} is {} in {stated}, but its lifecycle is {}", gate.name, &c[1], life.join(", "))));
                    }
                }
            }
            // Metric names in backticks.
            if !up.metrics.is_empty() && e.kind != Kind::Symptom {
                for c in backtick.captures_iter(&text) {
                    let name = &c[1];
                    // A snake_case name with a metric prefix and a metric suffix, or with three or
                    // more parts, in backticks is a metric name (flags use dashes, fields camelCase).
                    let looks_like_metric = METRIC_PREFIXES.iter().any(|p| name.starts_with(p))
                        && (METRIC_SUFFIXES.iter().any(|s| name.ends_with(s)) || name.split('_').count() >= 4);
                    let base = ["_bucket", "_sum", "_count"].iter().find_map(|s| name.strip_suffix(s)).unwrap_or(name);
                    if looks_like_metric && !up.metrics.contains_key(name) && !up.metrics.contains_key(base) {
                        diags.push(err(kb, e, key, format!("`{name}` (in the {key}) is not a known metric; if it is real, add it to {} with its source", crate::knowledge::SUPPLEMENT)));
                    }
                }
            }
        }
    }
}
