//! Cluster checks against the test API server (real HTTP on loopback, reached through a
//! kubeconfig with a bearer token): only GETs, no Secret path, no credential in any output,
//! and the probes' verdicts.

use crate::cli::kubewhy;
use kubewhy_e2e::apiserver::{Options, TestApiServer};
use kubewhy_e2e::scenarios;
use serde_json::Value;
use std::path::PathBuf;

fn tempdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("kubewhy-e2e-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// Runs `kubewhy ARGS --kubeconfig K` against `server`; asserts the safety invariants on
/// every request and output; returns (code, stdout, stderr).
fn run(server: &TestApiServer, name: &str, args: &[&str]) -> (i32, String, String) {
    let kc = server.kubeconfig(&tempdir(name), "shop");
    let kc = kc.to_str().expect("utf8 path").to_string();
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--kubeconfig", &kc]);
    let (code, out, err) = kubewhy(&all, "");
    check_safe(server, &out, &err);
    (code, out, err)
}

fn check_safe(server: &TestApiServer, out: &str, err: &str) {
    let reqs = server.requests();
    assert!(!reqs.is_empty(), "the server was reached");
    for r in &reqs {
        assert_eq!(r.method, "GET", "only GET is ever sent: {r:?}");
        assert!(!r.path.to_ascii_lowercase().contains("secrets"), "no Secret path: {r:?}");
        assert!(!r.path.to_ascii_lowercase().contains("configmaps"), "no ConfigMap path: {r:?}");
        assert!(r.authorized, "the bearer token was sent: {r:?}");
    }
    assert!(!out.contains(server.token()) && !err.contains(server.token()), "the token never appears in the output");
}

fn finding<'a>(v: &'a Value, fm: &str) -> Option<&'a Value> {
    v["findings"].as_array().expect("findings").iter().find(|f| f["failure_mode"] == fm)
}

fn objects(f: &Value) -> Vec<String> {
    f["objects"].as_array().expect("objects").iter().map(|o| format!("{}/{}", o["object"]["namespace"].as_str().unwrap_or(""), o["object"]["name"].as_str().unwrap_or(""))).collect()
}

#[test]
fn live_scan_finds_the_lab_failures_with_gets_only() {
    let server = TestApiServer::start(scenarios::lab(), Options::default());
    let (code, out, err) = run(&server, "lab", &["scan", "-A", "--output", "json"]);
    assert_eq!(code, 1, "findings exit 1: {err}");
    let v: Value = serde_json::from_str(&out).expect("json");
    let cpu = finding(&v, "failure-mode/insufficient-resources").expect("Pending on CPU found");
    assert_eq!(objects(cpu), ["shop/checkout-0"]);
    let ev = cpu["objects"][0]["evidence"].as_array().expect("evidence");
    assert!(ev.iter().any(|e| e["object"]["kind"] == "Node" && e["field"] == "status.allocatable.cpu"), "{ev:?}");
    let live = finding(&v, "failure-mode/liveness-probe-wrong-path").expect("liveness 404 found");
    assert_eq!(objects(live), ["shop/web-5c8"]);
    let sel = finding(&v, "failure-mode/service-selector-mismatch").expect("selector mismatch found");
    assert_eq!(objects(sel), ["shop/payments"]);
    assert!(finding(&v, "failure-mode/insufficient-resources").and_then(|f| f["mechanism"]["fixes"].as_array()).is_some_and(|f| !f.is_empty()), "fixes from the knowledge");
    assert_eq!(v["source"]["server_version"], "v1.33.2");
    assert_eq!(v["source"]["k8s_version"], "1.33");
    assert!(v["source"]["all_namespaces"].as_bool().expect("bool"));
    assert!(v["unavailable"].as_array().expect("array").is_empty(), "every kind was served: {}", v["unavailable"]);
    // Lists are paginated and cluster-wide with -A.
    let reqs = server.requests();
    assert!(reqs.iter().any(|r| r.path.starts_with("/api/v1/pods?") && r.path.contains("limit=500")), "{reqs:?}");
    assert!(reqs.iter().any(|r| r.path == "/version"));
}

