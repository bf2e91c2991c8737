//! `kubewhy scan` and `kubewhy verify`: argument structs, running the collectors of
//! `kubewhy-cluster` over a live cluster or a snapshot, and rendering the reports
//! (text, JSON, Markdown). No probing logic lives here.
//!
//! Exit codes of these commands: 0 nothing found (scan: no failure mode holds; verify: no
//! candidate holds); 1 something found (scan: at least one failure mode holds; verify: a
//! candidate's probe holds); 2 bad usage or input (an unreadable snapshot or kubeconfig,
//! an object that does not exist); 3 the knowledge could not be loaded; 4 the cluster could
//! not be read at all (no configuration, or every read failed).

use crate::{engine, fail, parse_version, write_out, Io, Output, EXIT_OK, EXIT_PROBLEM, EXIT_USAGE};
use kubewhy_cluster::collect::{self, Collected};
use kubewhy_cluster::live::LiveOptions;
use kubewhy_cluster::redact::Redactor;
use kubewhy_cluster::report::{self, CandidateEvidence, FindingGroup, Mechanism, ScanReport, Summary, UnknownProbe, VerifyOptions, VerifyReport};
use kubewhy_cluster::{Cluster, Finding, ResourceKind, Scope};
use kubewhy_engine::model::Version;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Exit code: the cluster could not be read at all.
pub const EXIT_CLUSTER: i32 = 4;

/// Where the cluster state comes from (every cluster command takes these).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ClusterArgs {
    /// Read this snapshot instead of a live cluster: a directory or file of `kubectl get -o json|yaml` lists, or `kubectl cluster-info dump` output (a file or its --output-directory).
    #[arg(long, value_name = "DIR|FILE", conflicts_with_all = ["kubeconfig", "context"])]
    pub snapshot: Option<PathBuf>,
    /// The kubeconfig file (default: $KUBECONFIG, ~/.kube/config, then the in-cluster service account).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use (default: the current context).
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
    /// Timeout of each API request, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=600))]
    pub request_timeout: u64,
    /// Mask object names, namespaces and IP addresses in the output (stable pseudonyms within one run).
    #[arg(long)]
    pub redact: bool,
}

impl ClusterArgs {
    fn live(&self) -> LiveOptions {
        LiveOptions { kubeconfig: self.kubeconfig.clone(), context: self.context.clone(), timeout: Some(Duration::from_secs(self.request_timeout)) }
    }
}

/// Cluster access of `kubewhy mcp` and `kubewhy serve`: off unless `--cluster` or one of
/// `--snapshot`, `--kubeconfig`, `--context` is given.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct McpClusterArgs {
    /// Offer the cluster tools (verify_cluster, scan_cluster) over the current kubeconfig context.
    #[arg(long)]
    pub cluster: bool,
    /// Where to read (any of these also turns the cluster tools on).
    #[command(flatten)]
    pub source: ClusterArgs,
}

impl McpClusterArgs {
    /// The cluster access, or `None` when not asked for. Opens the snapshot or reads the
    /// kubeconfig (no request is sent yet).
    ///
    /// # Errors
    /// An unreadable snapshot or unusable kubeconfig.
    pub async fn access(&self) -> anyhow::Result<Option<std::sync::Arc<kubewhy_mcp::cluster::ClusterAccess>>> {
        let s = &self.source;
        if !(self.cluster || s.snapshot.is_some() || s.kubeconfig.is_some() || s.context.is_some()) {
            return Ok(None);
        }
        let cluster = open(s).await?;
        tracing::info!(cluster = %cluster.describe(), "cluster tools enabled");
        Ok(Some(std::sync::Arc::new(kubewhy_mcp::cluster::ClusterAccess { cluster, redact: s.redact })))
    }
}

/// `-n NS` / `-A`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ScopeArgs {
    /// The namespace (default: the kubeconfig context's namespace, else `default`; a snapshot: every namespace).
    #[arg(short = 'n', long, value_name = "NS")]
    pub namespace: Option<String>,
    /// Every namespace.
    #[arg(short = 'A', long, conflicts_with = "namespace")]
    pub all_namespaces: bool,
}

