//! Probes for the `networking` failure modes: Services against the pods they select and
//! the EndpointSlices the EndpointSlice controller wrote, LoadBalancer provisioning, and
//! pod sandbox networking.
//!
//! EndpointSlices belong to a Service through the label `kubernetes.io/service-name`
//! (`kubernetes/kubernetes:staging/src/k8s.io/api/discovery/v1/well_known_labels.go`); an
//! endpoint's `conditions.ready` left unset counts as ready
//! (`kubernetes/kubernetes:staging/src/k8s.io/api/discovery/v1/types.go`). Services without
//! a selector have their endpoints managed by someone else and are left out.

use super::common::*;
use super::{Evidence, Finding, Probe};
use crate::state::{ClusterState, ResourceKind};
use k8s_openapi::api::core::v1::{Pod, Service};

/// This area's probes.
pub static PROBES: &[Probe] = &[
    Probe {
        id: "service-selector-mismatch",
        failure_mode: "failure-mode/service-selector-mismatch",
        title: "Services whose selector matches no pod in their namespace",
        needs: &[ResourceKind::Service, ResourceKind::Pod],
        subjects: &[ResourceKind::Service],
        check: selector_mismatch,
        decided_by_status: None,
    },
    Probe {
        id: "service-no-ready-endpoints",
        failure_mode: "failure-mode/service-no-ready-endpoints",
        title: "Services that select scheduled pods but have no ready endpoint in their EndpointSlices",
        needs: &[ResourceKind::Service, ResourceKind::Pod, ResourceKind::EndpointSlice],
        subjects: &[ResourceKind::Service],
        check: no_ready_endpoints,
        decided_by_status: None,
    },
    Probe {
        id: "loadbalancer-external-ip-pending",
        failure_mode: "failure-mode/loadbalancer-external-ip-pending",
        title: "LoadBalancer Services with no ingress address after 10 minutes",
        needs: &[ResourceKind::Service],
        subjects: &[ResourceKind::Service],
        check: lb_pending,
        decided_by_status: None,
    },
    Probe {
        id: "cni-sandbox-setup-failed",
        failure_mode: "failure-mode/cni-sandbox-setup-failed",
        title: "pods stuck creating because the CNI plugin fails to set up the sandbox network (FailedCreatePodSandBox)",
        needs: &[ResourceKind::Pod, ResourceKind::Event],
        subjects: &[ResourceKind::Pod],
        check: sandbox_network_failed,
        decided_by_status: None,
    },
    Probe {
        id: "cni-not-initialized",
        failure_mode: "failure-mode/cni-not-initialized",
        title: "nodes NotReady because the container runtime network (CNI) is not ready",
        needs: &[ResourceKind::Node],
        subjects: &[ResourceKind::Node],
        check: cni_not_initialized,
        decided_by_status: None,
    },
];

/// Non-terminal pods of the namespace matched by the Service's selector.
pub(crate) fn selected_pods<'a>(state: &'a ClusterState, svc: &Service) -> Vec<&'a Pod> {
    let Some(sel) = svc.spec.as_ref().and_then(|s| s.selector.as_ref()).filter(|s| !s.is_empty()) else {
        return Vec::new();
    };
    state
        .pods
        .iter()
        .filter(|p| p.metadata.namespace == svc.metadata.namespace && !is_terminal(p))
        .filter(|p| map_selector_matches(sel, &labels(&p.metadata)))
        .collect()
}

/// Whether the Service has a selector and its endpoints are managed by the EndpointSlice
/// controller (not `ExternalName`).
fn selector_service(svc: &Service) -> bool {
    let spec = svc.spec.as_ref();
    spec.and_then(|s| s.type_.as_deref()) != Some("ExternalName")
        && spec.and_then(|s| s.selector.as_ref()).is_some_and(|s| !s.is_empty())
}

/// Ready and total endpoints of the Service's EndpointSlices.
pub(crate) fn endpoint_counts(state: &ClusterState, ns: Option<&str>, name: &str) -> (usize, usize) {
    let mut ready = 0;
    let mut total = 0;
    for s in &state.endpoint_slices {
        if s.metadata.namespace.as_deref() != ns
            || s.metadata.labels.as_ref().and_then(|l| l.get("kubernetes.io/service-name")).map(String::as_str) != Some(name)
        {
            continue;
        }
        for e in &s.endpoints {
            total += 1;
            if e.conditions.as_ref().and_then(|c| c.ready).unwrap_or(true) {
                ready += 1;
            }
        }
    }
    (ready, total)
}

