//! Probes for the `dns` failure modes: pod DNS policy and StatefulSet pod records.
//!
//! The kubelet gives a `hostNetwork` pod with `dnsPolicy: ClusterFirst` the node's resolver
//! configuration, not the cluster DNS (`ClusterFirstWithHostNet` is needed for that;
//! `kubernetes/kubernetes:pkg/kubelet/network/dns/dns.go`, `getPodDNSType`); `dnsPolicy`
//! defaults to `ClusterFirst` (`kubernetes/kubernetes:pkg/apis/core/v1/defaults.go`). A
//! StatefulSet pod gets its `<pod>.<serviceName>` record only from a headless Service named
//! by `spec.serviceName` (`https://kubernetes.io/docs/concepts/workloads/controllers/statefulset/#stable-network-id`).

use super::common::*;
use super::{Evidence, Finding, Probe};
use crate::state::{ClusterState, ObjectRef, ResourceKind};

/// This area's probes.
pub static PROBES: &[Probe] = &[
    Probe {
        id: "hostnetwork-pod-clusterfirst-uses-node-dns",
        failure_mode: "failure-mode/hostnetwork-pod-clusterfirst-uses-node-dns",
        title: "hostNetwork pods with dnsPolicy ClusterFirst that use cluster DNS names (they get the node's resolver)",
        needs: &[ResourceKind::Pod],
        subjects: &[ResourceKind::Pod],
        check: hostnetwork_clusterfirst,
        decided_by_status: None,
    },
    Probe {
        id: "statefulset-pod-dns-missing-governing-service",
        failure_mode: "failure-mode/statefulset-pod-dns-missing-governing-service",
        title: "StatefulSets whose serviceName names no headless Service in their namespace",
        needs: &[ResourceKind::StatefulSet, ResourceKind::Service],
        subjects: &[ResourceKind::StatefulSet],
        check: statefulset_governing_service,
        decided_by_status: None,
    },
];

/// `hostnetwork-pod-clusterfirst-uses-node-dns`: `spec.hostNetwork: true` and `dnsPolicy`
/// `ClusterFirst` (or unset) on a non-terminal pod outside the system namespaces (where
/// node daemons legitimately use the node's resolver) whose containers name a cluster DNS
/// name in an env value, an arg or the command. DaemonSet pods count only with a symptom
/// (a container not ready): node agents (CNI daemons such as flannel in `kube-flannel`,
/// node-exporter, MetalLB's speaker, log shippers) run on the host network on purpose and
/// often reach their peers by node address, so their DNS policy alone is no finding.
fn hostnetwork_clusterfirst(state: &ClusterState) -> Vec<Finding> {
    let mut out = Vec::new();
    for p in &state.pods {
        let Some(spec) = &p.spec else { continue };
        if !spec.host_network.unwrap_or(false) || is_terminal(p) || is_system_namespace(p.metadata.namespace.as_deref()) {
            continue;
        }
        let policy = spec.dns_policy.as_deref().unwrap_or("ClusterFirst");
        if policy != "ClusterFirst" {
            continue;
        }
        // Only pods that visibly use a cluster name: node agents that never resolve one
        // (node-exporter and the like) are fine on the node's resolver.
        let Some((field, value)) = cluster_name_reference(spec) else { continue };
        let unready = p.status.as_ref().and_then(|s| s.container_statuses.as_ref()).into_iter().flatten().find(|c| !c.ready);
        if daemonset_owned(p) && unready.is_none() {
            continue;
        }
        out.push(finding(
            pod_ref(p),
            "the pod uses the host network with dnsPolicy ClusterFirst, so it resolves through the node's resolv.conf and cannot resolve the cluster names it uses".to_string(),
            vec![
                Evidence::new(pod_ref(p), "spec.hostNetwork", "true"),
                Evidence::new(pod_ref(p), "spec.dnsPolicy", policy),
                Evidence::new(pod_ref(p), field, value),
            ]
            .into_iter()
            .chain(unready.map(|c| Evidence::new(pod_ref(p), format!("status.containerStatuses[name={}].ready", c.name), "false")))
            .collect(),
        ));
    }
    out
}

/// The first container env value, arg or command word naming a cluster DNS name (a
/// `.svc` name or one under `cluster.local`), with its field path.
fn cluster_name_reference(spec: &k8s_openapi::api::core::v1::PodSpec) -> Option<(String, String)> {
    let names_cluster = |v: &str| v.contains(".svc.") || v.ends_with(".svc") || v.contains(".svc:") || v.contains("cluster.local");
    for c in spec.containers.iter().chain(spec.init_containers.iter().flatten()) {
        for e in c.env.iter().flatten() {
            if let Some(v) = e.value.as_deref().filter(|v| names_cluster(v)) {
                return Some((format!("spec.containers[name={}].env[name={}].value", c.name, e.name), v.to_string()));
            }
        }
        for (what, list) in [("args", &c.args), ("command", &c.command)] {
            if let Some(v) = list.iter().flatten().find(|v| names_cluster(v)) {
                return Some((format!("spec.containers[name={}].{what}", c.name), v.clone()));
            }
        }
    }
    None
}

/// `statefulset-pod-dns-missing-governing-service`: `spec.serviceName` set but no Service
/// of that name in the namespace, or one that is not headless (`clusterIP` not `None`).
fn statefulset_governing_service(state: &ClusterState) -> Vec<Finding> {
    let mut out = Vec::new();
    for s in &state.stateful_sets {
        let Some(name) = s.spec.as_ref().and_then(|x| x.service_name.as_deref()).filter(|n| !n.is_empty()) else { continue };
        let r = obj_ref(ResourceKind::StatefulSet, &s.metadata);
        let svc = state.services.iter().find(|x| x.metadata.namespace == s.metadata.namespace && x.metadata.name.as_deref() == Some(name));
        let sref = ObjectRef { kind: ResourceKind::Service, namespace: s.metadata.namespace.clone(), name: name.to_string() };
        let (why, e) = match svc {
            None => ("does not exist", Evidence::new(sref, "metadata.name", "absent: the Service does not exist")),
            Some(svc) => {
                let ip = svc.spec.as_ref().and_then(|x| x.cluster_ip.as_deref()).unwrap_or("");
                if ip == "None" {
                    continue;
                }
                ("is not headless", Evidence::new(sref, "spec.clusterIP", ip))
            }
        };
        out.push(finding(
            r.clone(),
            format!("the governing Service {name} {why}, so the StatefulSet's pods get no per-pod DNS records"),
            vec![Evidence::new(r, "spec.serviceName", name), e],
        ));
    }
    out
}