impl ScopeArgs {
    fn scope(&self, cluster: &Cluster) -> Scope {
        cluster.scope(self.namespace.as_deref(), self.all_namespaces)
    }
}

/// `kubewhy scan`.
#[derive(Debug, Clone, clap::Args)]
pub struct ScanArgs {
    /// Where to read.
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Which namespaces.
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// Filter the knowledge at this Kubernetes version instead of the cluster's ("1.30").
    #[arg(long = "k8s-version", value_name = "VERSION", value_parser = parse_version)]
    pub k8s_version: Option<Version>,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t = Output::Text)]
    pub output: Output,
}

/// `kubewhy verify`.
#[derive(Debug, Clone, clap::Args)]
pub struct VerifyArgs {
    /// An object as kubectl names it (`pod/web-0`, `po/web-0`, `deployment/web`, `node/n1`), or a symptom text (`-` reads standard input).
    #[arg(required = true, num_args = 1.., value_name = "KIND/NAME|SYMPTOM")]
    pub what: Vec<String>,
    /// Where to read.
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Which namespaces (the object's namespace for KIND/NAME).
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// How many diagnosis candidates to check.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u16).range(1..=20))]
    pub top: u16,
    /// Diagnose at this Kubernetes version instead of the cluster's ("1.30").
    #[arg(long = "k8s-version", value_name = "VERSION", value_parser = parse_version)]
    pub k8s_version: Option<Version>,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t = Output::Text)]
    pub output: Output,
}

/// `KIND/NAME` as kubectl takes it (one word); anything else is a symptom text.
pub fn parse_target(words: &[String]) -> Option<(ResourceKind, String)> {
    let [w] = words else { return None };
    kubewhy_cluster::source::parse_object(w)
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    crate::runtime()
}

async fn open(args: &ClusterArgs) -> anyhow::Result<Cluster> {
    kubewhy_cluster::source::open(args.snapshot.as_deref(), &args.live()).await.map_err(|e| match e {
        kubewhy_cluster::source::OpenError::Connect(kubewhy_cluster::live::ConnectError::Config(m)) => {
            fail(EXIT_CLUSTER, format!("no usable cluster configuration: {m} (pass --kubeconfig FILE, --context NAME, or --snapshot DIR)"))
        }
        other => fail(EXIT_USAGE, other.to_string()),
    })
}

/// True when nothing at all could be read from a live cluster.
fn unreachable(cluster: &Cluster, c: &Collected) -> bool {
    cluster.is_live() && c.state.loaded.is_empty() && c.state.version.is_none() && !c.state.unavailable.is_empty()
}

fn progress_bar(io: &Io<'_>, len: usize) -> Option<indicatif::ProgressBar> {
    if !io.stderr_is_terminal {
        return None;
    }
    let b = indicatif::ProgressBar::new(len as u64);
    b.set_style(indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} kinds {msg} {elapsed}").unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()));
    Some(b)
}

/// Runs `kubewhy scan`.
pub(crate) fn scan(a: ScanArgs, kdir: Option<&Path>, builtin: bool, color: bool, io: &mut Io<'_>) -> anyhow::Result<i32> {
    let engine = engine(kdir, builtin)?;
    let rt = runtime()?;
    let bar = progress_bar(io, ResourceKind::ALL.len());
    let (cluster, scope, collected) = rt.block_on(async {
        let cluster = open(&a.cluster).await?;
        let scope = a.scope.scope(&cluster);
        let mut tick = |k: ResourceKind, done: usize, _total: usize| {
            if let Some(b) = &bar {
                b.set_position(done as u64);
                b.set_message(k.plural());
            }
        };
        let c = collect::scan(&cluster, &scope, &mut tick).await;
        anyhow::Ok((cluster, scope, c))
    })?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if unreachable(&cluster, &collected) {
        let why = collected.notices.first().cloned().unwrap_or_default();
        return Err(fail(EXIT_CLUSTER, format!("cannot read the cluster {}: {why}", cluster.describe())));
    }
    let mut r = report::scan(&engine, &collected, &cluster.describe(), &scope, a.k8s_version);
    if a.cluster.redact {
        r.redact(&Redactor::new(&collected.state));
    }
    let text = match a.output {
        Output::Json => serde_json::to_string_pretty(&r)? + "\n",
        Output::Markdown => scan_markdown(&r),
        Output::Text => scan_text(&r),
    };
    write_out(io, &text, color && a.output == Output::Text)?;
    Ok(if r.findings.is_empty() { EXIT_OK } else { EXIT_PROBLEM })
}

