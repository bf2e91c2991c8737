//! Probes for the `scheduler` failure modes.
//!
//! The placement probes share one small model of the scheduler's Filter phase
//! ([`node_rejections`]): for a pod the scheduler has given up on (`PodScheduled=False`,
//! reason `Unschedulable`), every node is checked the way the default plugins check it:
//! NodeUnschedulable (cordon), TaintToleration, NodeAffinity (nodeSelector and required
//! affinity), NodeResourcesFit (requests against allocatable minus the requests of the
//! non-terminal pods bound there; the scheduler's pod informer ignores `Succeeded` and
//! `Failed` pods, `kubernetes/kubernetes:pkg/scheduler/scheduler.go` `newPodInformer`), and
//! VolumeBinding's node affinity of bound PersistentVolumes. A reason is *decisive* when
//! some node is rejected for that reason alone: fixing it would let the pod in. So the
//! control-plane taint, which rejects every pod on the control-plane node, does not make
//! `untolerated-taint` hold for a pod that would not fit on the workers anyway.
//!
//! When the condition says Unschedulable but a node passes every modelled filter, the
//! condition is stale (the next attempt will bind it) or a filter outside the model
//! decides (inter-pod affinity, topology spread): the placement probes then say nothing.
//! When nodes cannot be read, the condition's message is used instead (the reason texts
//! of `pkg/scheduler/framework/plugins/{noderesources/fit.go, tainttoleration/taint_toleration.go,
//! nodeaffinity/node_affinity.go, nodeunschedulable/node_unschedulable.go}`).

use super::common::*;
use super::{Evidence, Finding, Probe};
use crate::state::{ClusterState, ResourceKind};
use k8s_openapi::api::core::v1::{Node, Pod, Taint};
use std::collections::BTreeMap;

/// This area's probes.
pub static PROBES: &[Probe] = &[
    Probe {
        id: "insufficient-resources",
        failure_mode: "failure-mode/insufficient-resources",
        title: "unschedulable pods whose requests exceed every otherwise suitable node's free allocatable",
        needs: &[ResourceKind::Pod, ResourceKind::Node],
        subjects: &[ResourceKind::Pod],
        check: insufficient_resources,
        decided_by_status: None,
    },
    Probe {
        id: "untolerated-taint",
        failure_mode: "failure-mode/untolerated-taint",
        title: "unschedulable pods kept off otherwise suitable nodes by taints they do not tolerate",
        needs: &[ResourceKind::Pod, ResourceKind::Node],
        subjects: &[ResourceKind::Pod],
        check: untolerated_taint,
        decided_by_status: None,
    },
    Probe {
        id: "node-affinity-mismatch",
        failure_mode: "failure-mode/node-affinity-mismatch",
        title: "unschedulable pods whose nodeSelector or required node affinity excludes the nodes that would fit",
        needs: &[ResourceKind::Pod, ResourceKind::Node],
        subjects: &[ResourceKind::Pod],
        check: node_affinity_mismatch,
        decided_by_status: None,
    },
    Probe {
        id: "nodes-cordoned-unschedulable",
        failure_mode: "failure-mode/nodes-cordoned-unschedulable",
        title: "unschedulable pods that would fit on a node that is cordoned (spec.unschedulable)",
        needs: &[ResourceKind::Pod, ResourceKind::Node],
        subjects: &[ResourceKind::Pod, ResourceKind::Node],
        check: nodes_cordoned,
        decided_by_status: None,
    },
    Probe {
        id: "volume-node-affinity-conflict",
        failure_mode: "failure-mode/volume-node-affinity-conflict",
        title: "unschedulable pods whose bound PersistentVolume's node affinity excludes the nodes that would fit",
        needs: &[ResourceKind::Pod, ResourceKind::Node, ResourceKind::PersistentVolumeClaim, ResourceKind::PersistentVolume],
        subjects: &[ResourceKind::Pod, ResourceKind::PersistentVolume],
        check: volume_node_affinity_conflict,
        decided_by_status: None,
    },
    Probe {
        id: "extended-resource-device-plugin-missing",
        failure_mode: "failure-mode/extended-resource-device-plugin-missing",
        title: "pending pods requesting an extended resource (GPU, device) that no node advertises",
        needs: &[ResourceKind::Pod, ResourceKind::Node],
        subjects: &[ResourceKind::Pod],
        check: extended_resource_missing,
        decided_by_status: None,
    },
    Probe {
        id: "scheduler-name-not-running",
        failure_mode: "failure-mode/scheduler-name-not-running",
        title: "pods naming a schedulerName other than default-scheduler that no scheduler has looked at for 5 minutes",
        needs: &[ResourceKind::Pod],
        subjects: &[ResourceKind::Pod],
        check: scheduler_name_not_running,
        decided_by_status: None,
    },
    Probe {
        id: "pod-scheduling-gated",
        failure_mode: "failure-mode/pod-scheduling-gated",
        title: "pods held for more than 10 minutes by spec.schedulingGates (PodScheduled reason SchedulingGated)",
        needs: &[ResourceKind::Pod],
        subjects: &[ResourceKind::Pod],
        check: pod_scheduling_gated,
        decided_by_status: None,
    },
];

