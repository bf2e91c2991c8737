//! Reports: probe outcomes joined with the knowledge (mechanism, fixes) for `scan`, and
//! diagnoses re-ranked by evidence for `verify`. The CLI and the MCP server render these;
//! they are `Serialize` and their JSON is the documented `--output json` shape.
//!
//! Re-ranking rule ([`rerank`]): every candidate failure mode gets the evidence of its
//! probes: **holds** when any probe holds, **does not hold** when every probe ran with all
//! it needs and none holds, **unknown** otherwise (also when no probe tests it). Candidates
//! are then ordered holds first, unknown next, does-not-hold last; within a group the
//! diagnosis's own order is kept. So evidence moves a candidate up or down across groups
//! but never reorders candidates it says nothing about.

use crate::collect::Collected;
use crate::probes::{self, Finding, Probe, ProbeOutcome, Verdict};
use crate::redact::Redactor;
use crate::source::Scope;
use crate::state::{ObjectRef, ResourceKind};
use kubewhy_engine::diagnose::{DiagnoseError, DiagnoseOptions};
use kubewhy_engine::knowledge::KnowledgeBase;
use kubewhy_engine::model::{KindData, Version};
use kubewhy_engine::Engine;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// One step of a mechanism chain: `relation` links it to the step before.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Step {
    /// How it relates to the previous step (`inLoop`, `partOf`, `involves`, `causedBy`).
    pub relation: String,
    /// Entity id (`loop/scheduling-cycle`).
    pub id: String,
    /// Its title.
    pub title: String,
}

/// A fix from the knowledge (the same shape as in `kubewhy why` answers).
pub use kubewhy_engine::diagnose::FixOut as Fix;

/// A failure mode as the knowledge explains it: the mechanism chain (failure mode -> loop
/// -> component, then upstream causes), the body's first paragraph and the fixes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mechanism {
    /// The failure mode's id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its area (`scheduler`, `storage`, ...).
    pub area: String,
    /// The chain, starting at the failure mode's loop.
    pub chain: Vec<Step>,
    /// The explanation: the body's first paragraph (at most 400 characters).
    pub explanation: String,
    /// Fixes, in the knowledge's order.
    pub fixes: Vec<Fix>,
}

/// The [`Mechanism`] of a failure mode, or `None` when the id is not a failure mode.
pub fn mechanism(kb: &KnowledgeBase, id: &str) -> Option<Mechanism> {
    let e = kb.get(id)?;
    let fm = e.failure_mode()?;
    let title = |id: &str| kb.get(id).map(|e| e.title.clone()).unwrap_or_else(|| id.to_string());
    let mut chain = Vec::new();
    let mut owner = None;
    if let Some(l) = fm.loops.first() {
        chain.push(Step { relation: "inLoop".into(), id: l.clone(), title: title(l) });
        if let Some(KindData::Loop { part_of, .. }) = kb.get(l).map(|l| &l.data) {
            owner = Some(part_of.clone());
        }
    }
    match &owner {
        Some(o) => chain.push(Step { relation: "partOf".into(), id: o.clone(), title: title(o) }),
        None => {
            if let Some(c) = fm.components.first() {
                chain.push(Step { relation: "involves".into(), id: c.clone(), title: title(c) });
            }
        }
    }
    for c in fm.caused_by.iter().take(3) {
        chain.push(Step { relation: "causedBy".into(), id: c.clone(), title: title(c) });
    }
    let fixes = kubewhy_engine::diagnose::fixes_of(kb, fm);
    Some(Mechanism { id: e.id.clone(), title: e.title.clone(), area: fm.area.clone(), chain, explanation: e.summary(400), fixes })
}