#[test]
fn healthy_cluster_has_no_findings_and_exits_0() {
    let server = TestApiServer::start(scenarios::healthy(), Options::default());
    let (code, out, err) = run(&server, "healthy", &["scan", "-A"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("no failure mode found"), "{out}");
    assert!(out.contains("0 failure mode(s) found"), "{out}");
}

#[test]
fn namespace_defaults_to_the_kubeconfig_context() {
    let server = TestApiServer::start(scenarios::lab(), Options::default());
    let (_, out, _) = run(&server, "ctx-ns", &["scan", "--output", "json"]);
    let v: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["source"]["namespace"], "shop");
    let reqs = server.requests();
    assert!(reqs.iter().any(|r| r.path.starts_with("/api/v1/namespaces/shop/pods?")), "{reqs:?}");
    assert!(reqs.iter().any(|r| r.path.starts_with("/api/v1/nodes?")), "cluster-scoped kinds are always read");
    assert!(!reqs.iter().any(|r| r.path.starts_with("/api/v1/pods?")), "no cluster-wide pod list without -A");
}

#[test]
fn forbidden_nodes_give_unknowns_and_a_notice_naming_the_permission() {
    let server = TestApiServer::start(scenarios::lab(), Options { forbidden: vec!["nodes".into()], ..Options::default() });
    let (code, out, err) = run(&server, "forbidden", &["scan", "-A", "--output", "json"]);
    assert!(code == 0 || code == 1, "a scan, not a failure: {code} {err}");
    let v: Value = serde_json::from_str(&out).expect("json");
    let notices: Vec<&str> = v["notices"].as_array().expect("notices").iter().filter_map(Value::as_str).collect();
    assert!(notices.iter().any(|n| n.contains("cannot list nodes at the cluster scope: grant get/list on nodes")), "{notices:?}");
    let node = v["unavailable"].as_array().expect("unavailable").iter().find(|u| u["kind"] == "Node").expect("nodes unavailable");
    assert_eq!(node["status"], 403);
    let unknown = v["unknown"].as_array().expect("unknown");
    assert!(!unknown.is_empty(), "node-dependent probes are unknown");
    for u in unknown.iter().filter(|u| u["missing"].as_array().is_some_and(|m| m.iter().any(|m| m["kind"] == "Node"))) {
        assert!(u["missing"][0]["reason"].as_str().expect("reason").contains("grant get/list on nodes"), "{u}");
    }
    assert!(unknown.iter().any(|u| u["missing"].as_array().is_some_and(|m| m.iter().any(|m| m["kind"] == "Node"))));
    // The probes that need no nodes still decide.
    assert!(finding(&v, "failure-mode/service-selector-mismatch").is_some());
    let (_, text, _) = run(&server, "forbidden-text", &["scan", "-A"]);
    assert!(text.contains("notice: cannot list nodes at the cluster scope: grant get/list on nodes"), "{text}");
}

#[test]
fn verify_pod_names_the_failure_mode_with_evidence() {
    let server = TestApiServer::start(scenarios::lab(), Options::default());
    let (code, out, err) = run(&server, "verify-pod", &["verify", "pod/checkout-0", "-n", "shop", "--output", "json"]);
    assert_eq!(code, 1, "a holding candidate exits 1: {err}");
    let v: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["target"]["name"], "checkout-0");
    let top = &v["candidates"][0];
    assert_eq!(top["id"], "failure-mode/insufficient-resources", "{}", v["candidates"]);
    assert_eq!(top["evidence"], "holds");
    assert!(top["objects"][0]["evidence"].as_array().is_some_and(|e| !e.is_empty()));
    assert!(v["input"].as_str().expect("input").contains("Insufficient cpu"), "the diagnosis reads the pod's status and events");
    // Targeted reads: the pod by name, its events by field selector, not a Secret.
    let reqs = server.requests();
    assert!(reqs.iter().any(|r| r.path == "/api/v1/namespaces/shop/pods/checkout-0"), "{reqs:?}");
    assert!(reqs.iter().any(|r| r.path.contains("/namespaces/shop/events?") && r.path.contains("fieldSelector=involvedObject.kind%3DPod%2CinvolvedObject.name%3Dcheckout-0")), "{reqs:?}");
    // Another object's failure is not reported for this pod.
    assert!(!v["candidates"].as_array().expect("array").iter().any(|c| c["evidence"] == "holds" && c["id"] == "failure-mode/service-selector-mismatch"));
    let (code, out, _) = run(&server, "verify-missing", &["verify", "po/nope", "-n", "shop"]);
    assert_eq!(code, 2, "{out}");
}

