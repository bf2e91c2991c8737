//! Edge cases of single probes on small hand-built states: each test builds the few
//! objects that matter and checks which objects a probe reports.

use super::{get, run, Verdict};
use crate::state::{ClusterState, ResourceKind};
use serde_json::{json, Value};

const NOW: &str = "2026-11-30T12:00:00Z";

/// A state holding `objects` (each with its `kind`), every kind marked read, observed at NOW.
fn state(objects: Vec<Value>) -> ClusterState {
    let mut s = ClusterState::default();
    for o in objects {
        let kind = ResourceKind::parse(o["kind"].as_str().expect("kind")).expect("known kind");
        s.insert_json(kind, o).expect("schema-valid object");
    }
    s.loaded.extend(ResourceKind::ALL.iter().copied());
    s.observed_at = Some(NOW.parse().expect("time"));
    s
}

/// The objects probe `id` reports on, as `Kind ns/name` strings.
fn check(id: &str, objects: Vec<Value>) -> Vec<String> {
    let p = get(id).unwrap_or_else(|| panic!("no probe {id}"));
    let o = run(p, &state(objects));
    o.findings.iter().map(|f| f.object.to_string()).collect()
}

fn node(name: &str, cpu: &str, extra_spec: Value) -> Value {
    let mut spec = json!({});
    if let (Some(s), Some(e)) = (spec.as_object_mut(), extra_spec.as_object()) {
        s.extend(e.clone());
    }
    json!({"kind": "Node", "apiVersion": "v1", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}, "creationTimestamp": "2026-11-01T00:00:00Z"},
           "spec": spec,
           "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"},
                      "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status"}],
                      "nodeInfo": {"machineID": "", "systemUUID": "", "bootID": "", "kernelVersion": "", "osImage": "", "containerRuntimeVersion": "",
                                   "kubeletVersion": "v1.35.0", "kubeProxyVersion": "", "operatingSystem": "linux", "architecture": "amd64"}}})
}

fn pending(name: &str, cpu: &str, message: &str, extra_spec: Value) -> Value {
    let mut spec = json!({"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]});
    if let (Some(s), Some(e)) = (spec.as_object_mut(), extra_spec.as_object()) {
        s.extend(e.clone());
    }
    json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"name": name, "namespace": "app", "creationTimestamp": "2026-11-30T11:00:00Z"},
           "spec": spec,
           "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}]}})
}

fn bound(name: &str, ns: &str, node: &str, cpu: &str, phase: &str, labels: Value) -> Value {
    json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"name": name, "namespace": ns, "labels": labels, "creationTimestamp": "2026-11-29T00:00:00Z"},
           "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]},
           "status": {"phase": phase, "conditions": [{"type": "Ready", "status": if phase == "Running" { "True" } else { "False" }}]}})
}

#[test]
fn a_pending_pod_fits_once_a_daemonset_pod_has_terminated() {
    let msg = "0/1 nodes are available: 1 Insufficient cpu.";
    let ds_pod = |phase: &str| {
        let mut p = bound("agent-x", "kube-system", "n1", "3", phase, json!({}));
        p["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "uid": "u"}]);
        p
    };
    let base = |p: Value| vec![node("n1", "4", json!({})), p, pending("big", "2", msg, json!({}))];
    // While the DaemonSet pod runs it holds 3 of 4 cores and the pod does not fit.
    assert_eq!(check("insufficient-resources", base(ds_pod("Running"))), ["Pod app/big"]);
    // Once it has failed the scheduler no longer counts it: the condition is stale.
    assert!(check("insufficient-resources", base(ds_pod("Failed"))).is_empty());
}

#[test]
fn insufficient_resources_falls_back_to_the_message_without_nodes() {
    let mut s = state(vec![pending("big", "64", "0/3 nodes are available: 3 Insufficient cpu.", json!({}))]);
    s.loaded.remove(&ResourceKind::Node);
    let o = run(get("insufficient-resources").expect("probe"), &s);
    assert_eq!(o.verdict, Verdict::Holds);
    assert_eq!(o.missing.len(), 1, "the missing kind is still reported");
    // Without nodes and without the text, nothing can be said.
    let mut s = state(vec![pending("p", "1", "0/3 nodes are available: 3 node(s) had volume node affinity conflict.", json!({}))]);
    s.loaded.remove(&ResourceKind::Node);
    assert_eq!(run(get("insufficient-resources").expect("probe"), &s).verdict, Verdict::Unknown);
}

#[test]
fn a_tolerated_taint_is_not_a_cause_and_the_control_plane_taint_never_is() {
    let taint = json!({"taints": [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]});
    let cp = json!({"taints": [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]});
    let msg = "0/2 nodes are available: 1 node(s) had untolerated taint {dedicated: db}, 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }.";
    let objs = |tol: Value| vec![node("db-1", "4", taint.clone()), node("cp", "4", cp.clone()), pending("p", "1", msg, tol)];
    assert_eq!(check("untolerated-taint", objs(json!({}))), ["Pod app/p"]);
    let tolerates = json!({"tolerations": [{"key": "dedicated", "operator": "Equal", "value": "db", "effect": "NoSchedule"}]});
    assert!(check("untolerated-taint", objs(tolerates)).is_empty(), "with the toleration the pod fits db-1: a stale condition");
    // With a worker that is full, the control-plane taint is by design, not the cause.
    let full = "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }.";
    assert!(check("untolerated-taint", vec![node("w", "1", json!({})), node("cp", "4", cp.clone()), pending("p", "2", full, json!({}))]).is_empty());
    // A single control-plane node: nowhere else to go, so its taint is the cause.
    let single = "0/1 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }.";
    assert_eq!(check("untolerated-taint", vec![node("cp", "4", cp), pending("p", "1", single, json!({}))]), ["Pod app/p"]);
}

#[test]
fn without_nodes_only_a_user_taint_in_the_message_counts() {
    let run_msg = |msg: &str| {
        let mut s = state(vec![pending("p", "1", msg, json!({}))]);
        s.loaded.remove(&ResourceKind::Node);
        run(get("untolerated-taint").expect("probe"), &s).findings.len()
    };
    assert_eq!(run_msg("0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 2 Insufficient cpu."), 0);
    assert_eq!(run_msg("0/3 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }, 2 Insufficient cpu."), 0);
    assert_eq!(run_msg("0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 2 node(s) had untolerated taint {dedicated: db}."), 1);
    assert_eq!(run_msg("0/2 nodes are available: 2 node(s) had taint {gpu: true}, that the pod didn't tolerate."), 1);
}

#[test]
fn cordoned_nodes_count_only_for_pods_that_do_not_tolerate_the_cordon() {
    let cordoned = json!({"unschedulable": true, "taints": [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]});
    let msg = "0/1 nodes are available: 1 node(s) were unschedulable.";
    assert_eq!(check("nodes-cordoned-unschedulable", vec![node("n1", "4", cordoned.clone()), pending("p", "1", msg, json!({}))]), ["Pod app/p"]);
    let tol = json!({"tolerations": [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}]});
    assert!(check("nodes-cordoned-unschedulable", vec![node("n1", "4", cordoned.clone()), pending("p", "1", msg, tol)]).is_empty());
    // A cordoned node with no pod waiting for it is maintenance, not a failure.
    assert!(check("nodes-cordoned-unschedulable", vec![node("n1", "4", cordoned)]).is_empty());
}

