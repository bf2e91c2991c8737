//! Import of authoritative upstream data (feature gates, KEPs, metrics, releases) into
//! generated knowledge files, and the types those files hold.
//!
//! [`import`] reads a copy of the upstream data laid out as in kubewhy's `shared/upstream`
//! folder and returns the generated files (`generated/feature-gates.toml`, `generated/keps.toml`,
//! `generated/metrics.toml`, `generated/releases.toml`) as text. The output depends only on the
//! input files: entries are sorted, so running the import twice gives byte-identical files.
//! Facts only are carried over (names, numbers, versions, types); no upstream prose.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Errors of [`import`].
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// An input file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// An input file is not in the expected format.
    #[error("{path}: {message}")]
    Format {
        /// The file (and line where known).
        path: String,
        /// What is wrong.
        message: String,
    },
}

/// One step of a feature gate's lifecycle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GateStep {
    /// Minor version the step starts at ("1.29").
    pub version: String,
    /// `Alpha`, `Beta`, `GA` or `Deprecated`.
    pub stage: String,
    /// Default value from this version on, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<bool>,
    /// Whether the gate is locked to its default from this version on, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locked: Option<bool>,
    /// Where this step comes from when not from the gate's `source` (a step of the Kubernetes
    /// website's page for the gate, before the versions the feature list covers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// A feature gate (`feature-gate/<name>`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeatureGate {
    /// The gate's name, e.g. `SidecarContainers`.
    pub name: String,
    /// KEP numbers that list this gate.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keps: Vec<u32>,
    /// Whether the gate is in Kubernetes' current versioned feature list. Gates known only from
    /// KEP metadata (removed or renamed since) are `false`, and their steps come from the KEP's
    /// alpha/beta/stable milestones with unknown defaults.
    pub in_feature_list: bool,
    /// Whether the Kubernetes website's page marks the gate removed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub removed: bool,
    /// The last minor version the website's page lists the gate in (set for removed gates).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub last_version: String,
    /// Lifecycle steps, oldest first.
    pub step: Vec<GateStep>,
    /// Where the facts come from: the feature list, the website's page for the gate
    /// (`kubernetes/website:content/…/feature-gates/<Name>.md`), or a KEP's milestones.
    pub source: String,
}

impl FeatureGate {
    /// The step in force at `minor` (the last step whose version is at most `minor`).
    pub fn at(&self, minor: crate::model::Version) -> Option<&GateStep> {
        self.step
            .iter()
            .rfind(|s| crate::model::Version::parse(&s.version).is_ok_and(|v| v <= minor))
    }

    /// The first version at which the gate reached `stage` (case-insensitive; `stable` = `GA`).
    pub fn first_at_stage(&self, stage: &str) -> Option<&str> {
        let want = normalize_stage(stage);
        self.step.iter().find(|s| normalize_stage(&s.stage) == want).map(|s| s.version.as_str())
    }
}

/// `alpha`, `beta`, `ga` (for GA, stable, generally available) or `deprecated`.
pub fn normalize_stage(s: &str) -> String {
    match s.to_ascii_lowercase().as_str() {
        "ga" | "stable" | "generally available" => "ga".into(),
        other => other.to_string(),
    }
}

/// A KEP (`kep/<number>`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kep {
    /// The KEP number.
    pub number: u32,
    /// Its title.
    pub title: String,
    /// Other titles under the same number (the number is not unique upstream).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_titles: Vec<String>,
    /// Owning SIG.
    pub sig: String,
    /// Status as written upstream (`implemented`, `implementable`, ...).
    pub status: String,
    /// Stage as written upstream.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stage: String,
    /// Latest milestone.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub latest_milestone: String,
    /// Alpha milestone ("1.28").
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub alpha: String,
    /// Beta milestone.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub beta: String,
    /// Stable milestone.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stable: String,
    /// Deprecated milestone.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub deprecated: String,
    /// Feature gates the KEP lists.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub feature_gates: Vec<String>,
    /// Path of the KEP directory in kubernetes/enhancements.
    pub path: String,
}