/// Where the state came from and what was read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Source {
    /// `live cluster https://…` or `snapshot PATH` (no credentials).
    pub cluster: String,
    /// The namespace read, or `None` with `all_namespaces`.
    pub namespace: Option<String>,
    /// Whether every namespace was read.
    pub all_namespaces: bool,
    /// The server's `gitVersion`, when known.
    pub server_version: Option<String>,
    /// The minor version used to filter the knowledge (`--k8s-version`, else the server's).
    pub k8s_version: Option<String>,
    /// API requests sent (0 for a snapshot).
    pub api_calls: u64,
    /// Objects read, by kind (kinds with none left out).
    pub objects: BTreeMap<String, usize>,
}

/// A kind that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnavailableKind {
    /// The kind (`Node`).
    pub kind: String,
    /// The HTTP status, when the API answered.
    pub status: Option<u16>,
    /// Why (a 403 names the permission to grant).
    pub reason: String,
}

/// One failure mode found: the knowledge's explanation and the affected objects.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FindingGroup {
    /// The failure mode's id.
    pub failure_mode: String,
    /// Its title (the probe's title when the knowledge lacks the id).
    pub title: String,
    /// The mechanism and fixes, when the knowledge has the failure mode.
    pub mechanism: Option<Mechanism>,
    /// The probes that hold.
    pub probes: Vec<String>,
    /// The affected objects with their evidence.
    pub objects: Vec<Finding>,
}

/// A probe whose verdict is unknown, with why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnknownProbe {
    /// The probe's id.
    pub probe: String,
    /// The failure mode it tests.
    pub failure_mode: String,
    /// What it looks at.
    pub title: String,
    /// The kinds it needed that could not be read, with why.
    pub missing: Vec<UnavailableKind>,
}

/// Counts for the summary line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Probes run.
    pub probes: usize,
    /// Probes that hold.
    pub holds: usize,
    /// Probes that do not hold.
    pub does_not_hold: usize,
    /// Probes whose verdict is unknown.
    pub unknown: usize,
    /// Probes skipped because their failure mode does not apply at the cluster's version.
    pub not_applicable: usize,
    /// Failure modes found.
    pub failure_modes: usize,
    /// Distinct affected objects.
    pub objects: usize,
}

/// The result of `kubewhy scan`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScanReport {
    /// What was read, in words, first: every namespace, or one namespace and what that leaves
    /// out (see [`Source::scope`]).
    pub scope: String,
    /// The answer in one line: what was found, or that nothing was found, what was covered and
    /// what was not (other namespaces, probes that could not decide, probes not applicable).
    pub conclusion: String,
    /// Where the state came from.
    pub source: Source,
    /// Failure modes found, most affected objects first (then by id).
    pub findings: Vec<FindingGroup>,
    /// Probes that could not decide, with why.
    pub unknown: Vec<UnknownProbe>,
    /// Kinds that could not be read.
    pub unavailable: Vec<UnavailableKind>,
    /// Notices for people (missing permissions, a missing version, skipped objects).
    pub notices: Vec<String>,
    /// Counts.
    pub summary: Summary,
}

impl Source {
    /// What was read, in words: `every namespace of snapshot DIR` or `namespace shop of live
    /// cluster https://… (with cluster-scoped objects); other namespaces were not read …`.
    pub fn scope(&self) -> String {
        match (&self.namespace, self.all_namespaces) {
            (Some(ns), false) => format!(
                "namespace {ns} of {} (with cluster-scoped objects); other namespaces were not read (-A, or all_namespaces, reads every namespace)",
                self.cluster
            ),
            _ => format!("every namespace of {}", self.cluster),
        }
    }

    fn short_scope(&self) -> String {
        match (&self.namespace, self.all_namespaces) {
            (Some(ns), false) => format!("namespace {ns}"),
            _ => "every namespace".to_string(),
        }
    }

    fn objects_read(&self) -> String {
        let n: usize = self.objects.values().sum();
        let mut kinds: Vec<(&String, &usize)> = self.objects.iter().collect();
        kinds.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
        let top: Vec<String> = kinds.iter().take(4).map(|(k, c)| format!("{c} {k}")).collect();
        let more = if kinds.len() > 4 { format!(", {} more kinds", kinds.len() - 4) } else { String::new() };
        if n == 0 {
            "no objects".to_string()
        } else {
            format!("{n} objects ({}{more})", top.join(", "))
        }
    }
}