/// Runs `kubewhy verify`.
pub(crate) fn verify(a: VerifyArgs, kdir: Option<&Path>, builtin: bool, color: bool, io: &mut Io<'_>) -> anyhow::Result<i32> {
    let target = parse_target(&a.what);
    let text = if target.is_some() { String::new() } else { crate::read_text(&a.what, io.stdin)? };
    if target.is_none() && text.trim().is_empty() {
        return Err(fail(EXIT_USAGE, "empty input: give KIND/NAME (pod/web-0) or a symptom text"));
    }
    let engine = engine(kdir, builtin)?;
    let opts = VerifyOptions { k8s_version: a.k8s_version, top: usize::from(a.top) };
    let rt = runtime()?;
    let (cluster, scope, collected) = rt.block_on(async {
        let cluster = open(&a.cluster).await?;
        let scope = a.scope.scope(&cluster);
        let c = match &target {
            Some((kind, name)) => {
                let ns = scope.namespace().unwrap_or(cluster.default_namespace()).to_string();
                collect::object(&cluster, *kind, &ns, name).await.map_err(|e| match e {
                    e @ collect::CollectError::NotFound(_) => fail(EXIT_USAGE, format!("{e} ({})", cluster.describe())),
                    collect::CollectError::Read(e) => fail(EXIT_CLUSTER, e.to_string()),
                })?
            }
            None => {
                let version = cluster.server_version().await.ok().flatten().map(|(v, _)| v);
                let kinds = report::kinds_for_symptom(&engine, &text, opts, version).map_err(|e| fail(EXIT_USAGE, e.to_string()))?;
                collect::kinds(&cluster, &scope, &kinds, &mut |_, _, _| {}).await
            }
        };
        anyhow::Ok((cluster, scope, c))
    })?;
    if target.is_none() && unreachable(&cluster, &collected) {
        let why = collected.notices.first().cloned().unwrap_or_default();
        return Err(fail(EXIT_CLUSTER, format!("cannot read the cluster {}: {why}", cluster.describe())));
    }
    let mut r = match &target {
        Some(_) => report::verify_object(&engine, &collected, &cluster.describe(), &scope, opts),
        None => report::verify_symptom(&engine, &collected, &cluster.describe(), &scope, &text, opts),
    }
    .map_err(|e| fail(EXIT_USAGE, e.to_string()))?;
    if a.cluster.redact {
        r.redact(&Redactor::new(&collected.state));
    }
    let out = match a.output {
        Output::Json => serde_json::to_string_pretty(&r)? + "\n",
        Output::Markdown => verify_markdown(&r),
        Output::Text => verify_text(&r),
    };
    write_out(io, &out, color && a.output == Output::Text)?;
    Ok(if r.candidates.iter().any(|c| c.evidence == CandidateEvidence::Holds) { EXIT_PROBLEM } else { EXIT_OK })
}

/// The version and request count of the source (the scope is stated on the line before).
fn source_line(s: &report::Source) -> String {
    let version = match (&s.server_version, &s.k8s_version) {
        (Some(v), _) => format!("Kubernetes {v}"),
        (None, Some(v)) => format!("Kubernetes {v}"),
        (None, None) => "Kubernetes version unknown".to_string(),
    };
    let calls = if s.api_calls > 0 { format!(", {} API requests", s.api_calls) } else { String::new() };
    format!("{version}{calls}")
}

fn summary_line(s: &Summary) -> String {
    let na = if s.not_applicable > 0 { format!(", {} not applicable at this version", s.not_applicable) } else { String::new() };
    format!(
        "{} probe(s): {} hold, {} do not hold, {} unknown{na}; {} failure mode(s) found, {} object(s) affected",
        s.probes, s.holds, s.does_not_hold, s.unknown, s.failure_modes, s.objects
    )
}

