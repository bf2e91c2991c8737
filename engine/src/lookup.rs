//! Lookups over the imported upstream facts: feature gates, KEPs and metrics.
//!
//! An unknown name never gets a guess: the answer is [`crate::NotFound`] with the closest
//! known names.

use crate::diagnose::EntityRef;
use crate::knowledge::{strsim_distance, KnowledgeBase};
use crate::model::{Kind, KindData, Version};
use crate::upstream::{FeatureGate, GateStep, Kep};
use crate::NotFound;
use serde::Serialize;

/// A feature gate and its state at a version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GateAnswer {
    /// The gate with its whole lifecycle.
    pub gate: FeatureGate,
    /// The version asked about ("1.30"), if any.
    pub version: Option<String>,
    /// The lifecycle step in force at that version (`None` before the gate existed, or with no version).
    pub at_version: Option<GateStep>,
    /// A one-line statement of the state at the version, or of the latest state.
    pub statement: String,
    /// KEPs that list the gate.
    pub keps: Vec<EntityRef>,
    /// Curated entities gated by it.
    pub gated: Vec<EntityRef>,
}

/// A KEP with its gates and the curated entities that cite it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KepAnswer {
    /// The KEP.
    pub kep: Kep,
    /// Curated entities described by it.
    pub cited_by: Vec<EntityRef>,
}

/// A metric: what upstream says and what the graph adds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MetricAnswer {
    /// Exposed name.
    pub name: String,
    /// counter, gauge, histogram or summary.
    #[serde(rename = "type")]
    pub metric_type: String,
    /// Stability level, when known.
    pub stability: Option<String>,
    /// Label names.
    pub labels: Vec<String>,
    /// The component that exposes it.
    pub component: EntityRef,
    /// What a bad value means (curated metrics only).
    pub bad_value: Option<String>,
    /// The curated explanation's first paragraph, if the metric is curated.
    pub meaning: Option<String>,
    /// Failure modes it reveals.
    pub failure_modes: Vec<EntityRef>,
    /// Loops that emit it.
    pub loops: Vec<EntityRef>,
    /// Where it is listed or defined upstream.
    pub source: Option<String>,
    /// Whether the metric has a curated entity in the graph.
    pub curated: bool,
}

fn eref(kb: &KnowledgeBase, id: &str) -> EntityRef {
    EntityRef::of(kb, id)
}

fn closest<'a>(query: &str, names: impl Iterator<Item = &'a str>, n: usize) -> Vec<String> {
    let q = query.to_lowercase();
    let mut scored: Vec<(usize, &str)> = names
        .map(|name| {
            let l = name.to_lowercase();
            let d = if l.contains(&q) || q.contains(&l) { l.len().abs_diff(q.len()).min(3) } else { strsim_distance(&l, &q) };
            (d, name)
        })
        .collect();
    scored.sort();
    scored.into_iter().take(n).map(|(_, s)| s.to_string()).collect()
}

/// Looks up a feature gate by name (case-insensitive), at an optional version.
///
/// # Errors
/// [`NotFound`] with the closest gate names.
pub fn gate(kb: &KnowledgeBase, name: &str, version: Option<Version>) -> Result<GateAnswer, NotFound> {
    let up = kb.upstream();
    let g = up
        .gates
        .get(name)
        .or_else(|| up.gates.values().find(|g| g.name.eq_ignore_ascii_case(name)))
        .ok_or_else(|| NotFound { query: name.to_string(), suggestions: closest(name, up.gates.keys().map(String::as_str), 5) })?;
    let at = version.and_then(|v| g.at(v).cloned());
    let describe = |s: &GateStep| {
        let d = match s.default {
            Some(true) => ", on by default",
            Some(false) => ", off by default",
            None => ", default not stated by its source",
        };
        let l = if s.locked == Some(true) { ", locked to its default" } else { "" };
        let from = match &s.source {
            Some(src) => format!(" [from {src}]"),
            None => String::new(),
        };
        format!("{} (since {}){d}{l}{from}", s.stage, s.version)
    };
    let statement = match (version, &at) {
        (Some(v), Some(s)) => format!("{} at Kubernetes {v}: {}", g.name, describe(s)),
        (Some(v), None) => match g.step.first() {
            Some(first) => format!("{} does not exist yet at Kubernetes {v}: it arrives as {} in {}", g.name, first.stage, first.version),
            None => format!("{}: no lifecycle is recorded", g.name),
        },
        (None, _) => match g.step.last() {
            Some(s) => format!("{} now: {}", g.name, describe(s)),
            None => format!("{}: no lifecycle is recorded", g.name),
        },
    };
    let removed = if g.removed {
        let last = if g.last_version.is_empty() { String::new() } else { format!(" after {}", g.last_version) };
        format!("; removed{last}")
    } else {
        String::new()
    };
    let statement = if g.in_feature_list {
        format!("{statement} (source: the feature list, {})", g.source)
    } else if g.source.starts_with("kubernetes/website:") {
        format!("{statement}{removed} (source: the Kubernetes website's page for the gate, {}; the gate is not in the current feature list)", g.source)
    } else {
        format!("{statement} (known only from KEP milestones, {}: the gate is not in the current feature list or on the website, so it was removed or renamed; defaults unknown)", g.source)
    };
    let gated = kb.entities().iter().filter(|e| e.feature_gates.iter().any(|x| x == &g.name) && e.kind != Kind::Kep).map(|e| eref(kb, &e.id)).collect();
    Ok(GateAnswer {
        keps: g.keps.iter().map(|n| eref(kb, &format!("kep/{n}"))).collect(),
        gate: g.clone(),
        version: version.map(|v| v.to_string()),
        at_version: at,
        statement,
        gated,
    })
}