/// What a report did not cover: other namespaces, probes that could not decide (and the kinds
/// they lacked), probes not applicable at the version.
fn not_covered(src: &Source, s: &Summary, unknown: &[UnknownProbe]) -> String {
    let mut out = Vec::new();
    if let (Some(_), false) = (&src.namespace, src.all_namespaces) {
        out.push("other namespaces".to_string());
    }
    if s.unknown > 0 {
        let kinds: BTreeSet<&str> = unknown.iter().flat_map(|u| u.missing.iter().map(|m| m.kind.as_str())).collect();
        let kinds: Vec<&str> = kinds.into_iter().collect();
        let lacking = if kinds.is_empty() { String::new() } else { format!(" (lacking {})", kinds.join(", ")) };
        out.push(format!("{} probe(s) that could not decide{lacking}", s.unknown));
    }
    if s.not_applicable > 0 {
        let v = src.k8s_version.as_deref().map(|v| format!(" at {v}")).unwrap_or_default();
        out.push(format!("{} probe(s) not applicable{v}", s.not_applicable));
    }
    if out.is_empty() {
        "nothing".to_string()
    } else {
        out.join("; ")
    }
}

fn source(c: &Collected, cluster: &str, scope: &Scope, k8s: Option<Version>) -> Source {
    let objects = ResourceKind::ALL
        .iter()
        .filter(|k| c.state.count(**k) > 0)
        .map(|k| (k.kind().to_string(), c.state.count(*k)))
        .collect();
    Source {
        cluster: cluster.to_string(),
        namespace: scope.namespace().map(str::to_string),
        all_namespaces: matches!(scope, Scope::All),
        server_version: c.state.git_version.clone(),
        k8s_version: k8s.map(|v| v.to_string()),
        api_calls: c.api_calls,
        objects,
    }
}

fn unavailable(c: &Collected) -> Vec<UnavailableKind> {
    c.state
        .unavailable
        .iter()
        .map(|(k, u)| UnavailableKind { kind: k.kind().to_string(), status: u.status, reason: u.reason.clone() })
        .collect()
}

fn applies(kb: &KnowledgeBase, fm: &str, v: Option<Version>) -> bool {
    match (v, kb.get(fm)) {
        (Some(v), Some(e)) => e.applies.contains(v),
        _ => true,
    }
}