#[test]
fn verify_symptom_reranks_by_evidence() {
    let server = TestApiServer::start(scenarios::lab(), Options::default());
    let (code, out, _) = run(&server, "verify-symptom", &["verify", "-A", "--output", "json", "Liveness probe failed: HTTP probe failed with statuscode: 404"]);
    assert_eq!(code, 1);
    let v: Value = serde_json::from_str(&out).expect("json");
    let c = v["candidates"].as_array().expect("candidates");
    assert_eq!(c[0]["id"], "failure-mode/liveness-probe-wrong-path", "{c:?}");
    assert_eq!(c[0]["evidence"], "holds");
    // The rule: holds, then unknown, then does not hold.
    let order: Vec<u8> = c.iter().map(|x| match x["evidence"].as_str() { Some("holds") => 0, Some("unknown") => 1, _ => 2 }).collect();
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(order, sorted);
    // Only the kinds those probes need were listed.
    assert!(!server.requests().iter().any(|r| r.path.contains("certificatesigningrequests")));
}

#[test]
fn redact_leaves_no_name_namespace_or_ip() {
    let server = TestApiServer::start(scenarios::lab(), Options::default());
    for fmt in ["text", "json", "markdown"] {
        let (_, out, _) = run(&server, &format!("redact-{fmt}"), &["scan", "-A", "--redact", "--output", fmt]);
        for secret in ["checkout-0", "web-5c8", "payments", "payment-6b7", "api-7d9f", "worker-1", "shop", "10.0.0.11", "10.244.1.7", "10.96.12.34", "127.0.0.1"] {
            assert!(!out.contains(secret), "{fmt}: `{secret}` leaked:\n{out}");
        }
        assert!(out.contains("failure-mode/insufficient-resources"), "the report stays readable");
    }
    let (_, out, _) = run(&server, "redact-verify", &["verify", "pod/checkout-0", "-n", "shop", "--redact"]);
    assert!(!out.contains("checkout-0") && !out.contains("shop") && !out.contains("worker-1"), "{out}");
}

#[test]
fn large_lists_are_paginated() {
    let server = TestApiServer::start(scenarios::large(1200), Options::default());
    let (code, out, err) = run(&server, "large", &["scan", "-A", "--output", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["source"]["objects"]["Pod"], 1200);
    let pages = server.requests().iter().filter(|r| r.path.starts_with("/api/v1/pods?")).count();
    assert_eq!(pages, 3, "1200 pods at limit=500");
}

#[test]
fn unreachable_cluster_exits_4_without_credentials() {
    let dir = tempdir("unreachable");
    let kc = dir.join("kubeconfig");
    std::fs::write(&kc, "apiVersion: v1\nkind: Config\nclusters:\n- name: x\n  cluster:\n    server: http://127.0.0.1:9\ncontexts:\n- name: x\n  context: {cluster: x, user: x}\ncurrent-context: x\nusers:\n- name: x\n  user: {token: sekrit-token-value}\n").expect("write");
    let (code, out, err) = kubewhy(&["scan", "--kubeconfig", kc.to_str().expect("utf8"), "--request-timeout", "2"], "");
    assert_eq!(code, 4, "{out}{err}");
    assert!(!err.contains("sekrit-token-value") && !out.contains("sekrit-token-value"));
    let (code, _, err) = kubewhy(&["scan", "--kubeconfig", "/nonexistent/kubeconfig"], "");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("/nonexistent/kubeconfig"));
}

