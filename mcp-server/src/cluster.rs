//! The cluster tools `verify_cluster` and `scan_cluster`: offered only when the server was
//! started with cluster access ([`ClusterAccess`]), read-only, open-world for a live cluster.
//! Their wire types are here (the report types of `kubewhy-cluster` converted), so the
//! cluster crate knows nothing of JSON Schema.

use kubewhy_cluster::collect;
use kubewhy_cluster::redact::Redactor;
use kubewhy_cluster::report::{self, FindingGroup, Mechanism, ScanReport, UnknownProbe, VerifyOptions, VerifyReport};
use kubewhy_cluster::{Cluster, Finding, Scope};
use kubewhy_engine::model::Version;
use kubewhy_engine::Engine;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// Cluster access the server was started with.
#[derive(Debug)]
pub struct ClusterAccess {
    /// The cluster (live or snapshot), read-only.
    pub cluster: Cluster,
    /// Mask names, namespaces and IPs in every result (`--redact`).
    pub redact: bool,
}

/// Parameters of `verify_cluster`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifyClusterParams {
    /// An object as kubectl names it (`pod/web-0`, `deployment/web`, `node/n1`) to diagnose from its status, events, owners and dependencies; or leave empty and give `symptom`.
    #[serde(default)]
    pub object: Option<String>,
    /// A symptom text (error, events, describe output) to diagnose and then check against the cluster; used when `object` is not given.
    #[serde(default)]
    pub symptom: Option<String>,
    /// The namespace (the object's, or the one to check for a symptom); default: the context's namespace (a snapshot: every namespace).
    #[serde(default)]
    pub namespace: Option<String>,
    /// Check every namespace (symptom only).
    #[serde(default)]
    pub all_namespaces: Option<bool>,
    /// Candidates to check, 1 to 10 (default 5).
    #[serde(default)]
    pub top: Option<u32>,
    /// Override the cluster's Kubernetes version ("1.30").
    #[serde(default)]
    pub k8s_version: Option<String>,
}

/// Parameters of `scan_cluster`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScanClusterParams {
    /// The namespace to scan; default: the context's namespace (a snapshot: every namespace). Cluster-scoped kinds are always read.
    #[serde(default)]
    pub namespace: Option<String>,
    /// Scan every namespace.
    #[serde(default)]
    pub all_namespaces: Option<bool>,
    /// Override the cluster's Kubernetes version ("1.30").
    #[serde(default)]
    pub k8s_version: Option<String>,
}

/// Where the state came from.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SourceOut {
    /// `live cluster https://…` or `snapshot PATH`.
    pub cluster: String,
    /// The namespace read (null with all_namespaces).
    pub namespace: Option<String>,
    /// Whether every namespace was read.
    pub all_namespaces: bool,
    /// The server's gitVersion.
    pub server_version: Option<String>,
    /// The version used to filter the knowledge.
    pub k8s_version: Option<String>,
    /// API requests sent.
    pub api_calls: u64,
}

/// One field value of one object.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct EvidenceOut {
    /// `Kind namespace/name`.
    pub object: String,
    /// Field path.
    pub field: String,
    /// The value read.
    pub value: String,
}

/// One affected object.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FindingOut {
    /// `Kind namespace/name`.
    pub object: String,
    /// What is wrong with it.
    pub summary: String,
    /// The field values that show it.
    pub evidence: Vec<EvidenceOut>,
}

/// A fix from the knowledge.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FixOut {
    /// Entity id.
    pub id: String,
    /// Title.
    pub title: String,
    /// What to do.
    pub action: String,
    /// A command, when known.
    pub command: Option<String>,
    /// Risk.
    pub risk: String,
}

/// A failure mode found, with its mechanism and fixes.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FindingGroupOut {
    /// Failure mode id (explain it for more).
    pub failure_mode: String,
    /// Title.
    pub title: String,
    /// The chain: entity ids from the failure mode to its loop and component, then upstream causes.
    pub mechanism: Vec<String>,
    /// The knowledge's explanation (first paragraph).
    pub explanation: String,
    /// Fixes.
    pub fixes: Vec<FixOut>,
    /// Affected objects.
    pub objects: Vec<FindingOut>,
}