/// Runs `probes` and groups the outcomes. `keep` filters findings (verify keeps the related
/// objects only); a probe whose findings are all filtered out is re-judged on what is left.
fn run_probes(
    kb: &KnowledgeBase,
    c: &Collected,
    list: &[&'static Probe],
    k8s: Option<Version>,
    keep: &dyn Fn(&Finding) -> bool,
) -> (Vec<ProbeOutcome>, usize) {
    let mut out = Vec::new();
    let mut skipped = 0;
    for p in list {
        if !applies(kb, p.failure_mode, k8s) {
            skipped += 1;
            continue;
        }
        let mut o = probes::run(p, &c.state);
        o.findings.retain(|f| keep(f));
        if o.findings.is_empty() && o.verdict == Verdict::Holds {
            o.verdict = if o.missing.is_empty() { Verdict::DoesNotHold } else { Verdict::Unknown };
        }
        out.push(o);
    }
    (out, skipped)
}

type Unknowns = Vec<(String, Vec<UnavailableKind>)>;

fn summarize(outcomes: &[ProbeOutcome], skipped: usize) -> (Vec<FindingGroup>, Unknowns, Summary) {
    let mut s = Summary { probes: outcomes.len(), not_applicable: skipped, ..Summary::default() };
    let mut groups: BTreeMap<String, (Vec<String>, Vec<Finding>)> = BTreeMap::new();
    let mut unknown = Vec::new();
    for o in outcomes {
        match o.verdict {
            Verdict::Holds => {
                s.holds += 1;
                let g = groups.entry(o.failure_mode.clone()).or_default();
                g.0.push(o.probe.clone());
                for f in &o.findings {
                    if !g.1.iter().any(|x| x.object == f.object && x.summary == f.summary) {
                        g.1.push(f.clone());
                    }
                }
            }
            Verdict::DoesNotHold => s.does_not_hold += 1,
            Verdict::Unknown => {
                s.unknown += 1;
                let missing = o
                    .missing
                    .iter()
                    .map(|(k, u)| UnavailableKind { kind: k.kind().to_string(), status: u.status, reason: u.reason.clone() })
                    .collect();
                unknown.push((o.probe.clone(), missing));
            }
        }
    }
    let objects: BTreeSet<&ObjectRef> = groups.values().flat_map(|(_, f)| f.iter().map(|f| &f.object)).collect();
    s.objects = objects.len();
    s.failure_modes = groups.len();
    let groups = groups
        .into_iter()
        .map(|(fm, (probes, objects))| FindingGroup { title: String::new(), mechanism: None, failure_mode: fm, probes, objects })
        .collect();
    (groups, unknown, s)
}

/// Builds the scan report: every probe over the collected state.
///
/// `k8s` overrides the cluster's version for filtering (failure modes that do not apply
/// at it are not probed and counted as not applicable).
pub fn scan(engine: &Engine, c: &Collected, cluster: &str, scope: &Scope, k8s: Option<Version>) -> ScanReport {
    let kb = engine.knowledge();
    let k8s = k8s.or(c.state.version);
    // In one namespace, objects of other namespaces may have been read to judge cluster-scoped
    // ones (a webhook's Service); they are context, not findings of this scan.
    let in_scope = |f: &Finding| match (scope.namespace(), f.object.namespace.as_deref()) {
        (Some(ns), Some(obj_ns)) => ns == obj_ns,
        _ => true,
    };
    let (outcomes, skipped) = run_probes(kb, c, &probes::all(), k8s, &in_scope);
    let (mut findings, unknown, summary) = summarize(&outcomes, skipped);
    for g in &mut findings {
        fill_group(kb, g);
    }
    findings.sort_by(|a, b| b.objects.len().cmp(&a.objects.len()).then_with(|| a.failure_mode.cmp(&b.failure_mode)));
    let mut r = ScanReport {
        scope: String::new(),
        conclusion: String::new(),
        source: source(c, cluster, scope, k8s),
        findings,
        unknown: unknown_probes(unknown),
        unavailable: unavailable(c),
        notices: c.notices.clone(),
        summary,
    };
    r.describe();
    r
}

fn fill_group(kb: &KnowledgeBase, g: &mut FindingGroup) {
    g.mechanism = mechanism(kb, &g.failure_mode);
    g.title = match &g.mechanism {
        Some(m) => m.title.clone(),
        None => g.probes.first().and_then(|p| probes::get(p)).map(|p| p.title.to_string()).unwrap_or_default(),
    };
}

fn unknown_probes(list: Unknowns) -> Vec<UnknownProbe> {
    list.into_iter()
        .map(|(id, missing)| {
            let p = probes::get(&id);
            UnknownProbe {
                failure_mode: p.map(|p| p.failure_mode.to_string()).unwrap_or_default(),
                title: p.map(|p| p.title.to_string()).unwrap_or_default(),
                probe: id,
                missing,
            }
        })
        .collect()
}

/// The evidence a candidate got from its probes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CandidateEvidence {
    /// A probe holds: the cluster shows it.
    Holds,
    /// No probe decided (or none tests it).
    Unknown,
    /// Every probe ran with what it needs and none holds.
    DoesNotHold,
}