/// A metric from upstream (`metric/<name>`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpstreamMetric {
    /// Exposed name.
    pub name: String,
    /// counter, gauge, histogram or summary.
    #[serde(rename = "type")]
    pub metric_type: String,
    /// Stability level as upstream states it (ALPHA, BETA, STABLE, EXPERIMENTAL, ...), if any.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stability: String,
    /// Label names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
    /// Component id that exposes it (inferred from the metric's prefix for Kubernetes metrics).
    pub component: String,
    /// Version in which it was deprecated, if any.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub deprecated_version: String,
    /// `owner/repo:path` where the metric is listed or defined.
    pub source: String,
}

/// A Kubernetes minor release (`release/1.N`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Release {
    /// Minor version ("1.30").
    pub version: String,
    /// Release date (YYYY-MM-DD).
    pub date: String,
    /// End-of-life date, when known.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub eol: String,
    /// Where the date comes from.
    pub source: String,
}

/// The contents of the generated files.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Generated {
    /// Feature gates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub feature_gate: Vec<FeatureGate>,
    /// KEPs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kep: Vec<Kep>,
    /// Metrics.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub metric: Vec<UpstreamMetric>,
    /// Releases.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub release: Vec<Release>,
}

fn read(dir: &Path, rel: &str) -> Result<String, ImportError> {
    let p = dir.join(rel);
    std::fs::read_to_string(&p).map_err(|source| ImportError::Io { path: p.display().to_string(), source })
}

/// Rows of a TSV file with a header: each row as a map from column name to value.
fn tsv(dir: &Path, rel: &str) -> Result<Vec<BTreeMap<String, String>>, ImportError> {
    let text = read(dir, rel)?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split('\t').collect();
    let mut out = Vec::new();
    for (i, line) in lines.enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let cells: Vec<&str> = line.split('\t').collect();
        if cells.len() > header.len() {
            return Err(ImportError::Format { path: format!("{rel}:{}", i + 2), message: format!("{} cells for {} columns", cells.len(), header.len()) });
        }
        out.push(header.iter().zip(cells.iter().chain(std::iter::repeat(&""))).map(|(h, c)| (h.to_string(), c.trim().to_string())).collect());
    }
    Ok(out)
}

/// "v1.28" → "1.28"; anything else that is not a 1.N minor → "".
fn milestone(s: &str) -> String {
    let t = s.trim().trim_start_matches('v');
    match crate::model::Version::parse(t) {
        Ok(v) if v.major == 1 => v.to_string(),
        _ => String::new(),
    }
}

#[derive(Deserialize)]
struct YamlGate {
    name: String,
    #[serde(rename = "versionedSpecs")]
    versioned_specs: Vec<YamlSpec>,
}

#[derive(Deserialize)]
struct YamlSpec {
    default: bool,
    #[serde(rename = "lockToDefault", default)]
    lock_to_default: bool,
    #[serde(rename = "preRelease")]
    pre_release: String,
    version: String,
}

/// One line of `kubernetes/feature-gates-website.jsonl`: a gate's page on the Kubernetes website.
#[derive(Deserialize)]
struct WebsiteGate {
    name: String,
    stages: Vec<WebsiteStage>,
    #[serde(default)]
    removed: bool,
    path: String,
}

#[derive(Deserialize)]
struct WebsiteStage {
    stage: String,
    default: Option<bool>,
    from: String,
    to: Option<String>,
    locked: Option<bool>,
}

/// The website's stage word as the feature list spells it (`stable` is `GA`).
fn website_stage(s: &str) -> String {
    match s.to_ascii_lowercase().as_str() {
        "alpha" => "Alpha".into(),
        "beta" => "Beta".into(),
        "stable" | "ga" => "GA".into(),
        "deprecated" => "Deprecated".into(),
        other => other.to_string(),
    }
}

#[derive(Deserialize)]
struct YamlMetric {
    name: String,
    #[serde(default)]
    subsystem: String,
    #[serde(default)]
    namespace: String,
    #[serde(rename = "type")]
    metric_type: String,
    #[serde(rename = "stabilityLevel", default)]
    stability: String,
    #[serde(default)]
    labels: Vec<String>,
    #[serde(rename = "deprecatedVersion", default)]
    deprecated_version: String,
}