/// Pod template labels of the Deployments, ReplicaSets, StatefulSets and DaemonSets of a
/// namespace.
fn workload_templates(state: &ClusterState, ns: Option<&str>) -> Vec<std::collections::BTreeMap<String, String>> {
    let mut out = Vec::new();
    let mut push = |meta_ns: Option<&str>, t: Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta>| {
        if meta_ns == ns {
            if let Some(m) = t {
                out.push(labels(m));
            }
        }
    };
    for d in &state.deployments {
        push(d.metadata.namespace.as_deref(), d.spec.as_ref().and_then(|s| s.template.metadata.as_ref()));
    }
    for d in &state.replica_sets {
        push(d.metadata.namespace.as_deref(), d.spec.as_ref().and_then(|s| s.template.as_ref()).and_then(|t| t.metadata.as_ref()));
    }
    for d in &state.stateful_sets {
        push(d.metadata.namespace.as_deref(), d.spec.as_ref().and_then(|s| s.template.metadata.as_ref()));
    }
    for d in &state.daemon_sets {
        push(d.metadata.namespace.as_deref(), d.spec.as_ref().and_then(|s| s.template.metadata.as_ref()));
    }
    out
}

fn svc_ref(s: &Service) -> crate::state::ObjectRef {
    obj_ref(ResourceKind::Service, &s.metadata)
}

/// `service-selector-mismatch`: a selector Service with no non-terminal pod in its
/// namespace carrying every selector label. The evidence shows the pods of the namespace
/// whose labels come closest (most selector keys present).
fn selector_mismatch(state: &ClusterState) -> Vec<Finding> {
    let mut out = Vec::new();
    for svc in &state.services {
        if !selector_service(svc) || svc.metadata.deletion_timestamp.is_some() || !selected_pods(state, svc).is_empty() {
            continue;
        }
        let sel = svc.spec.as_ref().and_then(|s| s.selector.clone()).unwrap_or_default();
        // A workload whose pod template the selector matches means the pods are missing
        // (not created, scaled to zero), not mismatched: other probes explain that.
        if workload_templates(state, svc.metadata.namespace.as_deref()).iter().any(|l| map_selector_matches(&sel, l)) {
            continue;
        }
        let mut ev = vec![Evidence::new(svc_ref(svc), "spec.selector", show_map(&sel))];
        let mut near: Vec<(usize, &Pod)> = state
            .pods
            .iter()
            .filter(|p| p.metadata.namespace == svc.metadata.namespace && !is_terminal(p))
            .map(|p| {
                let l = labels(&p.metadata);
                (sel.keys().filter(|k| l.contains_key(*k)).count(), p)
            })
            .filter(|(n, _)| *n > 0)
            .collect();
        near.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.metadata.name.cmp(&b.1.metadata.name)));
        for (_, p) in near.iter().take(3) {
            ev.push(Evidence::new(pod_ref(p), "metadata.labels", show_map(&labels(&p.metadata))));
        }
        let (_, total) = endpoint_counts(state, svc.metadata.namespace.as_deref(), svc.metadata.name.as_deref().unwrap_or(""));
        ev.push(Evidence::new(svc_ref(svc), "endpoints", format!("{total} endpoint(s) in its EndpointSlices")));
        out.push(finding(svc_ref(svc), format!("the selector {} matches no pod in the namespace, so the Service has no endpoints", show_map(&sel)), ev));
    }
    out
}

/// `service-no-ready-endpoints`: a selector Service that selects pods, where no endpoint
/// of its EndpointSlices is ready (and `publishNotReadyAddresses` is off).
fn no_ready_endpoints(state: &ClusterState) -> Vec<Finding> {
    let mut out = Vec::new();
    for svc in &state.services {
        if !selector_service(svc)
            || svc.metadata.deletion_timestamp.is_some()
            || svc.spec.as_ref().and_then(|s| s.publish_not_ready_addresses).unwrap_or(false)
        {
            continue;
        }
        // Pods not yet bound to a node are the scheduler's story (placement probes).
        let pods: Vec<&Pod> = selected_pods(state, svc).into_iter().filter(|p| node_name(p).is_some()).collect();
        if pods.is_empty() {
            continue;
        }
        let (ready, total) = endpoint_counts(state, svc.metadata.namespace.as_deref(), svc.metadata.name.as_deref().unwrap_or(""));
        if ready > 0 {
            continue;
        }
        let mut ev = vec![Evidence::new(svc_ref(svc), "endpointslices", format!("{ready} ready of {total} endpoint(s)"))];
        for p in pods.iter().take(5) {
            let ready = pod_condition(p, "Ready").map(|c| c.status.clone()).unwrap_or_else(|| "absent".into());
            ev.push(Evidence::new(pod_ref(p), "status.conditions[type=Ready].status", ready));
        }
        out.push(finding(
            svc_ref(svc),
            format!("the Service selects {} pod(s) but none is ready, so it has no endpoint to send traffic to", pods.len()),
            ev,
        ));
    }
    out
}