/// One candidate failure mode after checking it against the cluster.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VerifiedCandidate {
    /// Rank after re-ranking (1-based).
    pub rank: usize,
    /// Rank in the diagnosis before evidence (`None`: added because a probe holds).
    pub diagnosis_rank: Option<usize>,
    /// The failure mode's id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// The diagnosis's confidence in [0, 1] (0 for candidates added by evidence).
    pub confidence: f64,
    /// The evidence.
    pub evidence: CandidateEvidence,
    /// Why, in a few words ("probe X holds for 2 object(s)", "no probe tests it").
    pub because: String,
    /// The affected objects with field values (holds only).
    pub objects: Vec<Finding>,
    /// The outcomes of its probes.
    pub probes: Vec<ProbeOutcome>,
    /// The mechanism and fixes.
    pub mechanism: Option<Mechanism>,
}

/// The result of `kubewhy verify`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VerifyReport {
    /// What was read, in words, first (see [`Source::scope`]).
    pub scope: String,
    /// The answer in one line: how many candidates hold, or that none does, what was covered
    /// and what was not.
    pub conclusion: String,
    /// Where the state came from.
    pub source: Source,
    /// The symptom text diagnosed (for `verify KIND/NAME`, the text built from the object's
    /// status and events).
    pub input: String,
    /// The object verified (`verify KIND/NAME` only).
    pub target: Option<ObjectRef>,
    /// The candidates, re-ranked by evidence (see the module doc).
    pub candidates: Vec<VerifiedCandidate>,
    /// The other probes that hold for the target or its related objects (`verify KIND/NAME`).
    pub also_found: Vec<FindingGroup>,
    /// Probes that could not decide, with why.
    pub unknown: Vec<UnknownProbe>,
    /// Kinds that could not be read.
    pub unavailable: Vec<UnavailableKind>,
    /// Notices for people.
    pub notices: Vec<String>,
    /// Counts over every probe run.
    pub summary: Summary,
}

/// Orders candidates by [`CandidateEvidence`] (holds, unknown, does not hold), keeping the
/// given order within each group, and renumbers `rank` from 1.
pub fn rerank(cands: &mut [VerifiedCandidate]) {
    cands.sort_by_key(|c| c.evidence); // stable: the diagnosis's order stays within a group
    for (i, c) in cands.iter_mut().enumerate() {
        c.rank = i + 1;
    }
}

fn judge(outcomes: &[ProbeOutcome]) -> (CandidateEvidence, String, Vec<Finding>) {
    if outcomes.is_empty() {
        return (CandidateEvidence::Unknown, "no probe tests it".into(), Vec::new());
    }
    let holds: Vec<&ProbeOutcome> = outcomes.iter().filter(|o| o.verdict == Verdict::Holds).collect();
    if !holds.is_empty() {
        let objects: Vec<Finding> = holds.iter().flat_map(|o| o.findings.iter().cloned()).collect();
        let because = holds.iter().map(|o| format!("{} holds for {} object(s)", o.probe, o.findings.len())).collect::<Vec<_>>().join("; ");
        return (CandidateEvidence::Holds, because, objects);
    }
    if outcomes.iter().all(|o| o.verdict == Verdict::DoesNotHold) {
        let ids: Vec<&str> = outcomes.iter().map(|o| o.probe.as_str()).collect();
        return (CandidateEvidence::DoesNotHold, format!("{} found nothing", ids.join(", ")), Vec::new());
    }
    let why: Vec<String> = outcomes
        .iter()
        .filter(|o| o.verdict == Verdict::Unknown)
        .map(|o| {
            let kinds: Vec<&str> = o.missing.iter().map(|(k, _)| k.plural()).collect();
            format!("{} could not read {}", o.probe, kinds.join(", "))
        })
        .collect();
    (CandidateEvidence::Unknown, why.join("; "), Vec::new())
}

/// Options of a verification.
#[derive(Debug, Clone, Copy)]
pub struct VerifyOptions {
    /// Overrides the cluster's version for the diagnosis and probe filtering.
    pub k8s_version: Option<Version>,
    /// How many diagnosis candidates to check.
    pub top: usize,
}