/// The component that exposes a Kubernetes metric, inferred from its name's prefix.
/// Metrics of shared libraries (client-go workqueues, REST clients, leader election, build
/// info) map to `component/client-go`, which every component embeds.
pub fn component_for_metric(name: &str) -> &'static str {
    const MAP: &[(&str, &str)] = &[
        ("kube_pod_resource_", "component/kube-scheduler"),
        ("apiserver_", "component/kube-apiserver"),
        ("aggregator_", "component/kube-apiserver"),
        ("apiextensions_", "component/kube-apiserver"),
        ("authentication_", "component/kube-apiserver"),
        ("authenticated_", "component/kube-apiserver"),
        ("authorization_", "component/kube-apiserver"),
        ("etcd_", "component/kube-apiserver"),
        ("watch_cache_", "component/kube-apiserver"),
        ("field_validation_", "component/kube-apiserver"),
        ("kube_apiserver_", "component/kube-apiserver"),
        ("serviceaccount_", "component/kube-apiserver"),
        ("kubelet_", "component/kubelet"),
        ("prober_", "component/kubelet"),
        ("container_", "component/kubelet"),
        ("pod_cpu_", "component/kubelet"),
        ("pod_memory_", "component/kubelet"),
        ("pod_swap_", "component/kubelet"),
        ("node_cpu_", "component/kubelet"),
        ("node_memory_", "component/kubelet"),
        ("node_swap_", "component/kubelet"),
        ("resource_scrape_", "component/kubelet"),
        ("scrape_error", "component/kubelet"),
        ("plugin_manager_", "component/kubelet"),
        ("reconstruct_volume_", "component/kubelet"),
        ("csi_operations_", "component/kubelet"),
        ("kubeproxy_", "component/kube-proxy"),
        ("scheduler_", "component/kube-scheduler"),
        ("endpoint_slice_", "component/endpointslice-controller"),
        ("node_collector_", "component/node-lifecycle-controller"),
        ("node_ipam_", "component/kube-controller-manager"),
        ("job_controller_", "component/job-controller"),
        ("cronjob_controller_", "component/cronjob-controller"),
        ("replicaset_controller_", "component/replicaset-controller"),
        ("garbagecollector_controller_", "component/garbage-collector"),
        ("horizontal_pod_autoscaler_", "component/horizontal-pod-autoscaler-controller"),
        ("taint_eviction_controller_", "component/taint-eviction-controller"),
        ("attachdetach_controller_", "component/attach-detach-controller"),
        ("attach_detach_controller_", "component/attach-detach-controller"),
        ("pv_collector_", "component/persistentvolume-binder-controller"),
        ("service_controller_", "component/cloud-controller-manager"),
        ("cloud_provider_", "component/cloud-controller-manager"),
        ("node_ipam_controller_", "component/kube-controller-manager"),
        ("ephemeral_volume_controller_", "component/kube-controller-manager"),
        ("resourceclaim_controller_", "component/kube-controller-manager"),
        ("root_ca_cert_publisher_", "component/kube-controller-manager"),
        ("ttl_after_finished_controller_", "component/kube-controller-manager"),
        ("force_delete_", "component/kube-controller-manager"),
        ("retroactive_storageclass_", "component/persistentvolume-binder-controller"),
        ("running_managed_controllers", "component/kube-controller-manager"),
        ("volume_operation_", "component/kubelet"),
        ("storage_operation_", "component/kubelet"),
        ("workqueue_", "component/client-go"),
        ("rest_client_", "component/client-go"),
        ("leader_election_", "component/client-go"),
        ("kubernetes_build_info", "component/client-go"),
        ("kubernetes_feature_enabled", "component/client-go"),
        ("registered_metrics_", "component/client-go"),
        ("disabled_metrics_", "component/client-go"),
        ("hidden_metrics_", "component/client-go"),
        ("kubernetes_healthcheck", "component/client-go"),
        ("kubernetes_healthchecks", "component/client-go"),
    ];
    MAP.iter().filter(|(p, _)| name.starts_with(p)).max_by_key(|(p, _)| p.len()).map(|(_, c)| *c).unwrap_or("component/client-go")
}

