//! Probes for the `controllers` failure modes: workload conditions the controllers
//! write, quota refusals, namespace deletion, finalizers, disruption budgets, HPA.
//!
//! Condition types and reasons: Deployment `Progressing` / `ProgressDeadlineExceeded`
//! (`kubernetes/kubernetes:pkg/controller/deployment/util/deployment_util.go`), ReplicaSet
//! `ReplicaFailure` / `FailedCreate` (`kubernetes/kubernetes:pkg/controller/replicaset/replica_set_utils.go`),
//! Job `Failed` / `BackoffLimitExceeded` (`kubernetes/kubernetes:pkg/controller/job/job_controller.go`),
//! Namespace `NamespaceDeletionDiscoveryFailure`, `NamespaceContentRemaining`,
//! `NamespaceFinalizersRemaining` (`kubernetes/kubernetes:staging/src/k8s.io/api/core/v1/types.go`,
//! set by `pkg/controller/namespace/deletion/namespaced_resources_deleter.go`), HPA
//! `ScalingActive` / `FailedGetResourceMetric`, `FailedGetContainerResourceMetric`
//! (`kubernetes/kubernetes:pkg/controller/podautoscaler/horizontal.go`).

use super::common::*;
use super::{Evidence, Finding, Probe};
use crate::state::{ClusterState, ObjectRef, ResourceKind};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::Metadata;

/// This area's probes.
pub static PROBES: &[Probe] = &[
    Probe {
        id: "deployment-progress-deadline-exceeded",
        failure_mode: "failure-mode/deployment-progress-deadline-exceeded",
        title: "Deployments whose Progressing condition is False with ProgressDeadlineExceeded",
        needs: &[ResourceKind::Deployment],
        subjects: &[ResourceKind::Deployment],
        check: progress_deadline,
        decided_by_status: None,
    },
    Probe {
        id: "replicaset-failed-create",
        failure_mode: "failure-mode/replicaset-failed-create",
        title: "ReplicaSets whose ReplicaFailure condition says the API server refused their pods (FailedCreate)",
        needs: &[ResourceKind::ReplicaSet],
        subjects: &[ResourceKind::ReplicaSet, ResourceKind::Deployment],
        check: replicaset_failed_create,
        decided_by_status: None,
    },
    Probe {
        id: "resourcequota-exceeded",
        failure_mode: "failure-mode/resourcequota-exceeded",
        title: "controllers whose pod creates are refused with \"exceeded quota\"",
        needs: &[ResourceKind::Event, ResourceKind::ResourceQuota],
        subjects: &[ResourceKind::ReplicaSet, ResourceKind::Job, ResourceKind::StatefulSet, ResourceKind::DaemonSet, ResourceKind::ResourceQuota],
        check: quota_exceeded,
        decided_by_status: None,
    },
    Probe {
        id: "job-backoff-limit-exceeded",
        failure_mode: "failure-mode/job-backoff-limit-exceeded",
        title: "Jobs failed with BackoffLimitExceeded",
        needs: &[ResourceKind::Job],
        subjects: &[ResourceKind::Job],
        check: job_backoff,
        decided_by_status: None,
    },
    Probe {
        id: "namespace-stuck-terminating-finalizers",
        failure_mode: "failure-mode/namespace-stuck-terminating-finalizers",
        title: "Terminating namespaces held by remaining content or finalizers",
        needs: &[ResourceKind::Namespace],
        subjects: &[ResourceKind::Namespace],
        check: namespace_finalizers,
        decided_by_status: None,
    },
    Probe {
        id: "namespace-stuck-terminating-discovery",
        failure_mode: "failure-mode/namespace-stuck-terminating-discovery",
        title: "Terminating namespaces whose deletion is blocked by failing API discovery",
        needs: &[ResourceKind::Namespace],
        subjects: &[ResourceKind::Namespace],
        check: namespace_discovery,
        decided_by_status: None,
    },
    Probe {
        id: "object-stuck-terminating-finalizer",
        failure_mode: "failure-mode/object-stuck-terminating-finalizer",
        title: "objects deleted more than 10 minutes ago that finalizers still keep",
        needs: &[],
        subjects: &[
            ResourceKind::Deployment,
            ResourceKind::ReplicaSet,
            ResourceKind::StatefulSet,
            ResourceKind::DaemonSet,
            ResourceKind::Job,
            ResourceKind::CronJob,
            ResourceKind::Service,
            ResourceKind::PersistentVolume,
            ResourceKind::PersistentVolumeClaim,
            ResourceKind::CustomResourceDefinition,
        ],
        check: object_stuck_finalizer,
        decided_by_status: None,
    },
    Probe {
        id: "pdb-blocks-drain",
        failure_mode: "failure-mode/pdb-blocks-drain",
        title: "PodDisruptionBudgets allowing no disruption that cover a pod on a cordoned node",
        needs: &[ResourceKind::PodDisruptionBudget, ResourceKind::Pod, ResourceKind::Node],
        subjects: &[ResourceKind::PodDisruptionBudget, ResourceKind::Node],
        check: pdb_blocks_drain,
        decided_by_status: None,
    },
    Probe {
        id: "hpa-unable-to-get-metrics",
        failure_mode: "failure-mode/hpa-unable-to-get-metrics",
        title: "HorizontalPodAutoscalers whose ScalingActive condition is False for lack of resource metrics",
        needs: &[ResourceKind::HorizontalPodAutoscaler],
        subjects: &[ResourceKind::HorizontalPodAutoscaler],
        check: hpa_metrics,
        decided_by_status: None,
    },
];