/// The kinds the probes of `text`'s top candidates need (what `verify "<symptom>"` reads),
/// in [`ResourceKind::ALL`] order.
///
/// # Errors
/// The diagnosis's errors (empty or oversized text).
pub fn kinds_for_symptom(engine: &Engine, text: &str, opts: VerifyOptions, cluster_version: Option<Version>) -> Result<Vec<ResourceKind>, DiagnoseError> {
    let d = engine.diagnose(text, DiagnoseOptions { k8s_version: opts.k8s_version.or(cluster_version), top: opts.top.max(1) })?;
    let need: BTreeSet<ResourceKind> =
        d.candidates.iter().flat_map(|c| probes::for_failure_mode(&c.id)).flat_map(|p| p.needs.iter().copied()).collect();
    Ok(ResourceKind::ALL.iter().copied().filter(|k| need.contains(k)).collect())
}

/// `verify "<symptom>"`: diagnoses `text` at the cluster's version, runs the probes of the
/// top candidates over the collected state and re-ranks them ([`rerank`]).
///
/// # Errors
/// The diagnosis's errors (empty or oversized text).
pub fn verify_symptom(
    engine: &Engine,
    c: &Collected,
    cluster: &str,
    scope: &Scope,
    text: &str,
    opts: VerifyOptions,
) -> Result<VerifyReport, DiagnoseError> {
    verify(engine, c, cluster, scope, text, opts, None)
}

/// `verify KIND/NAME`: builds a symptom text from the target's status and events (see
/// [`object_text`]), diagnoses it, runs the probes relevant to the target (whose subjects
/// include its kind or the kind of an object related to it), keeps only findings about
/// the target and its related objects, and re-ranks; failure modes whose probes hold but
/// that the diagnosis did not name are added (after the diagnosis's own holding ones).
///
/// # Errors
/// The diagnosis's errors (cannot happen for a non-empty text; kept for symmetry).
pub fn verify_object(engine: &Engine, c: &Collected, cluster: &str, scope: &Scope, opts: VerifyOptions) -> Result<VerifyReport, DiagnoseError> {
    let text = object_text(c);
    verify(engine, c, cluster, scope, &text, opts, c.target.clone())
}

fn verify(
    engine: &Engine,
    c: &Collected,
    cluster: &str,
    scope: &Scope,
    text: &str,
    opts: VerifyOptions,
    target: Option<ObjectRef>,
) -> Result<VerifyReport, DiagnoseError> {
    let kb = engine.knowledge();
    let k8s = opts.k8s_version.or(c.state.version);
    let d = engine.diagnose(text, DiagnoseOptions { k8s_version: k8s, top: opts.top.max(1) })?;
    let related = &c.related;
    let keep = |f: &Finding| target.is_none() || related.contains(&f.object);
    // The probes to run: the candidates', plus for an object every probe relevant to it.
    let mut list: Vec<&'static Probe> = Vec::new();
    for cand in &d.candidates {
        list.extend(probes::for_failure_mode(&cand.id));
    }
    if target.is_some() {
        let kinds: BTreeSet<ResourceKind> = related.iter().map(|o| o.kind).collect();
        list.extend(probes::all().into_iter().filter(|p| p.subjects.iter().any(|k| kinds.contains(k))));
    }
    list.sort_by_key(|p| p.id);
    list.dedup_by_key(|p| p.id);
    let (outcomes, skipped) = run_probes(kb, c, &list, k8s, &keep);
    let mut cands: Vec<VerifiedCandidate> = d
        .candidates
        .iter()
        .map(|cand| {
            let mine: Vec<ProbeOutcome> = outcomes.iter().filter(|o| o.failure_mode == cand.id).cloned().collect();
            let (evidence, because, objects) = judge(&mine);
            VerifiedCandidate {
                rank: cand.rank,
                diagnosis_rank: Some(cand.rank),
                id: cand.id.clone(),
                title: cand.title.clone(),
                confidence: cand.confidence,
                evidence,
                because,
                objects,
                probes: mine,
                mechanism: mechanism(kb, &cand.id),
            }
        })
        .collect();
    let (mut groups, unknown, summary) = summarize(&outcomes, skipped);
    let mut also = Vec::new();
    for g in groups.drain(..) {
        if cands.iter().any(|c| c.id == g.failure_mode) {
            continue;
        }
        if target.is_some() {
            let mine: Vec<ProbeOutcome> = outcomes.iter().filter(|o| o.failure_mode == g.failure_mode).cloned().collect();
            let (evidence, because, objects) = judge(&mine);
            let m = mechanism(kb, &g.failure_mode);
            cands.push(VerifiedCandidate {
                rank: 0,
                diagnosis_rank: None,
                id: g.failure_mode.clone(),
                title: m.as_ref().map(|m| m.title.clone()).unwrap_or_default(),
                confidence: 0.0,
                evidence,
                because,
                objects,
                probes: mine,
                mechanism: m,
            });
        } else {
            let mut g = g;
            fill_group(kb, &mut g);
            also.push(g);
        }
    }
    rerank(&mut cands);
    let mut notices = c.notices.clone();
    notices.extend(d.notices.iter().cloned());
    let mut r = VerifyReport {
        scope: String::new(),
        conclusion: String::new(),
        source: source(c, cluster, scope, k8s),
        input: text.to_string(),
        target,
        candidates: cands,
        also_found: also,
        unknown: unknown_probes(unknown),
        unavailable: unavailable(c),
        notices,
        summary,
    };
    r.describe();
    Ok(r)
}