/// A probe that could not decide.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct UnknownOut {
    /// Probe id.
    pub probe: String,
    /// Failure mode it tests.
    pub failure_mode: String,
    /// Why (the missing permission or kind).
    pub reasons: Vec<String>,
}

/// Probe counts.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SummaryOut {
    /// Probes run.
    pub probes: usize,
    /// Holding.
    pub holds: usize,
    /// Not holding.
    pub does_not_hold: usize,
    /// Unknown.
    pub unknown: usize,
    /// Failure modes found.
    pub failure_modes: usize,
    /// Objects affected.
    pub objects: usize,
}

/// Output of `scan_cluster`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ScanClusterOutput {
    /// What was read: every namespace, or one namespace (other namespaces not read).
    pub scope: String,
    /// The answer in one line, with what was and was not covered.
    pub conclusion: String,
    /// Where the state came from.
    pub source: SourceOut,
    /// Failure modes found, most affected objects first.
    pub findings: Vec<FindingGroupOut>,
    /// Probes that could not decide.
    pub unknown: Vec<UnknownOut>,
    /// Notices (missing permissions, missing kinds).
    pub notices: Vec<String>,
    /// Counts.
    pub summary: SummaryOut,
}

/// One candidate after checking it against the cluster.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CandidateOut {
    /// Rank after re-ranking by evidence.
    pub rank: usize,
    /// Rank in the diagnosis (null: found by a probe).
    pub diagnosis_rank: Option<usize>,
    /// Failure mode id.
    pub id: String,
    /// Title.
    pub title: String,
    /// `holds`, `unknown` or `does_not_hold`.
    pub evidence: String,
    /// Why.
    pub because: String,
    /// Affected objects (holds only).
    pub objects: Vec<FindingOut>,
    /// The mechanism chain (entity ids).
    pub mechanism: Vec<String>,
    /// Fixes (holds only).
    pub fixes: Vec<FixOut>,
}

/// Output of `verify_cluster`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct VerifyClusterOutput {
    /// What was read: every namespace, or one namespace (other namespaces not read).
    pub scope: String,
    /// The answer in one line, with what was and was not covered.
    pub conclusion: String,
    /// Where the state came from.
    pub source: SourceOut,
    /// The object verified, when one was given.
    pub object: Option<String>,
    /// Candidates: holds first, then unknown, then does not hold; the diagnosis's order within each.
    pub candidates: Vec<CandidateOut>,
    /// Probes that could not decide.
    pub unknown: Vec<UnknownOut>,
    /// Notices.
    pub notices: Vec<String>,
    /// Counts.
    pub summary: SummaryOut,
}

fn source(s: &report::Source) -> SourceOut {
    SourceOut {
        cluster: s.cluster.clone(),
        namespace: s.namespace.clone(),
        all_namespaces: s.all_namespaces,
        server_version: s.server_version.clone(),
        k8s_version: s.k8s_version.clone(),
        api_calls: s.api_calls,
    }
}

fn finding(f: &Finding) -> FindingOut {
    FindingOut {
        object: f.object.to_string(),
        summary: f.summary.clone(),
        evidence: f.evidence.iter().map(|e| EvidenceOut { object: e.object.to_string(), field: e.field.clone(), value: e.value.clone() }).collect(),
    }
}

fn chain(m: Option<&Mechanism>) -> Vec<String> {
    m.map(|m| std::iter::once(m.id.clone()).chain(m.chain.iter().map(|s| s.id.clone())).collect()).unwrap_or_default()
}

fn fixes(m: Option<&Mechanism>) -> Vec<FixOut> {
    m.map(|m| {
        m.fixes.iter().map(|f| FixOut { id: f.id.clone(), title: f.title.clone(), action: f.action.clone(), command: f.command.clone(), risk: f.risk.clone() }).collect()
    })
    .unwrap_or_default()
}

fn group(g: &FindingGroup) -> FindingGroupOut {
    FindingGroupOut {
        failure_mode: g.failure_mode.clone(),
        title: g.title.clone(),
        mechanism: chain(g.mechanism.as_ref()),
        explanation: g.mechanism.as_ref().map(|m| m.explanation.clone()).unwrap_or_default(),
        fixes: fixes(g.mechanism.as_ref()),
        objects: g.objects.iter().map(finding).collect(),
    }
}