/// Looks up a KEP by number ("753", "KEP-753") or by words of its title.
///
/// Returns one answer for a number, or every KEP whose title contains all the words (at most 20).
///
/// # Errors
/// [`NotFound`] with the closest titles.
pub fn kep(kb: &KnowledgeBase, query: &str) -> Result<Vec<KepAnswer>, NotFound> {
    let up = kb.upstream();
    let q = query.trim();
    let digits = q.trim_start_matches("KEP").trim_start_matches("kep").trim_start_matches(['-', ' ', '#']);
    let answer = |k: &Kep| KepAnswer {
        kep: k.clone(),
        cited_by: kb.entities().iter().filter(|e| e.keps.contains(&k.number) && e.kind != Kind::FeatureGate).map(|e| eref(kb, &e.id)).collect(),
    };
    if let Ok(n) = digits.parse::<u32>() {
        return up.keps.get(&n).map(|k| vec![answer(k)]).ok_or_else(|| NotFound {
            query: q.to_string(),
            suggestions: {
                let mut near: Vec<(u32, u32)> = up.keps.keys().map(|k| (k.abs_diff(n), *k)).collect();
                near.sort();
                near.into_iter().take(3).map(|(_, k)| format!("KEP-{k}")).collect()
            },
        });
    }
    let words: Vec<String> = q.to_lowercase().split_whitespace().map(str::to_string).collect();
    let hits: Vec<KepAnswer> = up
        .keps
        .values()
        .filter(|k| {
            let t = std::iter::once(&k.title).chain(&k.other_titles).map(|t| t.to_lowercase()).collect::<Vec<_>>().join(" ");
            !words.is_empty() && words.iter().all(|w| t.contains(w.as_str()))
        })
        .take(20)
        .map(answer)
        .collect();
    if hits.is_empty() {
        return Err(NotFound { query: q.to_string(), suggestions: closest(q, up.keps.values().map(|k| k.title.as_str()), 3) });
    }
    Ok(hits)
}

/// Looks up a metric by exact name (a `_bucket`, `_sum` or `_count` suffix is accepted).
///
/// # Errors
/// [`NotFound`] with the closest metric names.
pub fn metric(kb: &KnowledgeBase, name: &str) -> Result<MetricAnswer, NotFound> {
    let n = name.trim();
    let base = ["_bucket", "_sum", "_count"].iter().find_map(|s| n.strip_suffix(s)).filter(|b| kb.get(&format!("metric/{b}")).is_some()).unwrap_or(n);
    let Some(e) = kb.get(&format!("metric/{base}")) else {
        let names = kb.entities().iter().filter(|e| e.kind == Kind::Metric).map(|e| e.slug());
        return Err(NotFound { query: n.to_string(), suggestions: closest(n, names, 5) });
    };
    let KindData::Metric { name, component, metric_type, stability, labels, bad_value } = &e.data else {
        return Err(NotFound { query: n.to_string(), suggestions: Vec::new() });
    };
    let curated = !e.location.file.starts_with("generated/");
    let incoming = |prop: fn(&KindData) -> Option<&Vec<String>>| -> Vec<EntityRef> {
        kb.entities().iter().filter(|x| prop(&x.data).is_some_and(|l| l.contains(&e.id))).map(|x| eref(kb, &x.id)).collect()
    };
    Ok(MetricAnswer {
        name: name.clone(),
        metric_type: metric_type.clone(),
        stability: stability.clone(),
        labels: labels.clone(),
        component: eref(kb, component),
        bad_value: bad_value.clone(),
        meaning: if curated && !e.body.is_empty() { Some(e.summary(400)) } else { None },
        failure_modes: incoming(|d| match d {
            KindData::FailureMode(fm) => Some(&fm.metrics),
            _ => None,
        }),
        loops: incoming(|d| match d {
            KindData::Loop { emits, .. } => Some(emits),
            _ => None,
        }),
        source: kb.upstream().metrics.get(name).map(|m| m.source.clone()).or_else(|| e.references.first().cloned()),
        curated,
    })
}
