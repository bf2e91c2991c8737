//! The real `kubewhy` binary on the cluster commands: `scan --snapshot` over the scenario
//! fixtures (tests/fixtures/cluster), the JSON shape, `--redact`, and a live scan against the
//! test API server through a kubeconfig (only GETs, no Secret path, no token in the output).

use assert_cmd::Command;
use kubewhy_e2e::apiserver::{Options, TestApiServer};
use kubewhy_e2e::scenarios;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn kubewhy() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_kubewhy"));
    c.current_dir(root());
    c
}

/// `kubewhy scan -A --snapshot tests/fixtures/cluster/<scenario> ARGS`: (exit code, stdout).
fn scan(scenario: &str, args: &[&str]) -> (i32, String) {
    let dir = format!("tests/fixtures/cluster/{scenario}");
    let out = kubewhy().args(["scan", "-A", "--snapshot", &dir]).args(args).output().expect("runs");
    (out.status.code().unwrap_or(-1), String::from_utf8(out.stdout).expect("utf8"))
}

fn json_scan(scenario: &str) -> (i32, Value) {
    let (code, out) = scan(scenario, &["--output", "json"]);
    (code, serde_json::from_str(&out).unwrap_or_else(|e| panic!("{scenario}: {e}: {out}")))
}

/// (failure mode, `Kind ns/name`) of every finding.
fn found(v: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for f in v["findings"].as_array().expect("findings") {
        for o in f["objects"].as_array().expect("objects") {
            let ob = &o["object"];
            let name = match ob["namespace"].as_str() {
                Some(ns) => format!("{} {ns}/{}", ob["kind"].as_str().unwrap_or(""), ob["name"].as_str().unwrap_or("")),
                None => format!("{} {}", ob["kind"].as_str().unwrap_or(""), ob["name"].as_str().unwrap_or("")),
            };
            out.push((f["failure_mode"].as_str().unwrap_or("").to_string(), name));
        }
    }
    out
}

fn check(scenario: &str, failure_mode: &str, object: &str) {
    let (code, v) = json_scan(scenario);
    assert_eq!(code, 1, "{scenario}: findings exit 1");
    let f = found(&v);
    assert!(f.contains(&(format!("failure-mode/{failure_mode}"), object.to_string())), "{scenario}: {failure_mode} on {object} not in {f:?}");
}

#[test]
fn lab_scenarios_and_the_wffc_deadlock_are_found() {
    check("pending-cpu", "insufficient-resources", "Pod shop/cpu-hog");
    check("liveness-404", "liveness-probe-wrong-path", "Pod shop/liveness-demo");
    check("service-selector-mismatch", "service-selector-mismatch", "Service shop/frontend");
    check("wffc-deadlock", "wffc-pvc-pod-unschedulable-deadlock", "PersistentVolumeClaim shop/data-search-0");
}

#[test]
fn healthy_has_no_finding_and_every_broken_scenario_has_one() {
    let (code, v) = json_scan("healthy");
    assert_eq!(code, 0);
    assert!(found(&v).is_empty(), "healthy: {:?}", found(&v));
    assert_eq!(v["source"]["server_version"], "v1.35.0");
    let dirs = std::fs::read_dir(root().join("tests/fixtures/cluster")).expect("fixtures");
    let names: Vec<String> = dirs
        .flatten()
        .filter(|d| d.path().is_dir())
        .map(|d| d.file_name().to_string_lossy().to_string())
        .filter(|n| n != "healthy")
        .collect();
    assert!(names.len() >= 15, "at least 15 broken scenarios, found {}", names.len());
    // Two at a time: each run is a whole process loading the knowledge.
    for pair in names.chunks(2) {
        std::thread::scope(|s| {
            for name in pair {
                s.spawn(move || {
                    let (code, v) = json_scan(name);
                    assert_eq!(code, 1, "{name}");
                    assert!(!found(&v).is_empty(), "{name}: no finding");
                });
            }
        });
    }
}

/// `kubewhy scan -n NS --snapshot tests/fixtures/cluster/<scenario> -o json`.
fn json_scan_in(scenario: &str, namespace: &str) -> (i32, Value) {
    let dir = format!("tests/fixtures/cluster/{scenario}");
    let out = kubewhy().args(["scan", "-n", namespace, "--snapshot", &dir, "--output", "json"]).output().expect("runs");
    let text = String::from_utf8(out.stdout).expect("utf8");
    (out.status.code().unwrap_or(-1), serde_json::from_str(&text).unwrap_or_else(|e| panic!("{scenario} -n {namespace}: {e}: {text}")))
}