fn mechanism_line(m: &Mechanism) -> String {
    // The path (failure mode → loop → component), then the upstream causes as a list: they
    // are alternatives to rule out, not a chain of one another.
    let mut s = m.id.clone();
    let mut causes = Vec::new();
    for step in &m.chain {
        if step.relation == "causedBy" {
            causes.push(step.id.as_str());
        } else {
            s.push_str(" → ");
            s.push_str(&step.id);
        }
    }
    if !causes.is_empty() {
        s.push_str("; upstream causes: ");
        s.push_str(&causes.join(", "));
    }
    s
}

fn finding_text(s: &mut String, f: &Finding, indent: &str) {
    let _ = writeln!(s, "{indent}{}: {}", f.object, f.summary);
    for e in &f.evidence {
        let on = if e.object == f.object { String::new() } else { format!("{} ", e.object) };
        let _ = writeln!(s, "{indent}    {on}{} = {}", e.field, e.value);
    }
}

fn group_text(s: &mut String, g: &FindingGroup) {
    let _ = writeln!(s, "\u{1b}[1m✗ {} — {}\u{1b}[0m", g.failure_mode, g.title);
    if let Some(m) = &g.mechanism {
        let _ = writeln!(s, "  mechanism: {}", mechanism_line(m));
        if !m.explanation.is_empty() {
            let _ = writeln!(s, "  {}", m.explanation);
        }
    }
    let _ = writeln!(s, "  affected ({}), probe {}:", g.objects.len(), g.probes.join(", "));
    for f in &g.objects {
        finding_text(s, f, "    ");
    }
    if let Some(m) = &g.mechanism {
        if !m.fixes.is_empty() {
            let _ = writeln!(s, "  fixes:");
        }
        for f in &m.fixes {
            let risk = if f.risk.is_empty() { String::new() } else { format!(" (risk: {})", f.risk) };
            let _ = writeln!(s, "    - {}: {}{risk}", f.title, f.action);
            if let Some(c) = &f.command {
                let _ = writeln!(s, "      $ {c}");
            }
        }
    }
    s.push('\n');
}

/// Probes that could not decide, grouped by the kind they lacked (a probe lacking two kinds is
/// under both): `(kind, why, probes)`, most probes first.
pub fn unknown_groups(unknown: &[UnknownProbe]) -> Vec<(String, String, Vec<String>)> {
    let mut groups: Vec<(String, String, Vec<String>)> = Vec::new();
    for u in unknown {
        if u.missing.is_empty() {
            groups.push(("-".into(), "no verdict".into(), vec![u.probe.clone()]));
        }
        for m in &u.missing {
            match groups.iter_mut().find(|(k, _, _)| *k == m.kind) {
                Some((_, _, probes)) => probes.push(u.probe.clone()),
                None => groups.push((m.kind.clone(), m.reason.clone(), vec![u.probe.clone()])),
            }
        }
    }
    groups.sort_by(|a, b| b.2.len().cmp(&a.2.len()).then_with(|| a.0.cmp(&b.0)));
    groups
}

/// At most this many kinds get a line of their own; the rest share one.
const UNKNOWN_LINES: usize = 6;

/// The unknown section's lines (without the header): one per lacking kind, the rest merged.
fn unknown_lines(unknown: &[UnknownProbe]) -> Vec<String> {
    let groups = unknown_groups(unknown);
    let mut out: Vec<String> = groups.iter().take(UNKNOWN_LINES).map(|(_, why, probes)| format!("{why} — {} probe(s): {}", probes.len(), probe_list(probes))).collect();
    if groups.len() > UNKNOWN_LINES {
        let rest = &groups[UNKNOWN_LINES..];
        let kinds: Vec<&str> = rest.iter().map(|(k, _, _)| k.as_str()).collect();
        let mut probes: Vec<&str> = rest.iter().flat_map(|(_, _, p)| p.iter().map(String::as_str)).collect();
        probes.sort_unstable();
        probes.dedup();
        out.push(format!("{} more kinds not read ({}) — {} probe(s)", kinds.len(), kinds.join(", "), probes.len()));
    }
    out
}