/// A workload condition as `(type, status, reason, message)`.
fn cond_evidence(r: &ObjectRef, type_: &str, status: &str, reason: Option<&str>, message: Option<&str>) -> Vec<Evidence> {
    vec![
        Evidence::new(r.clone(), format!("status.conditions[type={type_}].status"), status),
        Evidence::new(r.clone(), format!("status.conditions[type={type_}].reason"), reason.unwrap_or("")),
        Evidence::new(r.clone(), format!("status.conditions[type={type_}].message"), message.unwrap_or("")),
    ]
}

/// `deployment-progress-deadline-exceeded`: `Progressing=False`, reason
/// `ProgressDeadlineExceeded`.
fn progress_deadline(state: &ClusterState) -> Vec<Finding> {
    let mut out = Vec::new();
    for d in &state.deployments {
        let Some(c) = d.status.as_ref().and_then(|s| s.conditions.as_ref()).and_then(|cs| cs.iter().find(|c| c.type_ == "Progressing")) else {
            continue;
        };
        if c.status != "False" || c.reason.as_deref() != Some("ProgressDeadlineExceeded") {
            continue;
        }
        let r = obj_ref(ResourceKind::Deployment, &d.metadata);
        let mut ev = cond_evidence(&r, "Progressing", &c.status, c.reason.as_deref(), c.message.as_deref());
        let s = d.status.as_ref();
        ev.push(Evidence::new(
            r.clone(),
            "status",
            format!(
                "replicas={} updatedReplicas={} availableReplicas={}",
                s.and_then(|s| s.replicas).unwrap_or(0),
                s.and_then(|s| s.updated_replicas).unwrap_or(0),
                s.and_then(|s| s.available_replicas).unwrap_or(0)
            ),
        ));
        ev.push(Evidence::new(r.clone(), "spec.progressDeadlineSeconds", d.spec.as_ref().and_then(|s| s.progress_deadline_seconds).unwrap_or(600).to_string()));
        out.push(finding(r, "the rollout made no progress within progressDeadlineSeconds and the controller gave up reporting progress".to_string(), ev));
    }
    out
}

/// `replicaset-failed-create`: `ReplicaFailure=True` with reason `FailedCreate` (message:
/// the API server's refusal).
fn replicaset_failed_create(state: &ClusterState) -> Vec<Finding> {
    let mut out = Vec::new();
    for rs in &state.replica_sets {
        let Some(c) = rs.status.as_ref().and_then(|s| s.conditions.as_ref()).and_then(|cs| cs.iter().find(|c| c.type_ == "ReplicaFailure")) else {
            continue;
        };
        if c.status != "True" || c.reason.as_deref() != Some("FailedCreate") {
            continue;
        }
        let r = obj_ref(ResourceKind::ReplicaSet, &rs.metadata);
        let mut ev = cond_evidence(&r, "ReplicaFailure", &c.status, c.reason.as_deref(), c.message.as_deref());
        ev.push(Evidence::new(
            r.clone(),
            "status.replicas",
            format!("{} of {} desired", rs.status.as_ref().map_or(0, |s| s.replicas), rs.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1)),
        ));
        out.push(finding(r, "the API server refuses the ReplicaSet's pod creates, so it cannot reach its desired replicas".to_string(), ev));
    }
    out
}