/// A symptom text for the target of a [`Collected`]: its kind and name, the `reason` and
/// `message` strings under its `status` (conditions, container states), exit codes, and
/// its events as `kubectl describe` prints them (`Warning  Reason  message`).
pub fn object_text(c: &Collected) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let Some(t) = &c.target else { return s };
    let _ = writeln!(s, "{}", t);
    if let Some(status) = target_status(c, t) {
        let mut lines = Vec::new();
        walk_status(&status, "status", &mut lines);
        for l in lines {
            let _ = writeln!(s, "{l}");
        }
    }
    let mut events: Vec<_> = c
        .state
        .events
        .iter()
        .filter(|e| e.involved_object.name.as_deref() == Some(t.name.as_str()) && e.involved_object.kind.as_deref() == Some(t.kind.kind()))
        .collect();
    events.sort_by_key(|e| e.last_timestamp.as_ref().map(|t| t.0));
    if !events.is_empty() {
        let _ = writeln!(s, "Events:");
    }
    for e in events {
        let _ = writeln!(
            s,
            "  {}  {}  {}",
            e.type_.as_deref().unwrap_or("Normal"),
            e.reason.as_deref().unwrap_or(""),
            e.message.as_deref().unwrap_or("").trim()
        );
    }
    s
}

fn target_status(c: &Collected, t: &ObjectRef) -> Option<serde_json::Value> {
    let same = |m: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta| {
        m.name.as_deref() == Some(t.name.as_str()) && m.namespace == t.namespace
    };
    macro_rules! status_of {
        ($($k:ident => $f:ident),+) => {
            match t.kind {
                $(ResourceKind::$k => c.state.$f.iter().find(|o| same(&o.metadata)).and_then(|o| serde_json::to_value(&o.status).ok()),)+
                _ => None,
            }
        };
    }
    status_of!(Pod => pods, Node => nodes, Service => services, PersistentVolumeClaim => persistent_volume_claims,
        PersistentVolume => persistent_volumes, Deployment => deployments, ReplicaSet => replica_sets,
        StatefulSet => stateful_sets, DaemonSet => daemon_sets, Job => jobs, CronJob => cron_jobs,
        HorizontalPodAutoscaler => horizontal_pod_autoscalers, Namespace => namespaces, APIService => api_services,
        CustomResourceDefinition => custom_resource_definitions, PodDisruptionBudget => pod_disruption_budgets)
}