/// Why the modelled filters reject a node for a pod.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Rejection {
    /// NodeResourcesFit: the request does not fit what is left of allocatable.
    Insufficient {
        /// Resource name (`cpu`, `memory`, `pods`, `nvidia.com/gpu`).
        resource: String,
        /// What the pod asks for (base units).
        requested: f64,
        /// Allocatable minus what bound pods request (base units).
        free: f64,
        /// Allocatable (base units).
        allocatable: f64,
    },
    /// The node does not advertise the (extended) resource at all.
    NotAdvertised(String),
    /// TaintToleration: an untolerated taint other than the node-lifecycle ones.
    Taint(Taint),
    /// The control-plane role taint (`node-role.kubernetes.io/control-plane`, or the
    /// `master` one before 1.25): kept off the control plane by design, never a cause.
    ControlPlaneTaint(Taint),
    /// A `node.kubernetes.io/*` condition taint (not-ready, unreachable, pressure), or the
    /// cloud provider's `node.cloudprovider.kubernetes.io/uninitialized`: the node's state,
    /// not the pod's configuration.
    ConditionTaint(Taint),
    /// NodeUnschedulable: the node is cordoned.
    Cordoned,
    /// NodeAffinity: nodeSelector or required node affinity.
    Affinity,
    /// VolumeBinding: a bound PV's node affinity excludes the node (the PV's name).
    VolumeAffinity(String),
}

impl Rejection {
    fn category(&self) -> u8 {
        match self {
            Rejection::Insufficient { .. } => 0,
            Rejection::NotAdvertised(_) => 1,
            Rejection::Taint(_) => 2,
            Rejection::ConditionTaint(_) => 3,
            Rejection::Cordoned => 4,
            Rejection::Affinity => 5,
            Rejection::VolumeAffinity(_) => 6,
            Rejection::ControlPlaneTaint(_) => 7,
        }
    }
}

/// Resources every node has, so a missing entry is a zero, not a missing device plugin.
fn is_standard_resource(r: &str) -> bool {
    matches!(r, "cpu" | "memory" | "ephemeral-storage" | "pods") || r.starts_with("hugepages-")
}

/// Requests of the non-terminal pods bound to each node, plus their number.
pub(crate) fn node_usage(state: &ClusterState) -> BTreeMap<String, BTreeMap<String, f64>> {
    let mut out: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
    for p in &state.pods {
        let Some(n) = node_name(p) else { continue };
        if is_terminal(p) {
            continue;
        }
        let u = out.entry(n.to_string()).or_default();
        for (k, v) in pod_requests(p) {
            *u.entry(k).or_default() += v;
        }
        *u.entry("pods".into()).or_default() += 1.0;
    }
    out
}