#[test]
fn node_affinity_matches_expressions_and_fields() {
    let msg = "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.";
    let aff = |op: &str| {
        json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": op, "values": ["n1"]}]}]}}}})
    };
    assert_eq!(check("node-affinity-mismatch", vec![node("n1", "4", json!({})), pending("p", "1", msg, aff("NotIn"))]), ["Pod app/p"]);
    assert!(check("node-affinity-mismatch", vec![node("n1", "4", json!({})), pending("p", "1", msg, aff("In"))]).is_empty());
}

fn service(name: &str, selector: Option<Value>) -> Value {
    let mut spec = json!({"ports": [{"port": 80}]});
    if let Some(s) = selector {
        spec["selector"] = s;
    }
    json!({"kind": "Service", "apiVersion": "v1", "metadata": {"name": name, "namespace": "app"}, "spec": spec})
}

#[test]
fn services_without_a_selector_or_with_a_matching_workload_are_not_mismatched() {
    assert!(check("service-selector-mismatch", vec![service("external-db", None)]).is_empty());
    assert_eq!(check("service-selector-mismatch", vec![service("web", Some(json!({"app": "web"})))]), ["Service app/web"]);
    let pod = bound("web-1", "app", "n1", "1", "Running", json!({"app": "web", "tier": "fe"}));
    assert!(check("service-selector-mismatch", vec![service("web", Some(json!({"app": "web"}))), pod]).is_empty());
    // A pod in another namespace does not count.
    let other = bound("web-1", "other", "n1", "1", "Running", json!({"app": "web"}));
    assert_eq!(check("service-selector-mismatch", vec![service("web", Some(json!({"app": "web"}))), other]), ["Service app/web"]);
}

#[test]
fn no_ready_endpoints_reads_endpoint_slices() {
    let pod = bound("web-1", "app", "n1", "1", "Running", json!({"app": "web"}));
    let slice = |ready: Option<bool>| {
        let mut cond = json!({});
        if let Some(r) = ready {
            cond["ready"] = json!(r);
        }
        json!({"kind": "EndpointSlice", "apiVersion": "discovery.k8s.io/v1", "addressType": "IPv4",
               "metadata": {"name": "web-abc", "namespace": "app", "labels": {"kubernetes.io/service-name": "web"}},
               "endpoints": [{"addresses": ["10.0.0.1"], "conditions": cond}]})
    };
    let svc = service("web", Some(json!({"app": "web"})));
    assert_eq!(check("service-no-ready-endpoints", vec![svc.clone(), pod.clone(), slice(Some(false))]), ["Service app/web"]);
    assert!(check("service-no-ready-endpoints", vec![svc.clone(), pod.clone(), slice(Some(true))]).is_empty());
    assert!(check("service-no-ready-endpoints", vec![svc, pod, slice(None)]).is_empty(), "unset ready counts as ready");
}

fn crashing_pod(exit: i32, reason: &str) -> Value {
    json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "app-1", "namespace": "app", "uid": "u1"},
           "spec": {"nodeName": "n1", "containers": [{"name": "app", "image": "i", "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080}}}]},
           "status": {"phase": "Running", "containerStatuses": [{"name": "app", "image": "i", "imageID": "", "ready": false, "restartCount": 4,
               "state": {"waiting": {"reason": "CrashLoopBackOff"}},
               "lastState": {"terminated": {"exitCode": exit, "reason": reason}}}]}})
}

fn pod_event(reason: &str, message: &str) -> Value {
    json!({"kind": "Event", "apiVersion": "v1", "metadata": {"name": format!("app-1.{reason}"), "namespace": "app"},
           "involvedObject": {"kind": "Pod", "namespace": "app", "name": "app-1", "uid": "u1", "fieldPath": "spec.containers{app}"},
           "reason": reason, "message": message, "count": 5, "lastTimestamp": NOW, "type": "Warning"})
}