fn walk_status(v: &serde_json::Value, path: &str, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                match (k.as_str(), x) {
                    ("reason" | "message" | "phase" | "exitCode" | "signal", serde_json::Value::String(s)) if !s.is_empty() => {
                        out.push(format!("{path}.{k}: {s}"))
                    }
                    ("exitCode" | "signal", serde_json::Value::Number(n)) => out.push(format!("{path}.{k}: {n}")),
                    _ => walk_status(x, &format!("{path}.{k}"), out),
                }
            }
        }
        serde_json::Value::Array(a) => {
            for x in a {
                let label = x.get("type").or_else(|| x.get("name")).and_then(serde_json::Value::as_str).unwrap_or("");
                walk_status(x, &format!("{path}[{label}]"), out);
            }
        }
        _ => {}
    }
}

impl ScanReport {
    /// Fills `scope` and `conclusion` from the rest (again after redaction).
    pub fn describe(&mut self) {
        self.scope = self.source.scope();
        let s = &self.summary;
        self.conclusion = if self.findings.is_empty() {
            format!(
                "no failure mode found in {}: {} probe(s) ran over {}; not covered: {}",
                self.source.short_scope(),
                s.probes,
                self.source.objects_read(),
                not_covered(&self.source, s, &self.unknown)
            )
        } else {
            format!(
                "{} failure mode(s) found in {}, {} object(s) affected; not covered: {}",
                s.failure_modes,
                self.source.short_scope(),
                s.objects,
                not_covered(&self.source, s, &self.unknown)
            )
        };
    }

    /// Masks names, namespaces and IPs in every cluster-derived string (knowledge text is
    /// left as is).
    pub fn redact(&mut self, r: &Redactor) {
        self.source.cluster = r.text(&self.source.cluster);
        self.source.namespace = self.source.namespace.as_deref().map(|n| r.namespace(n));
        for g in &mut self.findings {
            for f in &mut g.objects {
                r.finding(f);
            }
        }
        redact_tail(r, &mut self.unknown, &mut self.unavailable, &mut self.notices);
        self.describe();
    }
}

/// Masks the parts scan and verify reports share: why probes could not decide, the kinds
/// that could not be read, and the notices.
fn redact_tail(r: &Redactor, unknown: &mut [UnknownProbe], unavailable: &mut [UnavailableKind], notices: &mut [String]) {
    for u in unknown {
        for m in &mut u.missing {
            m.reason = r.text(&m.reason);
        }
    }
    for u in unavailable {
        u.reason = r.text(&u.reason);
    }
    for n in notices {
        *n = r.text(n);
    }
}

impl VerifyReport {
    /// Fills `scope` and `conclusion` from the rest (again after redaction).
    pub fn describe(&mut self) {
        self.scope = self.source.scope();
        let holds = self.candidates.iter().filter(|c| c.evidence == CandidateEvidence::Holds).count();
        let found = if holds == 0 {
            format!("no candidate holds in {} ({} checked)", self.source.short_scope(), self.candidates.len())
        } else {
            format!("{holds} of {} candidate(s) hold in {}", self.candidates.len(), self.source.short_scope())
        };
        self.conclusion = format!(
            "{found}: {} probe(s) ran over {}; not covered: {}",
            self.summary.probes,
            self.source.objects_read(),
            not_covered(&self.source, &self.summary, &self.unknown)
        );
    }

    /// As [`ScanReport::redact`], plus the input text and the target.
    pub fn redact(&mut self, r: &Redactor) {
        self.source.cluster = r.text(&self.source.cluster);
        self.source.namespace = self.source.namespace.as_deref().map(|n| r.namespace(n));
        self.input = r.text(&self.input);
        if let Some(t) = &mut self.target {
            r.object(t);
        }
        for c in &mut self.candidates {
            c.because = r.text(&c.because);
            for f in &mut c.objects {
                r.finding(f);
            }
            for o in &mut c.probes {
                for f in &mut o.findings {
                    r.finding(f);
                }
                for (_, u) in &mut o.missing {
                    u.reason = r.text(&u.reason);
                }
            }
        }
        for g in &mut self.also_found {
            for f in &mut g.objects {
                r.finding(f);
            }
        }
        redact_tail(r, &mut self.unknown, &mut self.unavailable, &mut self.notices);
        self.describe();
    }
}