/// The modelled filters' rejections of `node` for `pod` (empty: the node fits).
pub(crate) fn node_rejections(
    state: &ClusterState,
    pod: &Pod,
    node: &Node,
    usage: &BTreeMap<String, BTreeMap<String, f64>>,
) -> Vec<Rejection> {
    let mut out = Vec::new();
    let cordoned = node.spec.as_ref().and_then(|s| s.unschedulable).unwrap_or(false);
    let tolerations = pod.spec.as_ref().and_then(|s| s.tolerations.as_deref()).unwrap_or(&[]);
    let cordon_taint = Taint { key: "node.kubernetes.io/unschedulable".into(), effect: "NoSchedule".into(), ..Default::default() };
    if cordoned && !tolerations.iter().any(|t| tolerates(t, &cordon_taint)) {
        out.push(Rejection::Cordoned);
    }
    for t in untolerated_taints(pod, node) {
        if t.key == "node.kubernetes.io/unschedulable" {
            if !out.contains(&Rejection::Cordoned) {
                out.push(Rejection::Cordoned);
            }
        } else if t.key == "node-role.kubernetes.io/control-plane" || t.key == "node-role.kubernetes.io/master" {
            out.push(Rejection::ControlPlaneTaint(t.clone()));
        } else if t.key.starts_with("node.kubernetes.io/") || t.key == CLOUD_UNINITIALIZED_TAINT {
            out.push(Rejection::ConditionTaint(t.clone()));
        } else {
            out.push(Rejection::Taint(t.clone()));
        }
    }
    if !node_matches_pod_affinity(pod, node) {
        out.push(Rejection::Affinity);
    }
    let allocatable: BTreeMap<String, f64> = node
        .status
        .as_ref()
        .and_then(|s| s.allocatable.as_ref())
        .map(|a| a.iter().filter_map(|(k, q)| quantity(&q.0).map(|v| (k.clone(), v))).collect())
        .unwrap_or_default();
    let used = node.metadata.name.as_ref().and_then(|n| usage.get(n));
    let mut requests = pod_requests(pod);
    requests.insert("pods".into(), 1.0);
    for (res, req) in &requests {
        if *req <= 0.0 {
            continue;
        }
        let alloc = allocatable.get(res).copied().unwrap_or(0.0);
        if alloc <= 0.0 && !is_standard_resource(res) {
            out.push(Rejection::NotAdvertised(res.clone()));
            continue;
        }
        let free = alloc - used.and_then(|u| u.get(res)).copied().unwrap_or(0.0);
        if *req > free + 1e-9 {
            out.push(Rejection::Insufficient { resource: res.clone(), requested: *req, free, allocatable: alloc });
        }
    }
    for pv in bound_volumes(state, pod) {
        let required = pv
            .spec
            .as_ref()
            .and_then(|s| s.node_affinity.as_ref())
            .and_then(|a| a.required.as_ref());
        if let Some(sel) = required {
            if !sel.node_selector_terms.iter().any(|t| node_term_matches(t, node)) {
                out.push(Rejection::VolumeAffinity(pv.metadata.name.clone().unwrap_or_default()));
            }
        }
    }
    out
}

/// The PersistentVolumes bound to the pod's claims.
fn bound_volumes<'a>(state: &'a ClusterState, pod: &Pod) -> Vec<&'a k8s_openapi::api::core::v1::PersistentVolume> {
    let ns = pod.metadata.namespace.as_deref().unwrap_or("");
    let claims: Vec<&str> = pod
        .spec
        .as_ref()
        .and_then(|s| s.volumes.as_ref())
        .into_iter()
        .flatten()
        .filter_map(|v| v.persistent_volume_claim.as_ref().map(|c| c.claim_name.as_str()))
        .collect();
    let mut out = Vec::new();
    for c in claims {
        let pvc = state
            .persistent_volume_claims
            .iter()
            .find(|p| p.metadata.namespace.as_deref() == Some(ns) && p.metadata.name.as_deref() == Some(c));
        let Some(vol) = pvc.and_then(|p| p.spec.as_ref()).and_then(|s| s.volume_name.as_deref()) else { continue };
        if let Some(pv) = state.persistent_volumes.iter().find(|pv| pv.metadata.name.as_deref() == Some(vol)) {
            out.push(pv);
        }
    }
    out
}