#[test]
fn a_liveness_kill_is_not_an_application_crash() {
    assert_eq!(check("crashloop-app-error", vec![crashing_pod(1, "Error")]), ["Pod app/app-1"]);
    let killed = vec![crashing_pod(137, "Error"), pod_event("Killing", "Container app failed liveness probe, will be restarted"),
                      pod_event("Unhealthy", "Liveness probe failed: HTTP probe failed with statuscode: 404")];
    assert!(check("crashloop-app-error", killed.clone()).is_empty());
    assert_eq!(check("liveness-probe-wrong-path", killed), ["Pod app/app-1"]);
    // A 500 means the app answers but is unhealthy: not a wrong path.
    let sick = vec![crashing_pod(0, "Completed"), pod_event("Unhealthy", "Liveness probe failed: HTTP probe failed with statuscode: 500")];
    assert!(check("liveness-probe-wrong-path", sick.clone()).is_empty());
    assert!(check("crashloop-completed-restart-always", sick).is_empty(), "killed by its probe, not exiting by itself");
    assert_eq!(check("crashloop-completed-restart-always", vec![crashing_pod(0, "Completed")]), ["Pod app/app-1"]);
    assert_eq!(check("crashloop-command-not-found", vec![crashing_pod(127, "Error")]), ["Pod app/app-1"]);
    assert!(check("crashloop-app-error", vec![crashing_pod(127, "Error")]).is_empty());
}

#[test]
fn host_network_daemons_of_the_system_namespaces_are_left_alone() {
    let p = |ns: &str, policy: Option<&str>| {
        let mut v = bound("agent", ns, "n1", "0", "Running", json!({}));
        v["spec"]["hostNetwork"] = json!(true);
        v["spec"]["containers"][0]["env"] = json!([{"name": "SINK", "value": "http://collector.logging.svc:4318"}]);
        if let Some(pol) = policy {
            v["spec"]["dnsPolicy"] = json!(pol);
        }
        v
    };
    assert!(check("hostnetwork-pod-clusterfirst-uses-node-dns", vec![p("kube-system", Some("ClusterFirst"))]).is_empty());
    assert!(check("hostnetwork-pod-clusterfirst-uses-node-dns", vec![p("logging", Some("ClusterFirstWithHostNet"))]).is_empty());
    assert_eq!(check("hostnetwork-pod-clusterfirst-uses-node-dns", vec![p("logging", None)]), ["Pod logging/agent"]);
    // A DaemonSet's node agent counts only while it shows a symptom (a container not ready).
    let mut agent = p("logging", None);
    agent["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "uid": "u", "controller": true}]);
    agent["status"]["containerStatuses"] = json!([{"name": "c", "image": "i", "imageID": "", "ready": true, "restartCount": 0, "state": {"running": {}}}]);
    assert!(check("hostnetwork-pod-clusterfirst-uses-node-dns", vec![agent.clone()]).is_empty());
    agent["status"]["containerStatuses"][0]["ready"] = json!(false);
    assert_eq!(check("hostnetwork-pod-clusterfirst-uses-node-dns", vec![agent]), ["Pod logging/agent"]);
    // A node agent that names no cluster Service does not need the cluster DNS.
    let mut exporter = p("monitoring", None);
    exporter["spec"]["containers"][0]["env"] = json!([]);
    assert!(check("hostnetwork-pod-clusterfirst-uses-node-dns", vec![exporter]).is_empty());
}

fn webhook(policy: Option<&str>, namespace_selector: Value) -> Value {
    let mut w = json!({"name": "hook.example.com", "admissionReviewVersions": ["v1"], "sideEffects": "None",
                       "clientConfig": {"service": {"namespace": "hooks", "name": "hook"}},
                       "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}],
                       "namespaceSelector": namespace_selector});
    if let Some(p) = policy {
        w["failurePolicy"] = json!(p);
    }
    json!({"kind": "MutatingWebhookConfiguration", "apiVersion": "admissionregistration.k8s.io/v1", "metadata": {"name": "hook"}, "webhooks": [w]})
}

#[test]
fn webhooks_fail_closed_by_default_and_deadlock_only_on_their_own_namespace() {
    let ns = json!({"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": "hooks", "labels": {"kubernetes.io/metadata.name": "hooks"}}});
    let svc = json!({"kind": "Service", "apiVersion": "v1", "metadata": {"name": "hook", "namespace": "hooks"}, "spec": {"selector": {"app": "hook"}, "ports": [{"port": 443}]}});
    let all = json!({});
    let not_own = json!({"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["hooks"]}]});
    let objs = |w: Value| vec![ns.clone(), svc.clone(), w];
    assert_eq!(check("admission-webhook-unreachable", objs(webhook(None, all.clone()))), ["MutatingWebhookConfiguration hook"]);
    assert!(check("admission-webhook-unreachable", objs(webhook(Some("Ignore"), all.clone()))).is_empty());
    assert_eq!(check("admission-webhook-self-deadlock", objs(webhook(None, all))), ["MutatingWebhookConfiguration hook"]);
    assert!(check("admission-webhook-self-deadlock", objs(webhook(None, not_own.clone()))).is_empty());
    assert_eq!(check("admission-webhook-unreachable", objs(webhook(None, not_own))), ["MutatingWebhookConfiguration hook"]);
    // A Service without a selector has hand-managed endpoints: not judged.
    let manual = json!({"kind": "Service", "apiVersion": "v1", "metadata": {"name": "hook", "namespace": "hooks"}, "spec": {"ports": [{"port": 443}]}});
    assert!(check("admission-webhook-unreachable", vec![ns, manual, webhook(None, json!({}))]).is_empty());
}

fn pvc(extra_meta: Value, class: Option<&str>, phase: &str) -> Value {
    let mut m = json!({"name": "data", "namespace": "app", "creationTimestamp": "2026-11-30T10:00:00Z"});
    if let (Some(a), Some(b)) = (m.as_object_mut(), extra_meta.as_object()) {
        a.extend(b.clone());
    }
    let mut spec = json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}});
    if let Some(c) = class {
        spec["storageClassName"] = json!(c);
    }
    json!({"kind": "PersistentVolumeClaim", "apiVersion": "v1", "metadata": m, "spec": spec, "status": {"phase": phase}})
}