/// `loadbalancer-external-ip-pending`: `type: LoadBalancer` with an empty
/// `status.loadBalancer.ingress` 10 minutes after creation: no cloud controller or
/// load-balancer implementation has served it.
fn lb_pending(state: &ClusterState) -> Vec<Finding> {
    let mut out = Vec::new();
    for svc in &state.services {
        if svc.spec.as_ref().and_then(|s| s.type_.as_deref()) != Some("LoadBalancer") || !older_than(state, &svc.metadata, 600) {
            continue;
        }
        let ingress = svc.status.as_ref().and_then(|s| s.load_balancer.as_ref()).and_then(|l| l.ingress.as_ref()).map_or(0, Vec::len);
        if ingress > 0 {
            continue;
        }
        let age = age_secs(state, svc.metadata.creation_timestamp.as_ref()).map(human_secs).unwrap_or_else(|| "unknown".into());
        let mut ev = vec![
            Evidence::new(svc_ref(svc), "spec.type", "LoadBalancer"),
            Evidence::new(svc_ref(svc), "status.loadBalancer.ingress", "empty"),
            Evidence::new(svc_ref(svc), "metadata.creationTimestamp", format!("{age} before the snapshot")),
        ];
        if let Some(c) = svc.spec.as_ref().and_then(|s| s.load_balancer_class.as_deref()) {
            ev.push(Evidence::new(svc_ref(svc), "spec.loadBalancerClass", c));
        }
        out.push(finding(svc_ref(svc), format!("no load balancer has been provisioned for the Service in {age} (EXTERNAL-IP pending)"), ev));
    }
    out
}

/// `cni-sandbox-setup-failed`: a Pending pod with `FailedCreatePodSandBox` events
/// (`kubernetes/kubernetes:pkg/kubelet/events/event.go`) whose message carries the CNI
/// error "failed to setup network for sandbox" (containerd,
/// `containerd/containerd:internal/cri/server/sandbox_run.go`) or "failed to set up sandbox
/// container … network" (the kubelet's wrapper).
fn sandbox_network_failed(state: &ClusterState) -> Vec<Finding> {
    let mut out = Vec::new();
    for p in &state.pods {
        if phase(p) != "Pending" || p.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let evs: Vec<_> = events_for(state, "Pod", &p.metadata)
            .into_iter()
            .filter(|e| {
                let m = e.message.as_deref().unwrap_or("");
                e.reason.as_deref() == Some("FailedCreatePodSandBox")
                    && (m.contains("failed to setup network for sandbox") || (m.contains("failed to set up sandbox container") && m.contains("network")))
            })
            .collect();
        let Some(last) = evs.last() else { continue };
        out.push(finding(
            pod_ref(p),
            format!("the CNI plugin fails to set up the pod's network on node {}, so its sandbox is never created", node_name(p).unwrap_or("?")),
            vec![Evidence::new(pod_ref(p), "status.phase", "Pending"), event_evidence(last)],
        ));
    }
    out
}

/// `cni-not-initialized`: `Ready=False` with "container runtime network not ready:
/// NetworkReady=false reason:NetworkPluginNotReady …"
/// (`kubernetes/kubernetes:pkg/kubelet/kubelet.go`, `updateRuntimeUp`).
fn cni_not_initialized(state: &ClusterState) -> Vec<Finding> {
    let mut out = Vec::new();
    for n in &state.nodes {
        let Some(c) = node_condition(n, "Ready") else { continue };
        let m = c.message.as_deref().unwrap_or("");
        if c.status != "False" || !(m.contains("NetworkPluginNotReady") || m.contains("container runtime network not ready")) {
            continue;
        }
        let r = obj_ref(ResourceKind::Node, &n.metadata);
        out.push(finding(
            r.clone(),
            "the node's CNI plugin is not initialized (no network config), so the node is NotReady and pods cannot get a network".to_string(),
            vec![
                Evidence::new(r.clone(), "status.conditions[type=Ready].status", "False"),
                Evidence::new(r, "status.conditions[type=Ready].message", m),
            ],
        ));
    }
    out
}