/// A pod the scheduler gave up on, with the rejections of every node.
pub(crate) struct Unschedulable<'a> {
    /// The pod.
    pub(crate) pod: &'a Pod,
    /// Its `PodScheduled` condition message.
    pub(crate) message: String,
    /// Per node: name and rejections (`None` when nodes could not be read).
    pub(crate) nodes: Option<Vec<(String, Vec<Rejection>)>>,
}

impl Unschedulable<'_> {
    /// Whether a node is rejected only for reasons of `category`. The control-plane taint
    /// is by design and not decisive while some node lacks it; when every node carries it
    /// (a single-node or control-plane-only cluster) it counts as an untolerated taint.
    fn decisive(&self, category: u8) -> bool {
        if category == 7 {
            return false;
        }
        !self.decisive_nodes(category).is_empty()
    }

    /// Whether every node carries the control-plane role taint.
    fn only_control_plane(&self) -> bool {
        self.nodes.as_ref().is_some_and(|nodes| {
            !nodes.is_empty() && nodes.iter().all(|(_, r)| r.iter().any(|x| matches!(x, Rejection::ControlPlaneTaint(_))))
        })
    }

    /// The category a rejection counts in: the control-plane taint counts as a taint when
    /// no node lacks it.
    fn counted(&self, x: &Rejection, cp_is_taint: bool) -> u8 {
        match x {
            Rejection::ControlPlaneTaint(_) if cp_is_taint => 2,
            _ => x.category(),
        }
    }

    /// Whether some node passes every modelled filter.
    fn some_node_fits(&self) -> bool {
        self.nodes.as_ref().is_some_and(|n| n.iter().any(|(_, r)| r.is_empty()))
    }

    /// The nodes rejected only for `category`, with those rejections.
    fn decisive_nodes(&self, category: u8) -> Vec<(&str, &[Rejection])> {
        let cp_is_taint = self.only_control_plane();
        self.nodes
            .iter()
            .flatten()
            .filter(|(_, r)| !r.is_empty() && r.iter().all(|x| self.counted(x, cp_is_taint) == category))
            .map(|(n, r)| (n.as_str(), r.as_slice()))
            .collect()
    }
}

/// Every pod with `PodScheduled=False` reason `Unschedulable` that is not bound, not
/// being deleted and not waiting for preemption victims (`status.nominatedNodeName`).
pub(crate) fn unschedulable_pods(state: &ClusterState) -> Vec<Unschedulable<'_>> {
    let usage = node_usage(state);
    let nodes_known = state.loaded.contains(&ResourceKind::Node) && !state.nodes.is_empty();
    state
        .pods
        .iter()
        .filter(|p| unbound(p) && !is_terminal(p) && p.metadata.deletion_timestamp.is_none())
        .filter(|p| p.status.as_ref().and_then(|s| s.nominated_node_name.as_deref()).is_none_or(str::is_empty))
        .filter_map(|p| {
            let c = unschedulable_condition(p)?;
            let nodes = nodes_known.then(|| {
                state
                    .nodes
                    .iter()
                    .map(|n| (n.metadata.name.clone().unwrap_or_default(), node_rejections(state, p, n, &usage)))
                    .collect()
            });
            Some(Unschedulable { pod: p, message: c.message.clone().unwrap_or_default(), nodes })
        })
        .collect()
}

fn condition_evidence(u: &Unschedulable<'_>) -> Evidence {
    Evidence::new(pod_ref(u.pod), "status.conditions[type=PodScheduled].message", u.message.clone())
}