fn class(name: &str, default: bool, mode: &str) -> Value {
    let mut m = json!({"name": name});
    if default {
        m["annotations"] = json!({"storageclass.kubernetes.io/is-default-class": "true"});
    }
    json!({"kind": "StorageClass", "apiVersion": "storage.k8s.io/v1", "metadata": m, "provisioner": "csi.example.com", "volumeBindingMode": mode})
}

#[test]
fn claims_without_a_class_need_a_default_and_protection_needs_a_user() {
    assert_eq!(check("pvc-pending-no-storageclass", vec![pvc(json!({}), None, "Pending"), class("slow", false, "Immediate")]), ["PersistentVolumeClaim app/data"]);
    assert!(check("pvc-pending-no-storageclass", vec![pvc(json!({}), None, "Pending"), class("std", true, "Immediate")]).is_empty());
    assert_eq!(check("pvc-pending-no-storageclass", vec![pvc(json!({}), Some("gold"), "Pending"), class("std", true, "Immediate")]), ["PersistentVolumeClaim app/data"]);
    assert!(check("multiple-default-storageclasses", vec![class("a", true, "Immediate"), class("b", false, "Immediate")]).is_empty());
    let deleting = json!({"deletionTimestamp": "2026-11-30T11:00:00Z", "finalizers": ["kubernetes.io/pvc-protection"]});
    let user = json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "u", "namespace": "app"},
                      "spec": {"nodeName": "n1", "containers": [{"name": "c"}], "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]},
                      "status": {"phase": "Running"}});
    assert_eq!(check("pvc-stuck-terminating-protection", vec![pvc(deleting.clone(), Some("std"), "Bound"), user]), ["PersistentVolumeClaim app/data"]);
    assert!(check("pvc-stuck-terminating-protection", vec![pvc(deleting.clone(), Some("std"), "Bound")]).is_empty());
    // Kept only by pvc-protection is in-use protection, not a stuck finalizer.
    assert!(check("object-stuck-terminating-finalizer", vec![pvc(deleting, Some("std"), "Bound")]).is_empty());
}

#[test]
fn a_recent_deletion_is_not_stuck() {
    let svc = |deleted: &str| {
        json!({"kind": "Service", "apiVersion": "v1", "metadata": {"name": "lb", "namespace": "app", "deletionTimestamp": deleted,
               "finalizers": ["service.kubernetes.io/load-balancer-cleanup"]}, "spec": {"ports": [{"port": 80}]}})
    };
    assert!(check("object-stuck-terminating-finalizer", vec![svc("2026-11-30T11:58:00Z")]).is_empty());
    assert_eq!(check("object-stuck-terminating-finalizer", vec![svc("2026-11-30T10:00:00Z")]), ["Service app/lb"]);
}

#[test]
fn kubelet_skew_needs_the_server_version() {
    let mut n = node("n1", "4", json!({}));
    n["status"]["nodeInfo"]["kubeletVersion"] = json!("v1.36.1");
    let mut s = state(vec![n]);
    let p = get("kubelet-newer-than-apiserver").expect("probe");
    assert!(run(p, &s).findings.is_empty(), "no server version: nothing to compare");
    s.version = kubewhy_engine::model::Version::parse("v1.35.2").ok();
    assert_eq!(run(p, &s).findings.len(), 1);
    s.version = kubewhy_engine::model::Version::parse("v1.36.0").ok();
    assert!(run(p, &s).findings.is_empty());
}

#[test]
fn every_probe_has_a_verified_shape() {
    let all = super::all();
    assert!(all.len() >= 45, "{} probes", all.len());
    let mut ids: Vec<&str> = all.iter().map(|p| p.id).collect();
    ids.dedup();
    assert_eq!(ids.len(), all.len(), "probe ids are unique");
    for p in all {
        assert_eq!(p.failure_mode, format!("failure-mode/{}", p.id), "{}: the id is the failure mode's slug", p.id);
        assert!(!p.title.is_empty());
        // On an empty but fully read cluster no probe finds anything.
        assert_eq!(run(p, &state(vec![])).verdict, Verdict::DoesNotHold, "{}", p.id);
    }
}

fn node_not_ready(message: &str) -> Value {
    let mut n = node("n1", "4", json!({}));
    n["status"]["conditions"] = json!([{"type": "Ready", "status": "False", "reason": "KubeletNotReady", "message": message}]);
    n
}

#[test]
fn node_ready_messages_name_the_broken_part() {
    let pleg = node_not_ready("PLEG is not healthy: pleg was last seen active 3m5s ago; threshold is 3m0s");
    let runtime = node_not_ready("container runtime is down");
    let cni = node_not_ready("container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized");
    assert_eq!(check("pleg-not-healthy", vec![pleg.clone()]), ["Node n1"]);
    assert!(check("pleg-not-healthy", vec![runtime.clone()]).is_empty());
    assert_eq!(check("container-runtime-down", vec![runtime]), ["Node n1"]);
    assert!(check("container-runtime-down", vec![cni.clone()]).is_empty());
    assert_eq!(check("cni-not-initialized", vec![cni]), ["Node n1"]);
    assert!(check("cni-not-initialized", vec![pleg]).is_empty());
}

fn waiting_pod(reason: &str, message: &str) -> Value {
    json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "app-1", "namespace": "app", "uid": "u1"},
           "spec": {"nodeName": "n1", "containers": [{"name": "app", "image": "registry.example.com/app:1"}]},
           "status": {"phase": "Pending", "containerStatuses": [{"name": "app", "image": "registry.example.com/app:1", "imageID": "", "ready": false, "restartCount": 0,
               "state": {"waiting": {"reason": reason, "message": message}}}]}})
}

