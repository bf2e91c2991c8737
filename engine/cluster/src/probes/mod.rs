//! Probes: each turns cluster state into evidence for or against one failure mode.
//!
//! A [`Probe`] names the failure mode it tests by id (`failure-mode/<slug>`), the kinds
//! it needs, and a pure function from a [`ClusterState`] to [`Finding`]s, one per
//! affected object. [`run`] turns that into a [`ProbeOutcome`] with a [`Verdict`]:
//! findings mean the failure mode holds; none, with every needed kind read, means it
//! does not hold; a needed kind that could not be read makes the verdict unknown.
//!
//! The knowledge names probes from `[[check]]` tables (`probe = "<id>"`); [`lint`] checks
//! that every such id is a probe of [`all`], that every probe's failure mode exists, and
//! that the failure mode names its probe. A probe's id is its failure mode's slug.
//!
//! Probes read only the state: ages are measured against [`ClusterState::observed_at`],
//! system namespaces, completed pods and deliberate configurations (the control-plane
//! taint, a cordoned node nobody waits for) are not findings, and every message a probe
//! matches names, in the probe's doc comment, the Kubernetes source that emits it.

use super::state::{ClusterState, ObjectRef, ResourceKind, Unavailable};
use serde::Serialize;

/// Whether the failure mode a probe tests is present.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The state shows the failure mode (at least one finding).
    Holds,
    /// Every needed kind was read and nothing shows the failure mode.
    DoesNotHold,
    /// A needed kind could not be read, so absence proves nothing.
    Unknown,
}

/// One field value of one object that shows (or rules out) something.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Evidence {
    /// The object the value was read from.
    pub object: ObjectRef,
    /// The field path, as in `kubectl get -o jsonpath` without braces
    /// (`status.conditions[type=PodScheduled].message`).
    pub field: String,
    /// The value as read (truncated to 500 characters).
    pub value: String,
}

impl Evidence {
    /// Evidence from an object, a field path and a value (cut to 500 characters).
    pub fn new(object: ObjectRef, field: impl Into<String>, value: impl Into<String>) -> Evidence {
        let mut value: String = value.into();
        if value.chars().count() > 500 {
            value = value.chars().take(500).collect::<String>() + "…";
        }
        Evidence { object, field: field.into(), value }
    }
}

/// One affected object: what the probe saw and the field values that show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The affected object (the pod that is Pending, the Service with no endpoints).
    pub object: ObjectRef,
    /// One sentence: what is wrong with this object, in the probe's words.
    pub summary: String,
    /// The values that show it, the affected object's first.
    pub evidence: Vec<Evidence>,
}

/// A probe: one failure mode's test against cluster state.
#[derive(Debug, Clone, Copy)]
pub struct Probe {
    /// Stable id, named by the knowledge (`[[check]] probe = "…"`).
    pub id: &'static str,
    /// The failure mode it tests (`failure-mode/<slug>`).
    pub failure_mode: &'static str,
    /// What it looks at, in a few words ("pending pods whose requests fit no node").
    pub title: &'static str,
    /// Kinds it reads. If one of them is unavailable the verdict is [`Verdict::Unknown`]
    /// (unless there are findings anyway).
    pub needs: &'static [ResourceKind],
    /// Kinds whose objects are what the probe reports on: `verify KIND/NAME` runs the
    /// probes whose subjects include KIND (empty: cluster-wide only, never per object).
    pub subjects: &'static [ResourceKind],
    /// The test: findings, one per affected object, in a stable order.
    pub check: fn(&ClusterState) -> Vec<Finding>,
    /// For a probe that reads Events but can also judge from the objects' own status
    /// messages: true when every object it looks at carries a conclusive message in its own
    /// status, so a needed kind that could not be read (Events) leaves no doubt and an empty
    /// result means "does not hold" rather than "unknown".
    pub decided_by_status: Option<fn(&ClusterState) -> bool>,
}

/// What one probe concluded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProbeOutcome {
    /// The probe's id.
    pub probe: String,
    /// The failure mode it tests.
    pub failure_mode: String,
    /// The verdict.
    pub verdict: Verdict,
    /// Affected objects (empty unless the verdict is [`Verdict::Holds`]).
    pub findings: Vec<Finding>,
    /// Needed kinds that could not be read, with why.
    pub missing: Vec<(ResourceKind, Unavailable)>,
}

mod common;
mod lint;
pub use lint::{lint, lint_checks, lint_with};
#[cfg(test)]
mod tests;
pub mod apiserver;
pub mod controllers;
pub mod dns;
pub mod kubelet;
pub mod networking;
pub mod operations;
pub mod scheduler;
pub mod storage;

/// The probes of each area (one module per failure-mode area of the knowledge).
pub static AREAS: &[(&str, &[Probe])] = &[
    ("apiserver", apiserver::PROBES),
    ("controllers", controllers::PROBES),
    ("dns", dns::PROBES),
    ("kubelet", kubelet::PROBES),
    ("networking", networking::PROBES),
    ("operations", operations::PROBES),
    ("scheduler", scheduler::PROBES),
    ("storage", storage::PROBES),
];

/// Every probe, in a stable order (by id).
pub fn all() -> Vec<&'static Probe> {
    let mut v: Vec<&'static Probe> = AREAS.iter().flat_map(|(_, probes)| probes.iter()).collect();
    v.sort_by_key(|p| p.id);
    v
}

/// The probe with this id.
pub fn get(id: &str) -> Option<&'static Probe> {
    AREAS.iter().flat_map(|(_, probes)| probes.iter()).find(|p| p.id == id)
}

/// The probes that test this failure mode (`failure-mode/<slug>`).
pub fn for_failure_mode(id: &str) -> Vec<&'static Probe> {
    all().into_iter().filter(|p| p.failure_mode == id).collect()
}

/// Runs one probe over the state.
///
/// The verdict is [`Verdict::Holds`] when there are findings, [`Verdict::Unknown`] when
/// there are none and a needed kind is unavailable (or was never loaded), and
/// [`Verdict::DoesNotHold`] otherwise.
pub fn run(probe: &Probe, state: &ClusterState) -> ProbeOutcome {
    let missing: Vec<(ResourceKind, Unavailable)> = probe
        .needs
        .iter()
        .filter_map(|k| match state.unavailable.get(k) {
            Some(u) => Some((*k, u.clone())),
            None if !state.loaded.contains(k) => {
                Some((*k, Unavailable { status: None, reason: format!("{} were not read", k.plural()) }))
            }
            None => None,
        })
        .collect();
    let findings = (probe.check)(state);
    let verdict = if !findings.is_empty() {
        Verdict::Holds
    } else if !missing.is_empty() && !probe.decided_by_status.is_some_and(|decided| decided(state)) {
        Verdict::Unknown
    } else {
        Verdict::DoesNotHold
    };
    ProbeOutcome { probe: probe.id.to_string(), failure_mode: probe.failure_mode.to_string(), verdict, findings, missing }
}