/// `kubectl cluster-info dump` layouts: to stdout (one file, log sections inline), with
/// `--output-directory` (one file per list, logs.txt per pod), with and without
/// `--all-namespaces`; plus `kubectl get -A -o yaml` multi-document files.
#[test]
fn snapshots_in_kubectl_layouts() {
    let objects = scenarios::lab();
    let dir = tempdir("layouts");
    // --all-namespaces to stdout, saved in a file without a .json extension.
    let files = objects.cluster_info_dump(&["default", "kube-node-lease", "shop"]);
    let stdout: String = files.iter().map(|(_, t)| t.as_str()).collect();
    let dump = dir.join("cluster-info.dump");
    std::fs::write(&dump, &stdout).expect("write");
    // --output-directory (current namespace + kube-system: here `shop` only has objects).
    let out_dir = dir.join("dump-dir");
    for (rel, text) in objects.cluster_info_dump(&["kube-system", "shop"]) {
        let p = out_dir.join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }
    for snap in [dump.as_path(), out_dir.as_path()] {
        let (code, out, err) = kubewhy(&["scan", "-A", "--snapshot", snap.to_str().expect("utf8"), "--output", "json"], "");
        assert_eq!(code, 1, "{}: {err}", snap.display());
        let v: Value = serde_json::from_str(&out).expect("json");
        for fm in ["failure-mode/insufficient-resources", "failure-mode/liveness-probe-wrong-path", "failure-mode/service-selector-mismatch"] {
            assert!(finding(&v, fm).is_some(), "{}: {fm} not found in {}", snap.display(), v["findings"]);
        }
        assert_eq!(v["source"]["api_calls"], 0);
        let notices = v["notices"].to_string();
        assert!(notices.contains("the snapshot has no"), "kinds a dump lacks are named: {notices}");
    }
    // A dump directory with the stdout dump inside it too: the same objects are not doubled.
    std::fs::write(out_dir.join("cluster-info.dump"), &stdout).expect("write");
    let (_, out, _) = kubewhy(&["scan", "-A", "--snapshot", out_dir.to_str().expect("utf8"), "--output", "json"], "");
    let v: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(objects_of(&v, "failure-mode/insufficient-resources"), 1);
    // Multi-document YAML (`kubectl get pods,nodes -A -o yaml` per kind, joined with ---).
    let yaml_dir = dir.join("yaml");
    std::fs::create_dir_all(&yaml_dir).expect("mkdir");
    let mut yaml = String::new();
    for (rel, text) in objects.cluster_info_dump(&["shop"]).iter().filter(|(r, _)| r.ends_with(".json")) {
        let v: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{rel}: {e}"));
        yaml.push_str("---\n");
        yaml.push_str(&serde_yaml_ng::to_string(&v).expect("yaml"));
    }
    std::fs::write(yaml_dir.join("all.yaml"), yaml).expect("write");
    std::fs::write(yaml_dir.join("version.json"), r#"{"clientVersion": {"gitVersion": "v1.34.0"}, "serverVersion": {"major": "1", "minor": "31", "gitVersion": "v1.31.5"}}"#).expect("write");
    let (code, out, _) = kubewhy(&["scan", "-A", "--snapshot", yaml_dir.to_str().expect("utf8"), "--output", "json"], "");
    assert_eq!(code, 1);
    let v: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["source"]["server_version"], "v1.31.5", "the server version of `kubectl version -o json`");
    assert!(finding(&v, "failure-mode/insufficient-resources").is_some());
    // Bad input names the file and line.
    let bad = dir.join("bad");
    std::fs::create_dir_all(&bad).expect("mkdir");
    std::fs::write(bad.join("pods.json"), "{\"kind\": \"PodList\",\n \"items\": [\n  {\"metadata\": {\"name\": \"x\"}, \"spec\": {\"containers\": 3}}]}").expect("write");
    let (code, _, err) = kubewhy(&["scan", "--snapshot", bad.to_str().expect("utf8")], "");
    assert_eq!(code, 2);
    assert!(err.contains("pods.json") && err.contains("Pod x"), "{err}");
    std::fs::write(bad.join("pods.json"), "{\"kind\": \"PodList\",\n \"items\": [\n").expect("write");
    let (code, _, err) = kubewhy(&["scan", "--snapshot", bad.to_str().expect("utf8")], "");
    assert_eq!(code, 2);
    assert!(err.contains("pods.json:"), "{err}");
}

fn objects_of(v: &Value, fm: &str) -> usize {
    finding(v, fm).map(|f| f["objects"].as_array().map_or(0, Vec::len)).unwrap_or(0)
}