#[test]
fn waiting_reasons_and_pull_errors() {
    let net = waiting_pod("ErrImagePull", "failed to pull and unpack image \"registry.example.com/app:1\": failed to resolve reference: dial tcp 10.1.2.3:443: i/o timeout");
    assert_eq!(check("image-pull-network", vec![net.clone()]), ["Pod app/app-1"]);
    assert!(check("image-pull-not-found", vec![net]).is_empty());
    let invalid = waiting_pod("InvalidImageName", "Failed to apply default image tag \"Registry/App:1\": couldn't parse image name \"Registry/App:1\": invalid reference format: repository name must be lowercase");
    assert_eq!(check("invalid-image-name", vec![invalid.clone()]), ["Pod app/app-1"]);
    assert!(check("image-pull-network", vec![invalid]).is_empty());
    // The sandbox fails before any container: the event says why.
    let sandbox = vec![
        waiting_pod("ContainerCreating", ""),
        json!({"kind": "Event", "apiVersion": "v1", "metadata": {"name": "app-1.sb", "namespace": "app"},
               "involvedObject": {"kind": "Pod", "namespace": "app", "name": "app-1", "uid": "u1"}, "reason": "FailedCreatePodSandBox",
               "message": "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox \"4f1c\": plugin type=\"calico\" failed (add): error getting ClusterInformation: connection is unauthorized",
               "count": 12, "lastTimestamp": NOW, "type": "Warning"}),
    ];
    assert_eq!(check("cni-sandbox-setup-failed", sandbox), ["Pod app/app-1"]);
}

#[test]
fn liveness_timeouts_are_not_wrong_paths() {
    let mut p = crashing_pod(137, "Error");
    p["status"]["containerStatuses"][0]["state"] = json!({"running": {"startedAt": "2026-11-30T11:59:00Z"}});
    let ev = pod_event("Unhealthy", "Liveness probe failed: Get \"http://10.244.1.7:8080/healthz\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)");
    assert_eq!(check("liveness-probe-timeout", vec![p.clone(), ev.clone()]), ["Pod app/app-1"]);
    assert!(check("liveness-probe-wrong-path", vec![p, ev]).is_empty());
}

#[test]
fn a_pod_for_a_scheduler_that_does_not_run() {
    let p = |scheduler: &str, created: &str| {
        json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p", "namespace": "app", "creationTimestamp": created},
               "spec": {"schedulerName": scheduler, "containers": [{"name": "c"}]}, "status": {"phase": "Pending"}})
    };
    assert_eq!(check("scheduler-name-not-running", vec![p("volcano", "2026-11-30T11:00:00Z")]), ["Pod app/p"]);
    assert!(check("scheduler-name-not-running", vec![p("volcano", "2026-11-30T11:58:00Z")]).is_empty(), "two minutes is not long enough");
    assert!(check("scheduler-name-not-running", vec![p("default-scheduler", "2026-11-30T11:00:00Z")]).is_empty());
}

#[test]
fn pull_access_denied_on_docker_hub_without_secrets_is_a_missing_repository() {
    let msg = "failed to pull and unpack image \"docker.io/library/ngnix:1\": failed to resolve reference \"docker.io/library/ngnix:1\": pull access denied, repository does not exist or may require authorization: server message: insufficient_scope";
    let hub = |secrets: bool| {
        let mut p = waiting_pod("ErrImagePull", msg);
        p["spec"]["containers"][0]["image"] = json!("ngnix:1");
        p["status"]["containerStatuses"][0]["image"] = json!("ngnix:1");
        if secrets {
            p["spec"]["imagePullSecrets"] = json!([{"name": "hub"}]);
        }
        p
    };
    assert_eq!(check("image-pull-not-found", vec![hub(false)]), ["Pod app/app-1"]);
    assert!(check("image-pull-unauthorized", vec![hub(false)]).is_empty());
    assert_eq!(check("image-pull-unauthorized", vec![hub(true)]), ["Pod app/app-1"]);
    assert!(check("image-pull-not-found", vec![hub(true)]).is_empty());
    // A private registry: the credentials are the likely cause.
    assert_eq!(check("image-pull-unauthorized", vec![waiting_pod("ErrImagePull", msg)]), ["Pod app/app-1"]);
}

#[test]
fn finished_and_unscheduled_pods_and_ephemeral_claims_under_pvc_protection() {
    let deleting = json!({"deletionTimestamp": "2026-11-30T11:00:00Z", "finalizers": ["kubernetes.io/pvc-protection"]});
    let user = |phase: &str, node: Option<&str>| {
        let mut p = json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "u", "namespace": "app"},
                           "spec": {"containers": [{"name": "c"}], "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]},
                           "status": {"phase": phase}});
        if let Some(n) = node {
            p["spec"]["nodeName"] = json!(n);
        }
        p
    };
    let c = pvc(deleting.clone(), Some("std"), "Bound");
    assert_eq!(check("pvc-stuck-terminating-protection", vec![c.clone(), user("Succeeded", Some("n1"))]), ["PersistentVolumeClaim app/data"]);
    assert_eq!(check("pvc-stuck-terminating-protection", vec![c.clone(), user("Failed", Some("n1"))]), ["PersistentVolumeClaim app/data"]);
    assert!(check("pvc-stuck-terminating-protection", vec![c, user("Pending", None)]).is_empty(), "an unscheduled pod does not block");
    let mut eph = pvc(deleting, Some("std"), "Bound");
    eph["metadata"]["name"] = json!("u-scratch");
    let mut owner = user("Running", Some("n1"));
    owner["spec"]["volumes"] = json!([{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}}]);
    assert_eq!(check("pvc-stuck-terminating-protection", vec![eph, owner]), ["PersistentVolumeClaim app/u-scratch"]);
}