/// Reads the upstream data under `dir` (laid out as `shared/upstream`) and builds the generated data.
///
/// # Errors
/// [`ImportError`] when a file is missing or malformed.
pub fn import_data(dir: &Path) -> Result<Generated, ImportError> {
    // KEPs.
    let mut keps: BTreeMap<u32, Kep> = BTreeMap::new();
    let mut gate_keps: BTreeMap<String, BTreeSet<u32>> = BTreeMap::new();
    for row in tsv(dir, "keps/keps.tsv")? {
        let get = |k: &str| row.get(k).cloned().unwrap_or_default();
        let Ok(number) = get("kep_number").parse::<u32>() else { continue };
        if number == 0 {
            continue;
        }
        let gates: Vec<String> = get("feature_gates").split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect();
        for g in &gates {
            gate_keps.entry(g.clone()).or_default().insert(number);
        }
        let kep = Kep {
            number,
            title: get("title"),
            other_titles: Vec::new(),
            sig: get("owning_sig"),
            status: get("status"),
            stage: get("stage"),
            latest_milestone: milestone(&get("latest_milestone")),
            alpha: milestone(&get("alpha")),
            beta: milestone(&get("beta")),
            stable: milestone(&get("stable")),
            deprecated: milestone(&get("deprecated")),
            feature_gates: gates,
            path: get("path"),
        };
        match keps.get_mut(&number) {
            Some(existing) => {
                // The number is not unique upstream: keep the first by path, remember the other title.
                if kep.path < existing.path {
                    let old = std::mem::replace(existing, kep);
                    existing.other_titles.push(old.title);
                } else {
                    existing.other_titles.push(kep.title);
                }
            }
            None => {
                keps.insert(number, kep);
            }
        }
    }

    // Feature gates from the versioned feature list, then gates known only from KEPs.
    let fl = "kubernetes/feature-gates/versioned_feature_list.yaml";
    let yaml: Vec<YamlGate> = serde_yaml_ng::from_str(&read(dir, fl)?).map_err(|e| ImportError::Format { path: fl.into(), message: e.to_string() })?;
    let mut gates: BTreeMap<String, FeatureGate> = BTreeMap::new();
    for g in yaml {
        let step = g
            .versioned_specs
            .iter()
            .map(|s| GateStep { version: s.version.clone(), stage: s.pre_release.clone(), default: Some(s.default), locked: Some(s.lock_to_default), source: None })
            .collect();
        gates.insert(
            g.name.clone(),
            FeatureGate {
                keps: gate_keps.get(&g.name).map(|s| s.iter().copied().collect()).unwrap_or_default(),
                name: g.name,
                in_feature_list: true,
                removed: false,
                last_version: String::new(),
                step,
                source: "kubernetes/kubernetes:test/compatibility_lifecycle/reference/versioned_feature_list.yaml".into(),
            },
        );
    }
    for (name, numbers) in &gate_keps {
        if gates.contains_key(name) || !name.chars().next().is_some_and(|c| c.is_ascii_uppercase()) || name.contains(' ') {
            continue;
        }
        let kep = numbers.iter().next().and_then(|n| keps.get(n));
        let mut step = Vec::new();
        if let Some(k) = kep {
            for (stage, v) in [("Alpha", &k.alpha), ("Beta", &k.beta), ("GA", &k.stable)] {
                if !v.is_empty() {
                    step.push(GateStep { version: v.clone(), stage: stage.into(), default: None, locked: None, source: None });
                }
            }
        }
        gates.insert(
            name.clone(),
            FeatureGate {
                name: name.clone(),
                keps: numbers.iter().copied().collect(),
                in_feature_list: false,
                removed: false,
                last_version: String::new(),
                step,
                source: format!("kubernetes/enhancements:{}/kep.yaml", kep.map(|k| k.path.as_str()).unwrap_or("keps")),
            },
        );
    }

    // The website's per-gate pages: the lifecycle (with defaults) of gates the feature list
    // does not hold (removed ones included), and the steps before the versions it covers. The
    // feature list wins where both speak; KEP milestones (no defaults) give way to the website.
    let wf = "kubernetes/feature-gates-website.jsonl";
    for (i, line) in read(dir, wf)?.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let w: WebsiteGate = serde_json::from_str(line).map_err(|e| ImportError::Format { path: format!("{wf}:{}", i + 1), message: e.to_string() })?;
        let source = format!("kubernetes/website:{}", w.path);
        let steps: Vec<GateStep> = w
            .stages
            .iter()
            .filter_map(|s| {
                let version = milestone(&s.from);
                (!version.is_empty()).then(|| GateStep { version, stage: website_stage(&s.stage), default: s.default, locked: s.locked, source: None })
            })
            .collect();
        let last_version = if w.removed { w.stages.iter().filter_map(|s| s.to.as_deref()).map(milestone).filter(|v| !v.is_empty()).next_back().unwrap_or_default() } else { String::new() };
        match gates.get_mut(&w.name) {
            Some(g) if g.in_feature_list => {
                let first = g.step.first().and_then(|s| crate::model::Version::parse(&s.version).ok());
                let earlier: Vec<GateStep> = steps
                    .into_iter()
                    .filter(|s| first.is_some_and(|f| crate::model::Version::parse(&s.version).is_ok_and(|v| v < f)))
                    .map(|s| GateStep { source: Some(source.clone()), ..s })
                    .collect();
                g.step.splice(0..0, earlier);
            }
            Some(g) => {
                g.step = steps;
                g.source = source;
                g.removed = w.removed;
                g.last_version = last_version;
            }
            None => {
                gates.insert(
                    w.name.clone(),
                    FeatureGate {
                        keps: gate_keps.get(&w.name).map(|s| s.iter().copied().collect()).unwrap_or_default(),
                        name: w.name,
                        in_feature_list: false,
                        removed: w.removed,
                        last_version,
                        step: steps,
                        source,
                    },
                );
            }
        }
    }

    // Metrics: Kubernetes (documentation list, then the newer stable list), etcd, CoreDNS, kube-state-metrics.
    let mut metrics: BTreeMap<String, UpstreamMetric> = BTreeMap::new();
    for (file, source) in [
        ("kubernetes/metrics/documentation-list.yaml", "kubernetes/kubernetes:test/instrumentation/documentation/documentation-list.yaml"),
        ("kubernetes/metrics/stable-metrics-list.yaml", "kubernetes/kubernetes:test/instrumentation/testdata/stable-metrics-list.yaml"),
    ] {
        let list: Vec<YamlMetric> = serde_yaml_ng::from_str(&read(dir, file)?).map_err(|e| ImportError::Format { path: file.into(), message: e.to_string() })?;
        for m in list {
            let name = [m.namespace.as_str(), m.subsystem.as_str(), m.name.as_str()].iter().filter(|s| !s.is_empty()).copied().collect::<Vec<_>>().join("_");
            let entry = UpstreamMetric {
                component: component_for_metric(&name).into(),
                metric_type: m.metric_type.to_ascii_lowercase(),
                stability: m.stability,
                labels: m.labels,
                deprecated_version: milestone(&m.deprecated_version),
                source: source.into(),
                name: name.clone(),
            };
            // The stable list is newer: its stability level wins.
            metrics.insert(name, entry);
        }
    }
    for row in tsv(dir, "etcd/metrics.tsv")? {
        let name = row.get("full_metric_name").cloned().unwrap_or_default();
        metrics.entry(name.clone()).or_insert(UpstreamMetric {
            metric_type: row.get("type").cloned().unwrap_or_default(),
            stability: String::new(),
            labels: row.get("labels").map(|l| l.split(',').filter(|s| !s.is_empty()).map(str::to_string).collect()).unwrap_or_default(),
            component: "component/etcd".into(),
            deprecated_version: String::new(),
            source: format!("etcd-io/etcd:{}", row.get("source_path").cloned().unwrap_or_default()),
            name,
        });
    }
    for row in tsv(dir, "coredns/metrics.tsv")? {
        let name = row.get("metric_name").cloned().unwrap_or_default();
        let code = row.get("code_definition").cloned().unwrap_or_default();
        let source = if code.is_empty() {
            format!("coredns/coredns:{}", row.get("readme_path").cloned().unwrap_or_default())
        } else {
            format!("coredns/coredns:plugin/{}", code.split(':').next().unwrap_or("").trim_start_matches("plugin/"))
        };
        metrics.entry(name.clone()).or_insert(UpstreamMetric {
            metric_type: row.get("type_in_code").cloned().unwrap_or_default(),
            stability: if row.get("note").is_some_and(|n| n.to_ascii_lowercase().contains("deprecat")) { "DEPRECATED".into() } else { String::new() },
            labels: row.get("labels").map(|l| l.split(',').filter(|s| !s.is_empty()).map(str::to_string).collect()).unwrap_or_default(),
            component: "component/coredns".into(),
            deprecated_version: String::new(),
            source,
            name,
        });
    }
    for row in tsv(dir, "kube-state-metrics/metrics.tsv")? {
        let name = row.get("metric_name").cloned().unwrap_or_default();
        metrics.entry(name.clone()).or_insert(UpstreamMetric {
            metric_type: row.get("type").map(|t| t.to_ascii_lowercase()).unwrap_or_default(),
            stability: row.get("stability_normalized").cloned().unwrap_or_default(),
            labels: row.get("labels").map(|l| l.split(',').filter(|s| !s.is_empty()).map(str::to_string).collect()).unwrap_or_default(),
            component: "component/kube-state-metrics".into(),
            deprecated_version: String::new(),
            source: format!("kubernetes/kube-state-metrics:{}", row.get("doc_path").cloned().unwrap_or_default()),
            name,
        });
    }

    // Releases.
    let mut releases = Vec::new();
    for row in tsv(dir, "kubernetes/releases.tsv")? {
        let get = |k: &str| row.get(k).cloned().unwrap_or_default();
        let version = milestone(&get("minor"));
        if version.is_empty() {
            continue;
        }
        releases.push(Release { version, date: get("release_date"), eol: get("eol_date"), source: get("release_date_source") });
    }
    releases.sort_by_key(|r| crate::model::Version::parse(&r.version).ok());

    Ok(Generated {
        feature_gate: gates.into_values().collect(),
        kep: keps.into_values().collect(),
        metric: metrics.into_values().collect(),
        release: releases,
    })
}