/// Kinds whose controllers create pods and record `FailedCreate` events.
const POD_CREATORS: &[(&str, ResourceKind)] = &[
    ("ReplicaSet", ResourceKind::ReplicaSet),
    ("Job", ResourceKind::Job),
    ("StatefulSet", ResourceKind::StatefulSet),
    ("DaemonSet", ResourceKind::DaemonSet),
];

/// `resourcequota-exceeded`: `FailedCreate` events whose message holds "exceeded quota: "
/// (any case: older releases wrote "Exceeded"; the quota admission plugin's refusal
/// "exceeded quota: %s, requested: %s, used: %s, limited: %s",
/// `kubernetes/kubernetes:staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go`),
/// one finding per controller, with the quota's used and hard values.
fn quota_exceeded(state: &ClusterState) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    for e in &state.events {
        let o = &e.involved_object;
        let Some((_, rk)) = POD_CREATORS.iter().find(|(k, _)| o.kind.as_deref() == Some(*k)) else { continue };
        let msg = e.message.as_deref().unwrap_or("");
        let Some(at) = msg.to_ascii_lowercase().find("exceeded quota: ") else { continue };
        if e.reason.as_deref() != Some("FailedCreate") {
            continue;
        }
        let r = ObjectRef { kind: *rk, namespace: o.namespace.clone(), name: o.name.clone().unwrap_or_default() };
        if out.iter().any(|f| f.object == r) {
            continue;
        }
        let mut ev = vec![event_evidence(e)];
        // "exceeded quota: NAME, requested: …"
        let qname = msg.get(at + "exceeded quota: ".len()..).and_then(|s| s.split(',').next()).unwrap_or("");
        if let Some(q) = state
            .resource_quotas
            .iter()
            .find(|q| q.metadata.namespace == o.namespace && q.metadata.name.as_deref() == Some(qname))
        {
            let st = q.status.as_ref();
            let show = |m: Option<&std::collections::BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>>| {
                m.map(|m| m.iter().map(|(k, v)| format!("{k}={}", v.0)).collect::<Vec<_>>().join(",")).unwrap_or_default()
            };
            let qr = obj_ref(ResourceKind::ResourceQuota, &q.metadata);
            ev.push(Evidence::new(qr.clone(), "status.hard", show(st.and_then(|s| s.hard.as_ref()))));
            ev.push(Evidence::new(qr, "status.used", show(st.and_then(|s| s.used.as_ref()))));
        }
        out.push(finding(r, format!("ResourceQuota {qname} refuses the controller's new pods: the namespace's quota is used up"), ev));
    }
    out
}

/// `job-backoff-limit-exceeded`: `Failed=True`, reason `BackoffLimitExceeded`.
fn job_backoff(state: &ClusterState) -> Vec<Finding> {
    let mut out = Vec::new();
    for j in &state.jobs {
        let Some(c) = j.status.as_ref().and_then(|s| s.conditions.as_ref()).and_then(|cs| cs.iter().find(|c| c.type_ == "Failed")) else {
            continue;
        };
        if c.status != "True" || c.reason.as_deref() != Some("BackoffLimitExceeded") {
            continue;
        }
        let r = obj_ref(ResourceKind::Job, &j.metadata);
        let mut ev = cond_evidence(&r, "Failed", &c.status, c.reason.as_deref(), c.message.as_deref());
        ev.push(Evidence::new(r.clone(), "spec.backoffLimit", j.spec.as_ref().and_then(|s| s.backoff_limit).unwrap_or(6).to_string()));
        ev.push(Evidence::new(r.clone(), "status.failed", j.status.as_ref().and_then(|s| s.failed).unwrap_or(0).to_string()));
        out.push(finding(r, "the Job's pods failed more often than backoffLimit allows, so the Job is marked Failed and stops retrying".to_string(), ev));
    }
    out
}

fn terminating_namespaces(state: &ClusterState) -> impl Iterator<Item = &k8s_openapi::api::core::v1::Namespace> {
    state.namespaces.iter().filter(|n| n.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Terminating"))
}

fn ns_condition<'a>(n: &'a k8s_openapi::api::core::v1::Namespace, type_: &str) -> Option<&'a k8s_openapi::api::core::v1::NamespaceCondition> {
    n.status.as_ref()?.conditions.as_ref()?.iter().find(|c| c.type_ == type_ && c.status == "True")
}

/// How long (seconds) a namespace may take to delete its content before it counts as stuck.
const NAMESPACE_DELETION_GRACE_SECS: i64 = 600;