fn evicted(message: &str, transition: &str) -> Value {
    json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "e", "namespace": "app"},
           "spec": {"nodeName": "n1", "containers": [{"name": "c"}]},
           "status": {"phase": "Failed", "reason": "Evicted", "message": message,
                      "conditions": [{"type": "Ready", "status": "False", "lastTransitionTime": transition}]}})
}

#[test]
fn admission_rejections_and_disk_signals_count_as_pressure_evictions() {
    let recent = "2026-11-30T11:50:00Z";
    let rejected = evicted("Pod was rejected: The node had condition: [MemoryPressure DiskPressure]. ", recent);
    assert_eq!(check("node-pressure-eviction-memory", vec![rejected.clone()]), ["Pod app/e"]);
    assert_eq!(check("node-pressure-eviction-disk", vec![rejected]), ["Pod app/e"]);
    let inodes = evicted("The node was low on resource: inodes. Threshold quantity: 5%, available: 1%. ", recent);
    assert_eq!(check("node-pressure-eviction-disk", vec![inodes.clone()]), ["Pod app/e"]);
    assert!(check("node-pressure-eviction-memory", vec![inodes]).is_empty());
    // A day-old eviction is history.
    let old = evicted("The node was low on resource: memory. ", "2026-11-29T10:00:00Z");
    assert!(check("node-pressure-eviction-memory", vec![old]).is_empty());
}

#[test]
fn an_oom_kill_hours_ago_is_history() {
    let oom = |finished: &str| {
        let mut p = crashing_pod(137, "OOMKilled");
        p["status"]["containerStatuses"][0]["lastState"]["terminated"]["finishedAt"] = json!(finished);
        p
    };
    assert_eq!(check("oom-killed-container-limit", vec![oom("2026-11-30T11:40:00Z")]), ["Pod app/app-1"]);
    assert!(check("oom-killed-container-limit", vec![oom("2026-11-30T06:00:00Z")]).is_empty());
}

#[test]
fn exec_grpc_and_tcp_liveness_timeouts() {
    let mut p = crashing_pod(137, "Error");
    p["status"]["containerStatuses"][0]["state"] = json!({"running": {"startedAt": "2026-11-30T11:59:00Z"}});
    for msg in [
        "Liveness probe failed: command \"/bin/check\" timed out",
        "Liveness probe failed: timeout: health rpc did not complete within 1s",
        "Liveness probe failed: dial tcp 10.244.1.7:8080: i/o timeout",
    ] {
        assert_eq!(check("liveness-probe-timeout", vec![p.clone(), pod_event("Unhealthy", msg)]), ["Pod app/app-1"], "{msg}");
    }
    assert!(check("liveness-probe-timeout", vec![p, pod_event("Unhealthy", "Liveness probe failed: command \"/bin/check\" exited with 1")]).is_empty());
}

/// A pod on n2, scheduled `scheduled_ago` seconds before NOW, mounting claim `data` (bound
/// to PV `pv-data`, a CSI volume of the attachable driver `ebs.csi.aws.com`), not started.
fn creating_with_volume(scheduled: &str) -> Vec<Value> {
    vec![
        json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "db", "namespace": "app", "uid": "u1", "creationTimestamp": scheduled},
               "spec": {"nodeName": "n2", "containers": [{"name": "c", "image": "i"}], "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]},
               "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": scheduled}],
                          "containerStatuses": [{"name": "c", "image": "i", "imageID": "", "ready": false, "restartCount": 0, "state": {"waiting": {"reason": "ContainerCreating"}}}]}}),
        json!({"kind": "PersistentVolumeClaim", "apiVersion": "v1", "metadata": {"name": "data", "namespace": "app"},
               "spec": {"accessModes": ["ReadWriteOnce"], "volumeName": "pv-data", "resources": {"requests": {"storage": "1Gi"}}}, "status": {"phase": "Bound"}}),
        json!({"kind": "PersistentVolume", "apiVersion": "v1", "metadata": {"name": "pv-data"},
               "spec": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}, "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-1"}}, "status": {"phase": "Bound"}}),
    ]
}

fn attachment(node: &str, attached: bool) -> Value {
    json!({"kind": "VolumeAttachment", "apiVersion": "storage.k8s.io/v1", "metadata": {"name": format!("csi-{node}")},
           "spec": {"attacher": "ebs.csi.aws.com", "nodeName": node, "source": {"persistentVolumeName": "pv-data"}}, "status": {"attached": attached}})
}

fn db_event(reason: &str, message: &str) -> Value {
    json!({"kind": "Event", "apiVersion": "v1", "metadata": {"name": format!("db.{reason}"), "namespace": "app"},
           "involvedObject": {"kind": "Pod", "namespace": "app", "name": "db", "uid": "u1"},
           "reason": reason, "message": message, "count": 1, "lastTimestamp": "2026-11-30T11:50:00Z", "type": "Warning"})
}

#[test]
fn a_mount_timeout_is_read_from_the_pod_age_and_the_attachments() {
    let old = "2026-11-30T11:50:00Z";
    let with = |mut v: Vec<Value>, extra: Vec<Value>| {
        v.extend(extra);
        v
    };
    // No event at all (1.28+ kubelets record none on a plain timeout): the missing attachment explains it.
    assert_eq!(check("failed-mount-timeout", creating_with_volume(old)), ["Pod app/db"]);
    assert!(check("failed-mount-timeout", with(creating_with_volume(old), vec![attachment("n2", true)])).is_empty());
    assert!(check("failed-mount-timeout", creating_with_volume("2026-11-30T11:59:00Z")).is_empty(), "within the 2m3s wait");
    let device = db_event("FailedMount", "MountVolume.MountDevice failed for volume \"pv-data\" : rpc error: code = Internal desc = format of disk failed");
    assert_eq!(check("failed-mount-timeout", with(creating_with_volume(old), vec![attachment("n2", true), device])), ["Pod app/db"]);
    // A missing ConfigMap is the other probe's finding.
    let cm = db_event("FailedMount", "MountVolume.SetUp failed for volume \"cfg\" : configmap \"app-config\" not found");
    assert!(check("failed-mount-timeout", with(creating_with_volume(old), vec![attachment("n2", true), cm])).is_empty());
}