/// Scanning one namespace reports only that namespace's objects (and cluster-scoped ones),
/// and never something a whole-cluster scan does not find: objects of other namespaces read
/// as context (a webhook's Service) must not turn into findings, and a webhook whose Service
/// lives elsewhere must not look endpoint-less. Regression: `scan --snapshot wffc-deadlock`
/// in `default` reported the healthy admission webhook as unreachable.
#[test]
fn namespace_scope_finds_a_subset_of_the_cluster_scan() {
    let (code, v) = json_scan_in("wffc-deadlock", "default");
    assert_eq!((code, found(&v)), (0, vec![]), "wffc-deadlock in default");
    let (code, v) = json_scan_in("wffc-deadlock", "shop");
    assert_eq!(code, 1);
    assert!(found(&v).contains(&("failure-mode/wffc-pvc-pod-unschedulable-deadlock".into(), "PersistentVolumeClaim shop/data-search-0".into())), "{:?}", found(&v));
    let dirs = std::fs::read_dir(root().join("tests/fixtures/cluster")).expect("fixtures");
    let names: Vec<String> = dirs.flatten().filter(|d| d.path().is_dir()).map(|d| d.file_name().to_string_lossy().to_string()).collect();
    for pair in names.chunks(2) {
        std::thread::scope(|s| {
            for name in pair {
                s.spawn(move || {
                    let (_, all) = json_scan(name);
                    let all = found(&all);
                    for ns in ["default", "shop"] {
                        let (_, v) = json_scan_in(name, ns);
                        for f in found(&v) {
                            assert!(all.contains(&f), "{name} -n {ns}: {f:?} is not found by scan -A ({all:?})");
                            let object = &f.1;
                            let namespaced = object.contains('/');
                            assert!(!namespaced || object.split_once(' ').is_some_and(|(_, o)| o.starts_with(&format!("{ns}/"))), "{name} -n {ns}: {object} is outside the namespace");
                        }
                    }
                });
            }
        });
    }
}

#[test]
fn scan_json_shape() {
    let (_, v) = json_scan("pending-cpu");
    insta::assert_json_snapshot!("scan_pending_cpu", v);
}

#[test]
fn text_and_markdown_reports() {
    let (_, text) = scan("pending-cpu", &[]);
    assert!(text.starts_with("kubewhy scan: every namespace of snapshot tests/fixtures/cluster/pending-cpu\nKubernetes v1.35.0\n"), "{text}");
    assert!(text.contains("✗ failure-mode/insufficient-resources"), "{text}");
    assert!(text.contains("mechanism: failure-mode/insufficient-resources → loop/"), "{text}");
    assert!(text.contains("Pod shop/cpu-hog:"), "{text}");
    assert!(text.contains("fixes:"), "{text}");
    // Scope, source, conclusion and summary first, then the detail.
    assert!(text.lines().nth(2).is_some_and(|l| l.starts_with("1 failure mode(s) found in every namespace")), "{text}");
    assert!(text.lines().nth(3).is_some_and(|l| l.contains("probe(s):") && l.contains("1 failure mode(s) found")), "{text}");
    assert!(!text.contains('\u{1b}'), "no ANSI escapes off a terminal");
    let (_, md) = scan("pending-cpu", &["--output", "markdown"]);
    assert!(md.starts_with("# kubewhy scan"), "{md}");
    assert!(md.contains("(`failure-mode/insufficient-resources`)"), "{md}");
}

/// Every name, namespace and IP in a snapshot directory.
fn identifying(dir: &Path) -> Vec<String> {
    let keep = ["default", "kube-system", "kube-public", "kube-node-lease", "kubernetes"];
    let mut out = Vec::new();
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    if let (Some(s), true) = (x.as_str(), matches!(k.as_str(), "podIP" | "hostIP" | "clusterIP" | "address" | "ip")) {
                        out.push(s.to_string());
                    }
                    walk(x, out);
                }
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    for e in std::fs::read_dir(dir).expect("dir").flatten() {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(e.path()).expect("read")).expect("json");
        for item in v["items"].as_array().into_iter().flatten() {
            for key in ["name", "namespace"] {
                if let Some(s) = item["metadata"][key].as_str() {
                    out.push(s.to_string());
                }
            }
        }
        walk(&v, &mut out);
    }
    out.retain(|s| !keep.contains(&s.as_str()) && s.len() >= 3);
    out.sort();
    out.dedup();
    out
}

/// Drops the knowledge's own text (titles, mechanisms, ids), which may use the same words
/// as object names ("coredns"), so what is left is what was read from the cluster.
fn cluster_part(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for k in ["mechanism", "title", "failure_mode", "probe", "probes", "id", "field"] {
                m.remove(k);
            }
            m.values_mut().for_each(cluster_part);
        }
        Value::Array(a) => a.iter_mut().for_each(cluster_part),
        _ => {}
    }
}