/// `namespace-stuck-terminating-finalizers`: phase `Terminating` for more than 10 minutes
/// (`metadata.deletionTimestamp`) with `NamespaceFinalizersRemaining=True` or
/// `NamespaceContentRemaining=True`. The namespace controller sets both conditions during
/// every ordinary deletion while it removes the content
/// (`kubernetes/kubernetes:pkg/controller/namespace/deletion/namespaced_resources_deleter.go`),
/// so only their persistence is a symptom.
fn namespace_finalizers(state: &ClusterState) -> Vec<Finding> {
    let mut out = Vec::new();
    for n in terminating_namespaces(state) {
        let deleted = n.metadata.deletion_timestamp.as_ref();
        if age_secs(state, deleted).is_none_or(|a| a < NAMESPACE_DELETION_GRACE_SECS) {
            continue;
        }
        let conds: Vec<_> = ["NamespaceFinalizersRemaining", "NamespaceContentRemaining"].iter().filter_map(|t| ns_condition(n, t)).collect();
        if conds.is_empty() {
            continue;
        }
        let r = obj_ref(ResourceKind::Namespace, &n.metadata);
        let mut ev = vec![Evidence::new(r.clone(), "status.phase", "Terminating")];
        if let Some(dt) = deleted {
            ev.push(Evidence::new(r.clone(), "metadata.deletionTimestamp", dt.0.to_string()));
        }
        for c in conds {
            ev.extend(cond_evidence(&r, &c.type_, &c.status, c.reason.as_deref(), c.message.as_deref()));
        }
        out.push(finding(r, "the namespace cannot finish deleting while objects in it keep their finalizers".to_string(), ev));
    }
    out
}

/// `namespace-stuck-terminating-discovery`: phase `Terminating` with
/// `NamespaceDeletionDiscoveryFailure=True` (reason `DiscoveryFailed`).
fn namespace_discovery(state: &ClusterState) -> Vec<Finding> {
    let mut out = Vec::new();
    for n in terminating_namespaces(state) {
        let Some(c) = ns_condition(n, "NamespaceDeletionDiscoveryFailure") else { continue };
        let r = obj_ref(ResourceKind::Namespace, &n.metadata);
        let mut ev = vec![Evidence::new(r.clone(), "status.phase", "Terminating")];
        ev.extend(cond_evidence(&r, &c.type_, &c.status, c.reason.as_deref(), c.message.as_deref()));
        out.push(finding(r, "the namespace controller cannot list every API group (an aggregated API is down), so it will not finish deleting the namespace".to_string(), ev));
    }
    out
}

fn stuck_meta(state: &ClusterState, kind: ResourceKind, meta: &ObjectMeta, out: &mut Vec<Finding>) {
    let Some(dt) = &meta.deletion_timestamp else { return };
    let finalizers = meta.finalizers.clone().unwrap_or_default();
    if finalizers.is_empty() {
        return;
    }
    // Claims and volumes kept only by their in-use protection have their own probe.
    if finalizers.iter().all(|f| f == "kubernetes.io/pvc-protection" || f == "kubernetes.io/pv-protection") {
        return;
    }
    let Some(past) = age_secs(state, Some(dt)) else { return };
    if past < 600 {
        return;
    }
    let r = obj_ref(kind, meta);
    out.push(finding(
        r.clone(),
        format!("deleted {} ago but kept by finalizer(s) {} that no controller removes", human_secs(past), finalizers.join(", ")),
        vec![
            Evidence::new(r.clone(), "metadata.deletionTimestamp", dt.0.to_string()),
            Evidence::new(r, "metadata.finalizers", finalizers.join(",")),
        ],
    ));
}

/// `object-stuck-terminating-finalizer`: `deletionTimestamp` more than 10 minutes past and
/// finalizers left, for workloads, Services, claims, volumes and CRDs (pods and
/// namespaces have probes of their own; a claim or volume kept only by
/// `kubernetes.io/pvc-protection` / `pv-protection` is in use, not stuck).
fn object_stuck_finalizer(state: &ClusterState) -> Vec<Finding> {
    let mut out = Vec::new();
    macro_rules! scan {
        ($($field:ident => $kind:ident),+) => { $( for o in &state.$field { stuck_meta(state, ResourceKind::$kind, o.metadata(), &mut out); } )+ };
    }
    scan!(
        deployments => Deployment,
        replica_sets => ReplicaSet,
        stateful_sets => StatefulSet,
        daemon_sets => DaemonSet,
        jobs => Job,
        cron_jobs => CronJob,
        services => Service,
        persistent_volumes => PersistentVolume,
        persistent_volume_claims => PersistentVolumeClaim,
        custom_resource_definitions => CustomResourceDefinition
    );
    out
}