#[test]
fn multi_attach_reads_both_messages_and_the_attachments() {
    let old = "2026-11-30T11:50:00Z";
    let with = |mut v: Vec<Value>, extra: Vec<Value>| {
        v.extend(extra);
        v
    };
    let legacy = db_event("FailedAttachVolume", "Multi-Attach error for volume \"pv-data\" Volume is already used by pod(s) db-old");
    let renamed = db_event("FailedAttachVolume", "Waiting for detach for volume \"pv-data\" Volume is already used by pod(s) db-old");
    assert_eq!(check("multi-attach-rwo", with(creating_with_volume(old), vec![legacy.clone()])), ["Pod app/db"]);
    assert_eq!(check("multi-attach-rwo", with(creating_with_volume(old), vec![renamed])), ["Pod app/db"]);
    // The event has aged out, the attachment on the other node remains.
    assert_eq!(check("multi-attach-rwo", with(creating_with_volume(old), vec![attachment("n1", true)])), ["Pod app/db"]);
    // Detached meanwhile and attached here: the event is history.
    assert!(check("multi-attach-rwo", with(creating_with_volume(old), vec![attachment("n2", true), legacy.clone()])).is_empty());
    // A rolling update: the new pod waits a few seconds for the old node's detach.
    assert!(check("multi-attach-rwo", with(creating_with_volume("2026-11-30T11:59:30Z"), vec![attachment("n1", true), legacy])).is_empty());
}

#[test]
fn provisioning_failures_behind_external_provisioning_events() {
    let ev = |reason: &str, at: &str| {
        json!({"kind": "Event", "apiVersion": "v1", "metadata": {"name": format!("data.{reason}"), "namespace": "app"},
               "involvedObject": {"kind": "PersistentVolumeClaim", "namespace": "app", "name": "data"},
               "reason": reason, "message": "m", "count": 3, "lastTimestamp": at, "type": "Normal"})
    };
    let claim = || pvc(json!({}), Some("std"), "Pending");
    let failed = ev("ProvisioningFailed", "2026-11-30T11:58:00Z");
    let external = ev("ExternalProvisioning", "2026-11-30T11:59:50Z");
    assert_eq!(check("pvc-provisioning-failed", vec![claim(), class("std", true, "Immediate"), failed.clone(), external]), ["PersistentVolumeClaim app/data"]);
    let succeeded = ev("ProvisioningSucceeded", "2026-11-30T11:59:00Z");
    assert!(check("pvc-provisioning-failed", vec![claim(), class("std", true, "Immediate"), failed, succeeded]).is_empty());
    let stale = ev("ProvisioningFailed", "2026-11-30T09:00:00Z");
    assert!(check("pvc-provisioning-failed", vec![claim(), class("std", true, "Immediate"), stale]).is_empty());
}

#[test]
fn a_namespace_deleting_its_content_is_stuck_only_after_ten_minutes() {
    let ns = |deleted: &str| {
        json!({"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": "old", "deletionTimestamp": deleted},
               "spec": {"finalizers": ["kubernetes"]},
               "status": {"phase": "Terminating", "conditions": [{"type": "NamespaceContentRemaining", "status": "True", "reason": "SomeResourcesRemain",
                                                                  "message": "Some resources are remaining: pods. has 2 resource instances"}]}})
    };
    assert!(check("namespace-stuck-terminating-finalizers", vec![ns("2026-11-30T11:58:00Z")]).is_empty());
    assert_eq!(check("namespace-stuck-terminating-finalizers", vec![ns("2026-11-30T11:00:00Z")]), ["Namespace old"]);
}