fn unknown(u: &[UnknownProbe]) -> Vec<UnknownOut> {
    u.iter().map(|u| UnknownOut { probe: u.probe.clone(), failure_mode: u.failure_mode.clone(), reasons: u.missing.iter().map(|m| m.reason.clone()).collect() }).collect()
}

fn summary(s: &report::Summary) -> SummaryOut {
    SummaryOut { probes: s.probes, holds: s.holds, does_not_hold: s.does_not_hold, unknown: s.unknown, failure_modes: s.failure_modes, objects: s.objects }
}

fn scope_of(cluster: &Cluster, namespace: Option<String>, all: Option<bool>) -> Scope {
    cluster.scope(namespace.as_deref(), all == Some(true))
}

fn version_arg(v: Option<&str>) -> Result<Option<Version>, String> {
    match v.map(str::trim).filter(|v| !v.is_empty()) {
        None => Ok(None),
        Some(v) => Version::parse(v).map(Some).map_err(|e| format!("argument `k8s_version`: {e}")),
    }
}

fn findings_md(s: &mut String, objects: &[FindingOut]) {
    for f in objects.iter().take(10) {
        let _ = writeln!(s, "- **{}**: {}", f.object, f.summary);
        for e in f.evidence.iter().take(4) {
            let _ = writeln!(s, "  - `{}` = `{}`", e.field, e.value.replace('`', "'"));
        }
    }
    if objects.len() > 10 {
        let _ = writeln!(s, "- … and {} more", objects.len() - 10);
    }
}

fn tail_md(s: &mut String, unknown: &[UnknownOut], notices: &[String], sum: &SummaryOut) {
    if !unknown.is_empty() {
        let _ = writeln!(s, "\n**Unknown** ({}): {}", unknown.len(), unknown.iter().map(|u| u.probe.as_str()).collect::<Vec<_>>().join(", "));
    }
    for n in notices {
        let _ = writeln!(s, "\n> {n}");
    }
    let _ = writeln!(
        s,
        "\n{} probes: {} hold, {} do not hold, {} unknown; {} failure mode(s), {} object(s).",
        sum.probes, sum.holds, sum.does_not_hold, sum.unknown, sum.failure_modes, sum.objects
    );
}

/// `scan_cluster`: the structured output and its Markdown.
pub(crate) async fn scan_cluster(engine: &Engine, access: &ClusterAccess, p: ScanClusterParams) -> Result<(serde_json::Value, String), String> {
    let k8s = version_arg(p.k8s_version.as_deref())?;
    let scope = scope_of(&access.cluster, p.namespace, p.all_namespaces);
    let c = collect::scan(&access.cluster, &scope, &mut |_, _, _| {}).await;
    let mut r: ScanReport = report::scan(engine, &c, &access.cluster.describe(), &scope, k8s);
    if access.redact {
        r.redact(&Redactor::new(&c.state));
    }
    let out = ScanClusterOutput {
        scope: r.scope.clone(),
        conclusion: r.conclusion.clone(),
        source: source(&r.source),
        findings: r.findings.iter().map(group).collect(),
        unknown: unknown(&r.unknown),
        notices: r.notices.clone(),
        summary: summary(&r.summary),
    };
    let mut md = format!("# Cluster scan\n\nScope: {}\n\n{}\n", out.scope, out.conclusion);
    for g in &out.findings {
        let _ = writeln!(md, "\n## {} (`{}`)\n\nMechanism: {}\n", g.title, g.failure_mode, g.mechanism.join(" → "));
        findings_md(&mut md, &g.objects);
        if let Some(f) = g.fixes.first() {
            let _ = writeln!(md, "\nFix: {}: {}", f.title, f.action);
        }
    }
    tail_md(&mut md, &out.unknown, &out.notices, &out.summary);
    serde_json::to_value(&out).map(|v| (v, md)).map_err(|e| format!("internal error: {e}"))
}