/// `pdb-blocks-drain`: a PDB with `status.disruptionsAllowed` 0 whose selector matches a
/// Running pod, not being deleted and not owned by a DaemonSet, on a cordoned node (a drain
/// in progress): every eviction of that pod gets 429 "Cannot evict pod as it would violate
/// the pod's disruption budget." (`kubernetes/kubernetes:pkg/registry/core/pod/storage/eviction.go`).
/// The eviction API ignores the budget for Pending, Succeeded and Failed pods and for pods
/// already being deleted (`canIgnorePDB` there), and `kubectl drain` skips DaemonSet pods
/// (`kubernetes/kubernetes:staging/src/k8s.io/kubectl/pkg/drain/filters.go`), so none of
/// those can block a drain.
fn pdb_blocks_drain(state: &ClusterState) -> Vec<Finding> {
    let mut out = Vec::new();
    for pdb in &state.pod_disruption_budgets {
        let Some(st) = &pdb.status else { continue };
        if st.disruptions_allowed > 0 {
            continue;
        }
        let Some(sel) = pdb.spec.as_ref().and_then(|s| s.selector.as_ref()) else { continue };
        let blocked: Vec<(&k8s_openapi::api::core::v1::Pod, &str)> = state
            .pods
            .iter()
            .filter(|p| p.metadata.namespace == pdb.metadata.namespace && phase(p) == "Running" && p.metadata.deletion_timestamp.is_none())
            .filter(|p| !daemonset_owned(p))
            .filter(|p| label_selector_matches(sel, &labels(&p.metadata)))
            .filter_map(|p| {
                let n = node_name(p)?;
                let node = state.nodes.iter().find(|x| x.metadata.name.as_deref() == Some(n))?;
                node.spec.as_ref().and_then(|s| s.unschedulable).unwrap_or(false).then_some((p, n))
            })
            .collect();
        let Some((pod, node)) = blocked.first() else { continue };
        let r = obj_ref(ResourceKind::PodDisruptionBudget, &pdb.metadata);
        let ev = vec![
            Evidence::new(r.clone(), "status.disruptionsAllowed", st.disruptions_allowed.to_string()),
            Evidence::new(r.clone(), "status.currentHealthy/desiredHealthy", format!("{}/{}", st.current_healthy, st.desired_healthy)),
            Evidence::new(pod_ref(pod), "spec.nodeName", *node),
            Evidence::new(ObjectRef { kind: ResourceKind::Node, namespace: None, name: node.to_string() }, "spec.unschedulable", "true"),
        ];
        out.push(finding(
            r,
            format!("the budget allows no disruption, so draining node {node} cannot evict pod {}", pod.metadata.name.as_deref().unwrap_or("")),
            ev,
        ));
    }
    out
}

/// `hpa-unable-to-get-metrics`: `ScalingActive=False` with reason `FailedGetResourceMetric`
/// or `FailedGetContainerResourceMetric` (resource metrics; custom and external metrics
/// have failure modes of their own). The same reasons cover "missing request for cpu" (a
/// target container without a request), so the summary is worded from the message.
fn hpa_metrics(state: &ClusterState) -> Vec<Finding> {
    let mut out = Vec::new();
    for h in &state.horizontal_pod_autoscalers {
        let Some(c) = h.status.as_ref().and_then(|s| s.conditions.as_ref()).and_then(|cs| cs.iter().find(|c| c.type_ == "ScalingActive")) else {
            continue;
        };
        if c.status != "False" || !matches!(c.reason.as_deref(), Some("FailedGetResourceMetric" | "FailedGetContainerResourceMetric")) {
            continue;
        }
        let r = obj_ref(ResourceKind::HorizontalPodAutoscaler, &h.metadata);
        let ev = cond_evidence(&r, "ScalingActive", &c.status, c.reason.as_deref(), c.message.as_deref());
        let summary = match c.message.as_deref().and_then(|m| m.split("missing request for ").nth(1)) {
            Some(rest) => format!(
                "the HPA cannot compute utilization because a container of its pods has no request for {}, so it does not scale",
                rest.split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '-' || ch == '.' || ch == '/')).next().unwrap_or("the resource")
            ),
            None => "the HPA cannot read resource metrics for its pods, so it does not scale".to_string(),
        };
        out.push(finding(r, summary, ev));
    }
    out
}