fn probe_list(probes: &[String]) -> String {
    if probes.len() <= 4 {
        probes.join(", ")
    } else {
        format!("{}, … and {} more", probes[..3].join(", "), probes.len() - 3)
    }
}

fn unknown_text(s: &mut String, unknown: &[UnknownProbe]) {
    if unknown.is_empty() {
        return;
    }
    let _ = writeln!(s, "unknown ({} probe(s) could not decide):", unknown.len());
    for l in unknown_lines(unknown) {
        let _ = writeln!(s, "  ? {l}");
    }
    s.push('\n');
}

/// The scan report as text.
pub fn scan_text(r: &ScanReport) -> String {
    let mut s = format!("kubewhy scan: {}\n{}\n{}\n{}\n\n", r.scope, source_line(&r.source), r.conclusion, summary_line(&r.summary));
    for g in &r.findings {
        group_text(&mut s, g);
    }
    unknown_text(&mut s, &r.unknown);
    for n in &r.notices {
        let _ = writeln!(s, "notice: {n}");
    }
    s
}

fn md_finding(s: &mut String, f: &Finding) {
    let _ = writeln!(s, "- **{}**: {}", f.object, f.summary);
    for e in &f.evidence {
        let on = if e.object == f.object { String::new() } else { format!("{} ", e.object) };
        let _ = writeln!(s, "  - {on}`{}` = `{}`", e.field, e.value.replace('`', "'"));
    }
}

fn md_mechanism(s: &mut String, m: &Mechanism) {
    let _ = writeln!(s, "Mechanism: {}\n", mechanism_line(m));
    if !m.explanation.is_empty() {
        let _ = writeln!(s, "{}\n", m.explanation);
    }
}

fn md_fixes(s: &mut String, m: &Mechanism) {
    if m.fixes.is_empty() {
        return;
    }
    let _ = writeln!(s, "\nFixes:\n");
    for f in &m.fixes {
        let risk = if f.risk.is_empty() { String::new() } else { format!(" (risk: {})", f.risk) };
        let _ = writeln!(s, "- {}: {}{risk}", f.title, f.action);
        if let Some(c) = &f.command {
            let _ = writeln!(s, "  `{c}`");
        }
    }
}

/// The scan report as Markdown.
pub fn scan_markdown(r: &ScanReport) -> String {
    let mut s = format!("# kubewhy scan\n\nScope: {}\n\n{} — {}\n\n{}\n\n", r.scope, first_upper(&r.conclusion), source_line(&r.source), summary_line(&r.summary));
    for g in &r.findings {
        let _ = writeln!(s, "## {} (`{}`)\n", g.title, g.failure_mode);
        if let Some(m) = &g.mechanism {
            md_mechanism(&mut s, m);
        }
        let _ = writeln!(s, "Affected ({}):\n", g.objects.len());
        for f in &g.objects {
            md_finding(&mut s, f);
        }
        if let Some(m) = &g.mechanism {
            md_fixes(&mut s, m);
        }
        s.push('\n');
    }
    md_unknown(&mut s, &r.unknown);
    if !r.notices.is_empty() {
        let _ = writeln!(s, "## Notices\n");
        for n in &r.notices {
            let _ = writeln!(s, "- {n}");
        }
        s.push('\n');
    }
    s
}

fn md_unknown(s: &mut String, unknown: &[UnknownProbe]) {
    if unknown.is_empty() {
        return;
    }
    let _ = writeln!(s, "## Unknown ({} probe(s) could not decide)\n", unknown.len());
    for l in unknown_lines(unknown) {
        let _ = writeln!(s, "- {l}");
    }
    s.push('\n');
}

fn first_upper(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

fn evidence_word(e: CandidateEvidence) -> &'static str {
    match e {
        CandidateEvidence::Holds => "holds",
        CandidateEvidence::Unknown => "unknown",
        CandidateEvidence::DoesNotHold => "does not hold",
    }
}