#[test]
fn only_running_non_daemonset_pods_can_block_a_drain() {
    let pdb = json!({"kind": "PodDisruptionBudget", "apiVersion": "policy/v1", "metadata": {"name": "web", "namespace": "app"},
                     "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
                     "status": {"currentHealthy": 1, "desiredHealthy": 1, "disruptionsAllowed": 0, "expectedPods": 1}});
    let cordoned = node("n1", "4", json!({"unschedulable": true}));
    let web = |phase: &str| bound("web-1", "app", "n1", "1", phase, json!({"app": "web"}));
    assert_eq!(check("pdb-blocks-drain", vec![pdb.clone(), cordoned.clone(), web("Running")]), ["PodDisruptionBudget app/web"]);
    assert!(check("pdb-blocks-drain", vec![pdb.clone(), cordoned.clone(), web("Pending")]).is_empty(), "the eviction API ignores the budget for Pending pods");
    let mut ds = web("Running");
    ds["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "web", "uid": "u", "controller": true}]);
    assert!(check("pdb-blocks-drain", vec![pdb, cordoned, ds]).is_empty(), "drain skips DaemonSet pods");
}

#[test]
fn config_errors_are_worded_from_the_waiting_message() {
    let cases = [
        ("configmap \"app-config\" not found", "a ConfigMap it references does not exist"),
        ("couldn't find key DB_HOST in ConfigMap app/app-config", "a key it reads"),
        ("container has runAsNonRoot and image will run as root (pod: \"app-1_app(u1)\", container: app)", "runAsNonRoot"),
    ];
    for (msg, want) in cases {
        let p = get("create-container-config-error").expect("probe");
        let o = run(p, &state(vec![waiting_pod("CreateContainerConfigError", msg)]));
        assert_eq!(o.findings.len(), 1);
        assert!(o.findings[0].summary.contains(want), "{msg}: {}", o.findings[0].summary);
    }
}

#[test]
fn runtime_not_ready_and_a_lasting_status_check_message() {
    assert_eq!(check("container-runtime-down", vec![node_not_ready("container runtime not ready: RuntimeReady=false reason: message:")]), ["Node n1"]);
    let status_check = |since: &str| {
        let mut n = node_not_ready("container runtime status check may not have completed yet");
        n["status"]["conditions"][0]["lastTransitionTime"] = json!(since);
        n
    };
    assert!(check("container-runtime-down", vec![status_check("2026-11-30T11:59:30Z")]).is_empty(), "normal right after the kubelet starts");
    assert_eq!(check("container-runtime-down", vec![status_check("2026-11-30T11:30:00Z")]), ["Node n1"]);
}

#[test]
fn a_missing_subpath_is_not_a_missing_command() {
    let start_error = |msg: &str| {
        let mut p = crashing_pod(128, "StartError");
        p["status"]["containerStatuses"][0]["lastState"]["terminated"]["message"] = json!(msg);
        p
    };
    let exec = "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: \"/app/serve\": stat /app/serve: no such file or directory: unknown";
    assert_eq!(check("crashloop-command-not-found", vec![start_error(exec)]), ["Pod app/app-1"]);
    let mount = "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error mounting \"/var/lib/kubelet/pods/u1/volume-subpaths/cfg/app/0\" to rootfs at \"/etc/app/app.yaml\": no such file or directory: unknown";
    assert!(check("crashloop-command-not-found", vec![start_error(mount)]).is_empty());
}

#[test]
fn an_hpa_missing_requests_says_so() {
    let hpa = json!({"kind": "HorizontalPodAutoscaler", "apiVersion": "autoscaling/v2", "metadata": {"name": "web", "namespace": "app"},
                     "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 5},
                     "status": {"desiredReplicas": 1, "conditions": [{"type": "ScalingActive", "status": "False", "reason": "FailedGetResourceMetric",
                                "message": "the HPA was unable to compute the replica count: failed to get cpu utilization: missing request for cpu in container web of Pod web-1"}]}});
    let o = run(get("hpa-unable-to-get-metrics").expect("probe"), &state(vec![hpa]));
    assert_eq!(o.findings.len(), 1);
    assert!(o.findings[0].summary.contains("no request for cpu,"), "{}", o.findings[0].summary);
}

#[test]
fn low_priority_fact_fixes() {
    // A node whose kubelet never reported.
    let mut n = node("n1", "4", json!({}));
    n["status"]["conditions"] = json!([{"type": "Ready", "status": "Unknown", "reason": "NodeStatusNeverUpdated", "message": "Kubelet never posted node status."}]);
    assert_eq!(check("node-not-ready-kubelet-stopped", vec![n]), ["Node n1"]);
    // The cloud provider's uninitialized taint is the node's state, not the pod's configuration.
    let uninit = json!({"taints": [{"key": "node.cloudprovider.kubernetes.io/uninitialized", "value": "true", "effect": "NoSchedule"}]});
    let msg = "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {node.cloudprovider.kubernetes.io/uninitialized: true}.";
    assert!(check("untolerated-taint", vec![node("w", "1", json!({})), node("new", "4", uninit), pending("p", "2", msg, json!({}))]).is_empty());
    // An OOM kill without a limit does not claim a limit was exceeded.
    let mut p = crashing_pod(137, "OOMKilled");
    p["status"]["containerStatuses"][0]["lastState"]["terminated"]["finishedAt"] = json!("2026-11-30T11:50:00Z");
    let o = run(get("oom-killed-container-limit").expect("probe"), &state(vec![p]));
    assert!(o.findings[0].summary.contains("no memory limit"), "{}", o.findings[0].summary);
    // A series event is dated by its last observation.
    let mut ev = pod_event("Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 503");
    ev["lastTimestamp"] = json!(null);
    ev["eventTime"] = json!("2026-11-30T09:00:00.000000Z");
    ev["series"] = json!({"count": 40, "lastObservedTime": "2026-11-30T11:59:00.000000Z"});
    let s = state(vec![ev]);
    let t = super::common::event_time(&s.events[0]).expect("time");
    assert_eq!(t.to_string(), "2026-11-30T11:59:00Z");
}

#[test]
fn a_classless_claim_can_bind_a_classless_volume_and_devices_get_a_grace_period() {
    let pv = json!({"kind": "PersistentVolume", "apiVersion": "v1", "metadata": {"name": "nfs-1"},
                    "spec": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "5Gi"}, "nfs": {"server": "nfs.example.com", "path": "/x"}},
                    "status": {"phase": "Available"}});
    assert_eq!(check("pvc-pending-no-storageclass", vec![pvc(json!({}), None, "Pending")]), ["PersistentVolumeClaim app/data"]);
    assert!(check("pvc-pending-no-storageclass", vec![pvc(json!({}), None, "Pending"), pv]).is_empty());
    let gpu = |created: &str| {
        let mut p = pending("train", "1", "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.", json!({}));
        p["metadata"]["creationTimestamp"] = json!(created);
        p["spec"]["containers"][0]["resources"]["limits"] = json!({"nvidia.com/gpu": "1"});
        vec![node("n1", "4", json!({})), p]
    };
    assert_eq!(check("extended-resource-device-plugin-missing", gpu("2026-11-30T11:00:00Z")), ["Pod app/train"]);
    assert!(check("extended-resource-device-plugin-missing", gpu("2026-11-30T11:59:30Z")).is_empty());
}