/// The generated files for the upstream data under `dir`: `(path relative to knowledge/, text)`.
///
/// # Errors
/// [`ImportError`] when a file is missing or malformed.
pub fn import(dir: &Path) -> Result<Vec<(String, String)>, ImportError> {
    let g = import_data(dir)?;
    let header = |what: &str, from: &str| {
        format!("# Generated by `kubewhy import-upstream` from {from}.\n# Do not edit: change the upstream data or the importer, then run the import again.\n# {what}\n\n")
    };
    let ser = |g: &Generated| toml::to_string(g).map_err(|e| ImportError::Format { path: "generated".into(), message: e.to_string() });
    Ok(vec![
        (
            "generated/feature-gates.toml".into(),
            header(
                &format!("{} feature gates.", g.feature_gate.len()),
                "kubernetes/feature-gates/versioned_feature_list.yaml, kubernetes/feature-gates-website.jsonl and keps/keps.tsv",
            )
                + &ser(&Generated { feature_gate: g.feature_gate.clone(), ..Default::default() })?,
        ),
        (
            "generated/keps.toml".into(),
            header(&format!("{} KEPs.", g.kep.len()), "keps/keps.tsv (kubernetes/enhancements kep.yaml metadata)") + &ser(&Generated { kep: g.kep.clone(), ..Default::default() })?,
        ),
        (
            "generated/metrics.toml".into(),
            header(
                &format!("{} metrics. Kubernetes metrics' components are inferred from their name prefix.", g.metric.len()),
                "kubernetes/metrics/*.yaml, etcd/metrics.tsv, coredns/metrics.tsv and kube-state-metrics/metrics.tsv",
            ) + &ser(&Generated { metric: g.metric.clone(), ..Default::default() })?,
        ),
        (
            "generated/releases.toml".into(),
            header(&format!("{} releases.", g.release.len()), "kubernetes/releases.tsv") + &ser(&Generated { release: g.release.clone(), ..Default::default() })?,
        ),
    ])
}

/// Parses a generated file's text.
///
/// # Errors
/// The TOML error message.
pub fn parse_generated(text: &str) -> Result<Generated, String> {
    toml::from_str(text).map_err(|e| e.to_string())
}