fn first_line(s: &str) -> String {
    let l = s.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    if l.chars().count() > 100 {
        l.chars().take(99).collect::<String>() + "…"
    } else {
        l.to_string()
    }
}

/// The verify report as text.
pub fn verify_text(r: &VerifyReport) -> String {
    let what = match &r.target {
        Some(t) => t.to_string(),
        None => format!("\"{}\"", first_line(&r.input)),
    };
    let mut s = format!("kubewhy verify {what}: {}\n{}\n{}\n{}\n\n", r.scope, source_line(&r.source), r.conclusion, summary_line(&r.summary));
    if r.candidates.is_empty() {
        s.push_str("no candidate failure mode\n\n");
    }
    for c in &r.candidates {
        let from = match c.diagnosis_rank {
            Some(n) => format!("diagnosis #{n}, confidence {:.2}", c.confidence),
            None => "found by a probe".to_string(),
        };
        let mark = match c.evidence {
            CandidateEvidence::Holds => "✗",
            CandidateEvidence::Unknown => "?",
            CandidateEvidence::DoesNotHold => "✓",
        };
        let _ = writeln!(s, "\u{1b}[1m{}. {mark} [{}] {} — {}\u{1b}[0m ({from})", c.rank, evidence_word(c.evidence), c.id, c.title);
        let _ = writeln!(s, "   evidence: {}", c.because);
        for f in &c.objects {
            finding_text(&mut s, f, "   ");
        }
        if let Some(m) = &c.mechanism {
            let _ = writeln!(s, "   mechanism: {}", mechanism_line(m));
            if c.evidence == CandidateEvidence::Holds {
                for f in &m.fixes {
                    let _ = writeln!(s, "   fix: {}: {}", f.title, f.action);
                }
            }
        }
        s.push('\n');
    }
    for g in &r.also_found {
        group_text(&mut s, g);
    }
    unknown_text(&mut s, &r.unknown);
    for n in &r.notices {
        let _ = writeln!(s, "notice: {n}");
    }
    s
}

/// The verify report as Markdown.
pub fn verify_markdown(r: &VerifyReport) -> String {
    let what = match &r.target {
        Some(t) => t.to_string(),
        None => first_line(&r.input),
    };
    let mut s = format!(
        "# kubewhy verify: {what}\n\nScope: {}\n\n{} — {}\n\n{}\n\nCandidates re-ranked by cluster evidence (holds, then unknown, then does not hold).\n\n",
        r.scope,
        first_upper(&r.conclusion),
        source_line(&r.source),
        summary_line(&r.summary)
    );
    for c in &r.candidates {
        let _ = writeln!(s, "## {}. {} (`{}`): {}\n", c.rank, c.title, c.id, evidence_word(c.evidence));
        let _ = writeln!(s, "Evidence: {}\n", c.because);
        for f in &c.objects {
            md_finding(&mut s, f);
        }
        if !c.objects.is_empty() {
            s.push('\n');
        }
        if let Some(m) = &c.mechanism {
            md_mechanism(&mut s, m);
            if c.evidence == CandidateEvidence::Holds {
                md_fixes(&mut s, m);
            }
        }
        s.push('\n');
    }
    md_unknown(&mut s, &r.unknown);
    if !r.notices.is_empty() {
        let _ = writeln!(s, "## Notices\n");
        for n in &r.notices {
            let _ = writeln!(s, "- {n}");
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_as_kubectl_names_them() {
        let t = |s: &str| parse_target(&[s.to_string()]);
        assert_eq!(t("pod/web-0"), Some((ResourceKind::Pod, "web-0".into())));
        assert_eq!(t("po/web-0"), Some((ResourceKind::Pod, "web-0".into())));
        assert_eq!(t("deployment/x"), Some((ResourceKind::Deployment, "x".into())));
        assert_eq!(t("deployments.apps/x"), Some((ResourceKind::Deployment, "x".into())));
        assert_eq!(t("secret/x"), None);
        assert_eq!(t("pod/"), None);
        assert_eq!(t("0/3 nodes are available"), None);
        assert_eq!(parse_target(&["pod/x".into(), "y".into()]), None);
    }
}