/// Findings for one placement reason: decisive from the model, or (nodes unknown) named in
/// the condition message by one of `texts`.
fn placement(
    state: &ClusterState,
    category: u8,
    texts: &[&str],
    describe: impl Fn(&Unschedulable<'_>, &[(&str, &[Rejection])]) -> (String, Vec<Evidence>),
) -> Vec<Finding> {
    let mut out = Vec::new();
    for u in unschedulable_pods(state) {
        let holds = match &u.nodes {
            Some(_) => !u.some_node_fits() && u.decisive(category),
            None if category == 2 => message_names_user_taint(&u.message),
            None => texts.iter().any(|t| u.message.contains(t)),
        };
        if !holds {
            continue;
        }
        let decisive = u.decisive_nodes(category);
        let (summary, mut evidence) = describe(&u, &decisive);
        evidence.insert(0, condition_evidence(&u));
        out.push(finding(pod_ref(u.pod), summary, evidence));
    }
    out
}

/// The taint a node carries until the external cloud controller manager has initialized
/// it (`kubernetes/kubernetes:staging/src/k8s.io/cloud-provider/api/well_known_taints.go`).
const CLOUD_UNINITIALIZED_TAINT: &str = "node.cloudprovider.kubernetes.io/uninitialized";

/// Whether a TaintToleration message names a taint other than the control-plane role
/// taint and the node-lifecycle `node.kubernetes.io/*` ones: the taints are printed as
/// `{key: value}` after "untolerated taint" (or "taint" in "that the pod didn't tolerate",
/// before 1.27), `kubernetes/kubernetes:pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go`.
/// On kubeadm clusters every such message lists the control-plane taint, so its mere
/// presence says nothing.
fn message_names_user_taint(message: &str) -> bool {
    message.match_indices("taint {").any(|(i, m)| {
        let rest = &message[i + m.len()..];
        let key = rest.split([':', '}']).next().unwrap_or("").trim();
        !key.is_empty()
            && key != "node-role.kubernetes.io/control-plane"
            && key != "node-role.kubernetes.io/master"
            && !key.starts_with("node.kubernetes.io/")
            && key != CLOUD_UNINITIALIZED_TAINT
    })
}

fn node_ref(name: &str) -> crate::state::ObjectRef {
    crate::state::ObjectRef { kind: ResourceKind::Node, namespace: None, name: name.to_string() }
}

/// `insufficient-resources`: NodeResourcesFit is decisive. Reason text `Insufficient
/// {resource}` and `Too many pods` from
/// `kubernetes/kubernetes:pkg/scheduler/framework/plugins/noderesources/fit.go`.
fn insufficient_resources(state: &ClusterState) -> Vec<Finding> {
    placement(state, 0, &["Insufficient ", "Too many pods"], |u, nodes| {
        let req = pod_requests(u.pod);
        let mut ev = vec![Evidence::new(
            pod_ref(u.pod),
            "spec.containers[*].resources.requests",
            req.iter().map(|(k, v)| format!("{k}={}", show_amount(k, *v))).collect::<Vec<_>>().join(","),
        )];
        let mut short: Vec<String> = Vec::new();
        for (n, rej) in nodes {
            for r in *rej {
                if let Rejection::Insufficient { resource, requested, free, allocatable } = r {
                    ev.push(Evidence::new(
                        node_ref(n),
                        format!("status.allocatable.{resource}"),
                        format!(
                            "{} allocatable, {} free after bound pods' requests; the pod requests {}",
                            show_amount(resource, *allocatable),
                            show_amount(resource, *free),
                            show_amount(resource, *requested)
                        ),
                    ));
                    if !short.contains(resource) {
                        short.push(resource.clone());
                    }
                }
            }
        }
        let summary = if nodes.is_empty() {
            "the scheduler reports insufficient resources on every node".to_string()
        } else {
            format!("the pod's {} request does not fit the free allocatable of any node it could otherwise use", short.join(" and "))
        };
        (summary, ev)
    })
}

/// `untolerated-taint`: TaintToleration is decisive (node-lifecycle `node.kubernetes.io/*`
/// taints are the node's health and are left to the node probes; the control-plane taint
/// counts only when every node carries it). Without nodes, the condition message must
/// name a taint other than those. Reason texts from
/// `kubernetes/kubernetes:pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go`.
fn untolerated_taint(state: &ClusterState) -> Vec<Finding> {
    placement(state, 2, &["untolerated taint", "that the pod didn't tolerate"], |_, nodes| {
        let mut ev = Vec::new();
        for (n, rej) in nodes {
            let taints: Vec<String> = rej
                .iter()
                .filter_map(|r| match r {
                    Rejection::Taint(t) | Rejection::ControlPlaneTaint(t) => Some(show_taint(t)),
                    _ => None,
                })
                .collect();
            ev.push(Evidence::new(node_ref(n), "spec.taints", taints.join(", ")));
        }
        ("the pod would fit on a node whose taints it does not tolerate".to_string(), ev)
    })
}

/// `node-affinity-mismatch`: NodeAffinity is decisive. Reason text `node(s) didn't match
/// Pod's node affinity/selector` from
/// `kubernetes/kubernetes:pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go`.
fn node_affinity_mismatch(state: &ClusterState) -> Vec<Finding> {
    placement(state, 5, &["didn't match Pod's node affinity", "didn't match node selector"], |u, nodes| {
        let spec = u.pod.spec.as_ref();
        let mut ev = Vec::new();
        if let Some(sel) = spec.and_then(|s| s.node_selector.as_ref()) {
            ev.push(Evidence::new(pod_ref(u.pod), "spec.nodeSelector", show_map(sel)));
        }
        if let Some(req) = spec
            .and_then(|s| s.affinity.as_ref())
            .and_then(|a| a.node_affinity.as_ref())
            .and_then(|n| n.required_during_scheduling_ignored_during_execution.as_ref())
        {
            ev.push(Evidence::new(
                pod_ref(u.pod),
                "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution",
                serde_json::to_string(req).unwrap_or_default(),
            ));
        }
        for (n, _) in nodes {
            if let Some(node) = state.nodes.iter().find(|x| x.metadata.name.as_deref() == Some(*n)) {
                ev.push(Evidence::new(node_ref(n), "metadata.labels", show_map(&labels(&node.metadata))));
            }
        }
        ("the pod's nodeSelector or required node affinity matches none of the nodes that have room for it".to_string(), ev)
    })
}

/// `nodes-cordoned-unschedulable`: NodeUnschedulable is decisive. Reason text `node(s)
/// were unschedulable` from
/// `kubernetes/kubernetes:pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go`.
fn nodes_cordoned(state: &ClusterState) -> Vec<Finding> {
    placement(state, 4, &["node(s) were unschedulable"], |_, nodes| {
        let ev = nodes.iter().map(|(n, _)| Evidence::new(node_ref(n), "spec.unschedulable", "true")).collect();
        ("the pod would fit on a node that is cordoned".to_string(), ev)
    })
}

/// `volume-node-affinity-conflict`: VolumeBinding rejects every node that would fit because
/// a bound PV's `spec.nodeAffinity` excludes it. Reason text `node(s) had volume node
/// affinity conflict` from `kubernetes/kubernetes:pkg/scheduler/framework/plugins/volumebinding/binder.go`.
fn volume_node_affinity_conflict(state: &ClusterState) -> Vec<Finding> {
    placement(state, 6, &["volume node affinity conflict"], |u, nodes| {
        let mut ev = Vec::new();
        for pv in bound_volumes(state, u.pod) {
            if let Some(a) = pv.spec.as_ref().and_then(|s| s.node_affinity.as_ref()) {
                ev.push(Evidence::new(
                    obj_ref(ResourceKind::PersistentVolume, &pv.metadata),
                    "spec.nodeAffinity.required",
                    serde_json::to_string(a).unwrap_or_default(),
                ));
            }
        }
        for (n, _) in nodes {
            ev.push(Evidence::new(node_ref(n), "metadata.name", n.to_string()));
        }
        ("the pod's bound PersistentVolume can only be used on nodes that have no room for the pod".to_string(), ev)
    })
}

/// `extended-resource-device-plugin-missing`: the pod requests an extended resource (not
/// cpu, memory, ephemeral-storage, pods or hugepages) that no node lists in
/// `status.allocatable`, which device plugins fill
/// (`kubernetes/kubernetes:pkg/kubelet/cm/devicemanager/manager.go`).
fn extended_resource_missing(state: &ClusterState) -> Vec<Finding> {
    if state.nodes.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for p in &state.pods {
        // Two minutes' grace: a device plugin registering on a new node fills allocatable late.
        if !unbound(p) || is_terminal(p) || p.metadata.deletion_timestamp.is_some() || !older_than(state, &p.metadata, 120) {
            continue;
        }
        for (res, v) in pod_requests(p) {
            if is_standard_resource(&res) || v <= 0.0 {
                continue;
            }
            let advertised = state.nodes.iter().any(|n| {
                n.status
                    .as_ref()
                    .and_then(|s| s.allocatable.as_ref())
                    .and_then(|a| a.get(&res))
                    .and_then(|q| quantity(&q.0))
                    .is_some_and(|q| q > 0.0)
            });
            if !advertised {
                let mut ev = vec![Evidence::new(pod_ref(p), format!("spec.containers[*].resources.requests.{res}"), show_amount(&res, v))];
                if let Some(c) = pod_condition(p, "PodScheduled") {
                    ev.push(Evidence::new(pod_ref(p), "status.conditions[type=PodScheduled].message", c.message.clone().unwrap_or_default()));
                }
                for n in &state.nodes {
                    ev.push(Evidence::new(
                        obj_ref(ResourceKind::Node, &n.metadata),
                        format!("status.allocatable.{res}"),
                        "absent",
                    ));
                }
                out.push(finding(pod_ref(p), format!("the pod requests {res}, which no node advertises: its device plugin is not running anywhere"), ev));
            }
        }
    }
    out
}

/// `scheduler-name-not-running`: a pending, unbound pod whose `spec.schedulerName` is not
/// `default-scheduler` and that carries no `PodScheduled` condition after 5 minutes: the
/// scheduler that would set it (`kubernetes/kubernetes:pkg/scheduler/schedule_one.go`,
/// failure handler) never looked at the pod.
fn scheduler_name_not_running(state: &ClusterState) -> Vec<Finding> {
    let mut out = Vec::new();
    for p in &state.pods {
        let name = p.spec.as_ref().and_then(|s| s.scheduler_name.as_deref()).unwrap_or("default-scheduler");
        if name == "default-scheduler" || !unbound(p) || is_terminal(p) || p.metadata.deletion_timestamp.is_some() {
            continue;
        }
        if pod_condition(p, "PodScheduled").is_some() || !older_than(state, &p.metadata, 300) {
            continue;
        }
        let age = age_secs(state, p.metadata.creation_timestamp.as_ref()).map(human_secs).unwrap_or_else(|| "unknown".into());
        out.push(finding(
            pod_ref(p),
            format!("no scheduler named {name} has picked up the pod in {age}"),
            vec![
                Evidence::new(pod_ref(p), "spec.schedulerName", name),
                Evidence::new(pod_ref(p), "status.conditions[type=PodScheduled]", "absent"),
                Evidence::new(pod_ref(p), "metadata.creationTimestamp", age + " before the snapshot"),
            ],
        ));
    }
    out
}

/// `pod-scheduling-gated`: `spec.schedulingGates` not empty and `PodScheduled=False` with
/// reason `SchedulingGated` (set when the pod is created with gates,
/// `kubernetes/kubernetes:pkg/registry/core/pod/strategy.go`, "Scheduling is blocked due to
/// non-empty scheduling gates") for more than 10 minutes.
fn pod_scheduling_gated(state: &ClusterState) -> Vec<Finding> {
    let mut out = Vec::new();
    for p in &state.pods {
        let gates: Vec<&str> =
            p.spec.as_ref().and_then(|s| s.scheduling_gates.as_ref()).into_iter().flatten().map(|g| g.name.as_str()).collect();
        if gates.is_empty() || !unbound(p) || is_terminal(p) || !older_than(state, &p.metadata, 600) {
            continue;
        }
        let Some(c) = pod_condition(p, "PodScheduled").filter(|c| c.reason.as_deref() == Some("SchedulingGated")) else { continue };
        out.push(finding(
            pod_ref(p),
            format!("the pod is held out of scheduling by gate(s) {} that nothing has removed", gates.join(", ")),
            vec![
                Evidence::new(pod_ref(p), "spec.schedulingGates", gates.join(",")),
                Evidence::new(pod_ref(p), "status.conditions[type=PodScheduled].reason", c.reason.clone().unwrap_or_default()),
            ],
        ));
    }
    out
}