/// `verify_cluster`: the structured output and its Markdown.
pub(crate) async fn verify_cluster(engine: &Engine, access: &ClusterAccess, p: VerifyClusterParams) -> Result<(serde_json::Value, String), String> {
    let k8s = version_arg(p.k8s_version.as_deref())?;
    let top = p.top.unwrap_or(5);
    if !(1..=10).contains(&top) {
        return Err(format!("argument `top` must be between 1 and 10, not {top}"));
    }
    let opts = VerifyOptions { k8s_version: k8s, top: top as usize };
    let cluster = &access.cluster;
    let object = p.object.as_deref().map(str::trim).filter(|o| !o.is_empty());
    let symptom = p.symptom.as_deref().map(str::trim).filter(|s| !s.is_empty());
    let (c, scope, r) = match (object, symptom) {
        (Some(o), _) => {
            let (kind, name) = kubewhy_cluster::source::parse_object(o)
                .ok_or_else(|| format!("argument `object`: `{o}` is not KIND/NAME of a kind kubewhy reads (pod/web-0, deployment/web, node/n1; Secrets are never read)"))?;
            let scope = scope_of(cluster, p.namespace, None);
            let ns = scope.namespace().unwrap_or(cluster.default_namespace()).to_string();
            let c = collect::object(cluster, kind, &ns, &name).await.map_err(|e| format!("argument `object`: {e}"))?;
            let r = report::verify_object(engine, &c, &cluster.describe(), &scope, opts).map_err(|e| e.to_string())?;
            (c, scope, r)
        }
        (None, Some(text)) => {
            let scope = scope_of(cluster, p.namespace, p.all_namespaces);
            let version = cluster.server_version().await.ok().flatten().map(|(v, _)| v);
            let kinds = report::kinds_for_symptom(engine, text, opts, version).map_err(|e| format!("argument `symptom`: {e}"))?;
            let c = collect::kinds(cluster, &scope, &kinds, &mut |_, _, _| {}).await;
            let r = report::verify_symptom(engine, &c, &cluster.describe(), &scope, text, opts).map_err(|e| format!("argument `symptom`: {e}"))?;
            (c, scope, r)
        }
        (None, None) => return Err("give `object` (pod/web-0) or `symptom` (an error message or events)".into()),
    };
    let _ = scope;
    let mut r: VerifyReport = r;
    if access.redact {
        r.redact(&Redactor::new(&c.state));
    }
    let out = VerifyClusterOutput {
        scope: r.scope.clone(),
        conclusion: r.conclusion.clone(),
        source: source(&r.source),
        object: r.target.as_ref().map(|t| t.to_string()),
        candidates: r
            .candidates
            .iter()
            .map(|c| CandidateOut {
                rank: c.rank,
                diagnosis_rank: c.diagnosis_rank,
                id: c.id.clone(),
                title: c.title.clone(),
                evidence: serde_json::to_value(c.evidence).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default(),
                because: c.because.clone(),
                objects: c.objects.iter().map(finding).collect(),
                mechanism: chain(c.mechanism.as_ref()),
                fixes: if c.evidence == report::CandidateEvidence::Holds { fixes(c.mechanism.as_ref()) } else { Vec::new() },
            })
            .collect(),
        unknown: unknown(&r.unknown),
        notices: r.notices.clone(),
        summary: summary(&r.summary),
    };
    let what = out.object.clone().unwrap_or_else(|| "symptom".into());
    let mut md = format!("# Verify {what}\n\nScope: {}\n\n{}\n\nRe-ranked by cluster evidence: holds, then unknown, then does not hold.\n", out.scope, out.conclusion);
    for c in &out.candidates {
        let _ = writeln!(md, "\n{}. **{}** (`{}`): {}: {}", c.rank, c.title, c.id, c.evidence.replace('_', " "), c.because);
        findings_md(&mut md, &c.objects);
        if let Some(f) = c.fixes.first() {
            let _ = writeln!(md, "   Fix: {}: {}", f.title, f.action);
        }
    }
    tail_md(&mut md, &out.unknown, &out.notices, &out.summary);
    serde_json::to_value(&out).map(|v| (v, md)).map_err(|e| format!("internal error: {e}"))
}
