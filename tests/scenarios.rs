//! Cluster states for the test API server, built as k8s-openapi objects (deserialized from
//! JSON into the typed structs, so a field the schema does not have fails the test).
//!
//! - [`lab`]: the three lab objects in namespace `shop`: `checkout-0` Pending on CPU,
//!   `web-5c8` restarted by a liveness probe answered 404, Service `payments` whose selector
//!   matches no pod; plus healthy objects beside them.
//! - [`healthy`]: the healthy part alone.
//! - [`large`]: `pods` running pods over `pods / 50` nodes with a Service and an event
//!   per 10 pods, for the figures.

use crate::apiserver::Objects;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Event, Namespace, Node, Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use serde_json::{json, Value};

/// The time every object was made (the probes judge ages against the newest timestamp).
pub const NOW: &str = "2026-11-30T10:00:00Z";

fn typed<T: serde::de::DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).expect("a valid object of its kind")
}

/// A Ready node with `cpu` cores and `mem_gi` GiB allocatable and the InternalIP `ip`.
pub fn node(name: &str, cpu: &str, mem_gi: u32, ip: &str) -> Node {
    typed(json!({
        "metadata": {"name": name, "uid": format!("uid-node-{name}"), "creationTimestamp": "2026-11-01T00:00:00Z",
            "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}},
        "spec": {"podCIDR": "10.244.1.0/24"},
        "status": {
            "capacity": {"cpu": cpu, "memory": format!("{mem_gi}Gi"), "pods": "110"},
            "allocatable": {"cpu": cpu, "memory": format!("{mem_gi}Gi"), "pods": "110"},
            "conditions": [
                {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status",
                 "lastHeartbeatTime": NOW, "lastTransitionTime": "2026-11-01T00:01:00Z"},
                {"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory", "message": "kubelet has sufficient memory available",
                 "lastHeartbeatTime": NOW, "lastTransitionTime": "2026-11-01T00:01:00Z"},
                {"type": "DiskPressure", "status": "False", "reason": "KubeletHasNoDiskPressure", "message": "kubelet has no disk pressure",
                 "lastHeartbeatTime": NOW, "lastTransitionTime": "2026-11-01T00:01:00Z"},
                {"type": "PIDPressure", "status": "False", "reason": "KubeletHasSufficientPID", "message": "kubelet has sufficient PID available",
                 "lastHeartbeatTime": NOW, "lastTransitionTime": "2026-11-01T00:01:00Z"}
            ],
            "addresses": [{"type": "InternalIP", "address": ip}, {"type": "Hostname", "address": name}],
            "nodeInfo": {"machineID": "m", "systemUUID": "s", "bootID": "b", "kernelVersion": "6.1.0", "osImage": "Debian GNU/Linux 12",
                "containerRuntimeVersion": "containerd://1.7.24", "kubeletVersion": "v1.33.2", "kubeProxyVersion": "v1.33.2",
                "operatingSystem": "linux", "architecture": "amd64"}
        }
    }))
}

/// The node's heartbeat Lease in kube-node-lease, renewed at [`NOW`].
pub fn lease(node: &str) -> Lease {
    typed(json!({
        "metadata": {"name": node, "namespace": "kube-node-lease", "creationTimestamp": "2026-11-01T00:00:00Z"},
        "spec": {"holderIdentity": node, "leaseDurationSeconds": 40, "renewTime": "2026-11-30T09:59:58.000000Z"}
    }))
}

/// A Running, Ready pod on `node` with one container `app` requesting `cpu`, labelled `app=<app>`, at `ip`.
pub fn running_pod(ns: &str, name: &str, app: &str, node: &str, cpu: &str, ip: &str) -> Pod {
    typed(json!({
        "metadata": {"name": name, "namespace": ns, "uid": format!("uid-pod-{ns}-{name}"), "labels": {"app": app}, "creationTimestamp": "2026-11-29T08:00:00Z"},
        "spec": {"nodeName": node, "containers": [{"name": "app", "image": "registry.example/app:1.0",
            "resources": {"requests": {"cpu": cpu, "memory": "128Mi"}}}]},
        "status": {"phase": "Running", "podIP": ip, "hostIP": "10.0.0.11", "startTime": "2026-11-29T08:00:05Z",
            "conditions": [{"type": "PodScheduled", "status": "True"}, {"type": "Initialized", "status": "True"},
                {"type": "ContainersReady", "status": "True"}, {"type": "Ready", "status": "True"}],
            "containerStatuses": [{"name": "app", "ready": true, "restartCount": 0, "image": "registry.example/app:1.0", "imageID": "",
                "started": true, "state": {"running": {"startedAt": "2026-11-29T08:00:06Z"}}}]}
    }))
}

/// A Service selecting `app=<app>` on port 80.
pub fn service(ns: &str, name: &str, app: &str, cluster_ip: &str) -> Service {
    typed(json!({
        "metadata": {"name": name, "namespace": ns, "uid": format!("uid-svc-{ns}-{name}"), "creationTimestamp": "2026-11-29T08:00:00Z"},
        "spec": {"selector": {"app": app}, "ports": [{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"}],
            "clusterIP": cluster_ip, "clusterIPs": [cluster_ip], "type": "ClusterIP"}
    }))
}

/// The EndpointSlice of Service `svc` with one ready endpoint per (pod, ip).
pub fn endpoint_slice(ns: &str, svc: &str, pods: &[(&str, &str)]) -> EndpointSlice {
    let endpoints: Vec<Value> = pods
        .iter()
        .map(|(p, ip)| json!({"addresses": [ip], "conditions": {"ready": true, "serving": true, "terminating": false},
            "targetRef": {"kind": "Pod", "name": p, "namespace": ns}}))
        .collect();
    typed(json!({
        "metadata": {"name": format!("{svc}-abcde"), "namespace": ns, "labels": {"kubernetes.io/service-name": svc,
            "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"}, "creationTimestamp": "2026-11-29T08:00:00Z"},
        "addressType": "IPv4", "endpoints": endpoints, "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]
    }))
}

/// A core/v1 Event about `kind/name` in `ns`.
#[allow(clippy::too_many_arguments)] // one per Event field a scenario sets
pub fn event(ns: &str, name: &str, kind: &str, obj: &str, field_path: Option<&str>, type_: &str, reason: &str, message: &str, count: i32) -> Event {
    let mut involved = json!({"kind": kind, "name": obj, "namespace": ns, "apiVersion": "v1", "uid": format!("uid-pod-{ns}-{obj}")});
    if let Some(fp) = field_path {
        involved["fieldPath"] = json!(fp);
    }
    typed(json!({
        "metadata": {"name": name, "namespace": ns, "creationTimestamp": "2026-11-30T09:00:00Z"},
        "involvedObject": involved, "type": type_, "reason": reason, "message": message, "count": count,
        "firstTimestamp": "2026-11-30T09:00:00Z", "lastTimestamp": NOW,
        "source": {"component": if reason == "FailedScheduling" { "default-scheduler" } else { "kubelet" }}
    }))
}

fn namespace(name: &str) -> Namespace {
    typed(json!({"metadata": {"name": name, "creationTimestamp": "2026-11-01T00:00:00Z"}, "status": {"phase": "Active"}}))
}

/// The healthy objects: node `worker-1` (2 CPUs, 10.0.0.11), pod `api-7d9f` (1500m), Service `api` with a ready endpoint.
pub fn healthy() -> Objects {
    let mut o = Objects::new();
    o.add(&namespace("shop")).add(&namespace("default")).add(&namespace("kube-node-lease"));
    o.add(&node("worker-1", "2", 8, "10.0.0.11")).add(&lease("worker-1"));
    o.add(&running_pod("shop", "api-7d9f", "api", "worker-1", "1500m", "10.244.1.7"));
    o.add(&service("shop", "api", "api", "10.96.12.34"));
    o.add(&endpoint_slice("shop", "api", &[("api-7d9f", "10.244.1.7")]));
    o
}

/// [`healthy`] plus the three lab objects.
pub fn lab() -> Objects {
    let mut o = healthy();
    // Pending on CPU: 1 CPU requested, 0.5 free on the only node.
    let pending: Pod = typed(json!({
        "metadata": {"name": "checkout-0", "namespace": "shop", "uid": "uid-pod-shop-checkout-0", "labels": {"app": "checkout"}, "creationTimestamp": "2026-11-30T09:00:00Z"},
        "spec": {"containers": [{"name": "app", "image": "registry.example/checkout:2.1", "resources": {"requests": {"cpu": "1", "memory": "256Mi"}}}],
            "schedulerName": "default-scheduler"},
        "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
            "message": "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
            "lastTransitionTime": "2026-11-30T09:00:01Z"}]}
    }));
    o.add(&pending);
    o.add(&event("shop", "checkout-0.181", "Pod", "checkout-0", None, "Warning", "FailedScheduling",
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.", 12));
    // Liveness probe on a path that answers 404: restarted six times.
    let mut web = running_pod("shop", "web-5c8", "web", "worker-1", "100m", "10.244.1.9");
    let v: Value = json!({"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"}, "periodSeconds": 10, "failureThreshold": 3, "timeoutSeconds": 1, "successThreshold": 1});
    if let Some(spec) = web.spec.as_mut() {
        spec.containers[0].liveness_probe = Some(typed(v));
    }
    if let Some(st) = web.status.as_mut().and_then(|s| s.container_statuses.as_mut()) {
        st[0].restart_count = 6;
        st[0].last_state = Some(typed(json!({"terminated": {"exitCode": 2, "reason": "Error", "startedAt": "2026-11-30T09:50:00Z", "finishedAt": "2026-11-30T09:50:31Z"}})));
    }
    o.add(&web);
    o.add(&event("shop", "web-5c8.17f", "Pod", "web-5c8", Some("spec.containers{app}"), "Warning", "Unhealthy",
        "Liveness probe failed: HTTP probe failed with statuscode: 404", 18));
    o.add(&event("shop", "web-5c8.180", "Pod", "web-5c8", Some("spec.containers{app}"), "Normal", "Killing",
        "Container app failed liveness probe, will be restarted", 6));
    // Service selector mismatch: `app: payments`, the pods say `app: payment`.
    o.add(&running_pod("shop", "payment-6b7", "payment", "worker-1", "100m", "10.244.1.12"));
    o.add(&service("shop", "payments", "payments", "10.96.40.2"));
    o
}

/// `pods` Running pods in namespaces `team-0..9` over `pods / 50` nodes (at least 1), one
/// Service (with its EndpointSlice) and one Normal event per 10 pods.
pub fn large(pods: usize) -> Objects {
    let mut o = Objects::new();
    let nodes = (pods / 50).max(1);
    for i in 0..nodes {
        let name = format!("node-{i:04}");
        o.add(&node(&name, "64", 256, &format!("10.1.{}.{}", i / 250, i % 250 + 1))).add(&lease(&name));
    }
    for t in 0..10 {
        o.add(&namespace(&format!("team-{t}")));
    }
    for i in 0..pods {
        let ns = format!("team-{}", i % 10);
        let app = format!("app-{}", i / 10);
        let pod = format!("{app}-{i:05}");
        let ip = format!("10.2{}.{}.{}", i / 62_500 % 10, i / 250 % 250, i % 250 + 1);
        o.add(&running_pod(&ns, &pod, &app, &format!("node-{:04}", i % nodes), "100m", &ip));
        if i % 10 == 0 {
            o.add(&service(&ns, &app, &app, &format!("10.96.{}.{}", i / 2500, i / 10 % 250 + 1)));
            o.add(&endpoint_slice(&ns, &app, &[(&pod, &ip)]));
            o.add(&event(&ns, &format!("{pod}.1"), "Pod", &pod, Some("spec.containers{app}"), "Normal", "Started", "Started container app", 1));
        }
    }
    o
}