fn whole_word(hay: &str, w: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    hay.match_indices(w).any(|(i, _)| {
        let before = hay[..i].chars().next_back().is_none_or(|c| !word(c));
        let after = hay[i + w.len()..].chars().next().is_none_or(|c| !word(c));
        before && after
    })
}

#[test]
fn redact_leaves_no_name_namespace_or_ip() {
    for scenario in ["pending-cpu", "service-selector-mismatch", "wffc-deadlock", "webhook-unreachable"] {
        let names = identifying(&root().join("tests/fixtures/cluster").join(scenario));
        assert!(names.iter().any(|n| n == "shop") && names.iter().any(|n| n.starts_with("10.")), "{names:?}");
        let (code, out) = scan(scenario, &["--redact", "--output", "json"]);
        assert_eq!(code, 1);
        let mut v: Value = serde_json::from_str(&out).expect("json");
        assert!(!v["findings"].as_array().expect("findings").is_empty(), "still readable");
        cluster_part(&mut v);
        let rest = v.to_string();
        for n in &names {
            assert!(!whole_word(&rest, n), "{scenario}: `{n}` left in the redacted JSON: {rest}");
        }
        for fmt in ["text", "markdown"] {
            let (_, out) = scan(scenario, &["--redact", "--output", fmt]);
            for n in names.iter().filter(|n| n.starts_with("10.") || ["shop", "cp-1", "worker-1", "worker-2"].contains(&n.as_str())) {
                assert!(!whole_word(&out, n), "{scenario} {fmt}: `{n}` leaked");
            }
        }
    }
}

#[test]
fn live_scan_through_the_binary() {
    let server = TestApiServer::start(scenarios::lab(), Options::default());
    let dir = std::env::temp_dir().join(format!("kubewhy-cli-cluster-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let kc = server.kubeconfig(&dir, "shop");
    let out = kubewhy().args(["scan", "-A", "--kubeconfig"]).arg(&kc).output().expect("runs");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stdout.contains("failure-mode/insufficient-resources") && stdout.contains("Pod shop/checkout-0"), "{stdout}");
    let out = kubewhy().args(["verify", "pod/web-5c8", "-n", "shop", "--kubeconfig"]).arg(&kc).env("KUBEWHY_LOG", "debug").output().expect("runs");
    let (vout, verr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(vout.contains("1. ✗ [holds] failure-mode/liveness-probe-wrong-path"), "{vout}");
    for text in [&stdout, &stderr, &vout, &verr] {
        assert!(!text.contains(server.token()), "the token never appears, even in debug logs");
    }
    for r in server.requests() {
        assert_eq!(r.method, "GET", "{r:?}");
        assert!(!r.path.contains("secrets"), "{r:?}");
    }
}

#[test]
fn cluster_usage_errors_exit_2() {
    kubewhy().args(["scan", "-n", "a", "-A", "--snapshot", "tests/fixtures/cluster/healthy"]).assert().code(2);
    kubewhy().args(["scan", "--snapshot", "/nonexistent/snap"]).assert().code(2).stderr(predicates::str::contains("/nonexistent/snap"));
    kubewhy().args(["scan", "--snapshot", "tests/fixtures/cluster/healthy", "--context", "x"]).assert().code(2);
    kubewhy().args(["verify", "pod/nope", "-n", "shop", "--snapshot", "tests/fixtures/cluster/healthy"]).assert().code(2).stderr(predicates::str::contains("Pod nope in namespace \"shop\" not found"));
}

#[test]
fn verify_objects_of_the_wffc_deadlock() {
    let snap = "tests/fixtures/cluster/wffc-deadlock";
    let out = kubewhy().args(["verify", "pvc/data-search-0", "-n", "shop", "--snapshot", snap, "-o", "json"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_str(&String::from_utf8_lossy(&out.stdout)).expect("json");
    assert_eq!(v["candidates"][0]["id"], "failure-mode/wffc-pvc-pod-unschedulable-deadlock", "{}", v["candidates"]);
    assert_eq!(v["candidates"][0]["evidence"], "holds");
    let out = kubewhy().args(["verify", "po/search-0", "-n", "shop", "--snapshot", snap, "-o", "json"]).output().expect("runs");
    let v: Value = serde_json::from_str(&String::from_utf8_lossy(&out.stdout)).expect("json");
    let holds: Vec<&str> = v["candidates"].as_array().expect("candidates").iter().filter(|c| c["evidence"] == "holds").filter_map(|c| c["id"].as_str()).collect();
    assert!(holds.contains(&"failure-mode/node-affinity-mismatch") && holds.contains(&"failure-mode/wffc-pvc-pod-unschedulable-deadlock"), "{holds:?}");
    assert!(v["unknown"].as_array().expect("unknown").is_empty(), "the pod's claims, classes and volumes are all read: {}", v["unknown"]);
}
