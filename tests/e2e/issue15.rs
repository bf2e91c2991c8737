//! Regression tests of issue 15, "Defects found trying kubewhy as a new user would": one test
//! (or more) per defect, each failing before its fix.

use crate::cli::kubewhy;
use crate::support::engine;
use kubewhy_engine::claims::Verdict;
use kubewhy_engine::model::Version;
use std::path::{Path, PathBuf};

fn fixture(scenario: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/cluster").join(scenario).display().to_string()
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("kubewhy-issue15-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

// 1. False all-clear from `scan`.

#[test]
fn issue15_scan_of_a_snapshot_reads_every_namespace_and_states_its_scope() {
    let dir = fixture("wffc-deadlock");
    let (code, out, _) = kubewhy(&["scan", "--snapshot", &dir], "");
    assert_eq!(code, 1, "the README's command finds the deadlock:\n{out}");
    let first = out.lines().next().unwrap_or("");
    assert!(first.starts_with("kubewhy scan: every namespace of snapshot"), "scope first: {first}");
    assert!(out.contains("failure-mode/wffc-pvc-pod-unschedulable-deadlock"), "{out}");

    // One namespace asked for: "nothing found" says what was and was not covered.
    let (code, out, _) = kubewhy(&["scan", "--snapshot", &dir, "-n", "default"], "");
    assert_eq!(code, 0, "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].contains("namespace default of snapshot") && lines[0].contains("other namespaces were not read"), "{out}");
    assert!(out.contains("no failure mode found in namespace default"), "{out}");
    assert!(out.contains("not covered: other namespaces"), "{out}");

    // JSON states the scope first.
    let (_, out, _) = kubewhy(&["scan", "--snapshot", &dir, "--output", "json"], "");
    let first_key = out.lines().nth(1).unwrap_or("").trim();
    assert!(first_key.starts_with("\"scope\": \"every namespace of snapshot"), "{first_key}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert!(v["conclusion"].as_str().is_some_and(|c| c.contains("failure mode(s) found in every namespace")), "{}", v["conclusion"]);

    // verify states its scope first too.
    let (_, out, _) = kubewhy(&["verify", "--snapshot", &dir, "0/3 nodes are available: 3 node(s) did not find available persistent volumes to bind."], "");
    assert!(out.lines().next().unwrap_or("").contains(": every namespace of snapshot"), "{out}");
    assert!(out.lines().nth(2).is_some_and(|l| l.contains("candidate")), "{out}");
}

// 2. `check-claims` supports a wrong claim.

#[test]
fn issue15_a_kep_number_or_gate_or_metric_on_the_wrong_subject_is_contradicted() {
    let one = |text: &str, kind: &str| {
        let claims = engine().check_claims(text);
        claims.into_iter().find(|c| c.kind == kind).unwrap_or_else(|| panic!("no {kind} claim in {text:?}"))
    };
    let c = one("KEP-2340 introduced Pod Security Admission.", "kep");
    assert_eq!(c.verdict, Verdict::Contradicted, "{c:?}");
    assert!(c.fact.contains("Consistent Reads from Cache") && c.fact.contains("KEP-2579"), "{}", c.fact);
    assert_eq!(one("KEP-2579 introduced Pod Security Admission.", "kep").verdict, Verdict::Supported);
    // A gate attached to another KEP.
    assert_eq!(one("The SidecarContainers feature gate comes from KEP-2340.", "kep").verdict, Verdict::Contradicted);
    assert_eq!(one("The SidecarContainers feature gate comes from KEP-753.", "kep").verdict, Verdict::Supported);
    // A metric attached to the wrong component.
    let m = one("etcd_mvcc_db_total_size_in_bytes is exposed by the kubelet.", "metric");
    assert_eq!(m.verdict, Verdict::Contradicted, "{m:?}");
    assert_eq!(one("etcd_mvcc_db_total_size_in_bytes is exposed by etcd.", "metric").verdict, Verdict::Supported);
}

// 3. Feature-gate defaults shown as unknown when they are known.

#[test]
fn issue15_gate_defaults_come_from_the_website_pages_with_their_source() {
    let v130 = Version::parse("1.30").expect("version");
    let g = engine().gate("SidecarContainers", Some(v130)).expect("gate");
    assert_eq!(g.at_version.as_ref().and_then(|s| s.default), Some(true), "{g:?}");
    assert!(g.statement.contains("on by default") && g.statement.contains("kubernetes/website:"), "{}", g.statement);
    let (code, out, _) = kubewhy(&["gate", "SidecarContainers", "--k8s-version", "1.30"], "");
    assert_eq!(code, 0);
    assert!(out.contains("on by default") && !out.contains("defaults unknown"), "{out}");
    // A gate of the feature list keeps the feature list as its source.
    let g = engine().gate("APIResponseCompression", Some(v130)).expect("gate");
    assert!(g.statement.contains("the feature list"), "{}", g.statement);
    // Removed gates are known, with their last version.
    let g = engine().gate("APIListChunking", None).expect("a removed gate from the website");
    assert!(g.gate.removed && g.statement.contains("removed after 1.32"), "{}", g.statement);
    // No GA gate at 1.30 whose page states a default is shown without one.
    let up = engine().knowledge().upstream();
    let unknown: Vec<&str> = up
        .gates
        .values()
        .filter(|g| g.source.starts_with("kubernetes/website:"))
        .filter(|g| g.at(v130).is_some_and(|s| s.stage == "GA" && s.default.is_none()))
        .map(|g| g.name.as_str())
        .collect();
    assert!(unknown.len() <= 2, "GA gates with unknown defaults at 1.30: {unknown:?}");
}

// 4. Output sizes.

#[test]
fn issue15_explain_kubelet_leads_with_loops_and_lists_metrics_once() {
    let (code, out, _) = kubewhy(&["explain", "kubelet"], "");
    assert_eq!(code, 0);
    let lines = out.lines().count();
    // 194 lines when this test was written; the graph has grown since (kubelet has about three
    // times the failure modes), and each is one line under its loop.
    assert!(lines < 300, "explain kubelet prints {lines} lines (434 before)");
    assert_eq!(out.matches("metrics exposed").count(), 1, "{out}");
    let loops = out.find("Loops (").expect("loops");
    let metrics = out.find("metrics exposed").expect("metrics");
    assert!(loops < metrics, "loops before metrics");
    assert!(!out.contains("exposed by this:\n"), "the metrics are not listed a second time:\n{out}");
}

#[test]
fn issue15_scan_of_a_partial_snapshot_puts_its_summary_first_and_groups_unknowns() {
    let d = temp_dir("partial");
    std::fs::write(d.join("pods.yaml"), PULL_X509_PODS).expect("write");
    let (_, out, _) = kubewhy(&["scan", "--snapshot", &d.display().to_string()], "");
    let summary = out.find("probe(s):").expect("summary line");
    let unknown = out.find("unknown (").expect("unknown section");
    assert!(summary < unknown, "summary before detail:\n{out}");
    let question_lines = out.lines().filter(|l| l.trim_start().starts_with("? ")).count();
    assert!(question_lines <= 8, "{question_lines} unknown lines:\n{out}");
}

// 5. Probes that only read Events.

const PULL_X509_PODS: &str = r#"apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata:
    name: api-0
    namespace: shop
    creationTimestamp: "2026-11-30T10:00:00Z"
  spec:
    containers:
    - name: api
      image: registry.internal/shop/api:1.4
  status:
    phase: Pending
    containerStatuses:
    - name: api
      image: registry.internal/shop/api:1.4
      imageID: ""
      ready: false
      restartCount: 0
      state:
        waiting:
          reason: ErrImagePull
          message: 'failed to pull and unpack image "registry.internal/shop/api:1.4": failed to resolve reference "registry.internal/shop/api:1.4": failed to do request: Head "https://registry.internal/v2/shop/api/manifests/1.4": tls: failed to verify certificate: x509: certificate signed by unknown authority'
"#;

#[test]
fn issue15_probes_read_the_pods_own_status_message_without_events() {
    let d = temp_dir("x509");
    std::fs::write(d.join("pods.yaml"), PULL_X509_PODS).expect("write");
    let snap = d.display().to_string();
    let (code, out, _) = kubewhy(&["scan", "--snapshot", &snap, "--output", "json"], "");
    assert_eq!(code, 1, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let fms: Vec<&str> = v["findings"].as_array().expect("findings").iter().filter_map(|f| f["failure_mode"].as_str()).collect();
    assert_eq!(fms, vec!["failure-mode/image-pull-network"], "{out}");
    let unknown: Vec<&str> = v["unknown"].as_array().expect("unknown").iter().filter_map(|u| u["probe"].as_str()).collect();
    assert!(!unknown.iter().any(|p| p.starts_with("image-pull-")), "decided from the status message, not unknown: {unknown:?}");
    let (code, out, _) = kubewhy(&["verify", "pod/api-0", "-n", "shop", "--snapshot", &snap, "--output", "json"], "");
    assert_eq!(code, 1, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["candidates"][0]["id"], "failure-mode/image-pull-network", "{out}");
    assert_eq!(v["candidates"][0]["evidence"], "holds");
}

// 6. Own runbooks.

#[test]
fn issue15_lint_checks_runbooks_on_the_builtin_graph_and_accepts_in_house_sources() {
    let d = temp_dir("runbooks");
    std::fs::create_dir_all(d.join("failure-modes")).expect("dir");
    std::fs::write(
        d.join("failure-modes/payments-db-pool-exhausted.md"),
        r#"+++
id = "failure-mode/payments-db-pool-exhausted"
title = "payments-api: database connection pool exhausted"
area = "operations"
components = ["component/kubelet"]
loops = ["loop/probe-manager"]
leads_to = ["failure-mode/readiness-probe-failing"]
references = ["https://wiki.example.com/runbooks/payments-db"]

[[symptom]]
signal = "log"
text = "pool exhausted: {n} connections in use"
source = "local:payments-api/internal/db/pool.go"

[[check]]
title = "Count open connections"
look_for = "connections at the pool maximum"

[[fix]]
title = "Raise the pool size"
action = "Raise DB_POOL_MAX"
risk = "low"
+++
The payments API keeps a fixed pool of database connections.
"#,
    )
    .expect("write");
    let (code, out, _) = kubewhy(&["lint", &d.display().to_string()], "");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("0 error(s)") && !out.contains("does not exist"), "{out}");
    // A source that is none of the accepted forms says which forms are.
    let text = std::fs::read_to_string(d.join("failure-modes/payments-db-pool-exhausted.md")).expect("read");
    std::fs::write(d.join("failure-modes/payments-db-pool-exhausted.md"), text.replace("local:payments-api/internal/db/pool.go", "payments team")).expect("write");
    let (code, out, _) = kubewhy(&["lint", &d.display().to_string()], "");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("`local:NAME`"), "{out}");
    // The built-in knowledge directory itself is still checked alone.
    let (code, out, _) = kubewhy(&["lint", &Path::new(env!("CARGO_MANIFEST_DIR")).join("../knowledge").display().to_string()], "");
    assert_eq!(code, 0, "{out}");
}

// 7. Lookups by words.

#[test]
fn issue15_kep_and_gate_lookups_by_words() {
    let (code, out, _) = kubewhy(&["kep", "pod security admission"], "");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("2579"), "{out}");
    let keps = engine().kep("pod security admission").expect("found");
    assert_eq!(keps[0].kep.number, 2579);
    let g = engine().gate("sidecar containers", None).expect("found by words");
    assert_eq!(g.gate.name, "SidecarContainers");
    let g = engine().gate("pod security admission", None).expect("found through its KEP");
    assert_eq!(g.gate.name, "PodSecurity");
}

// 8. Small things a user sees on the first answer.

#[test]
fn issue15_first_answer_shows_the_input_spelling_and_one_known_message() {
    let (code, out, _) = kubewhy(&["why", "0/3 nodes are available: 3 Insufficient cpu."], "");
    assert_eq!(code, 0);
    assert!(!out.contains("insufficient c`"), "{out}");
    assert!(out.contains("Insufficient cpu"), "{out}");
    assert!(!out.contains("known message(s)"), "{out}");
    let signals = out.lines().find(|l| l.starts_with("Signals:")).expect("signals line");
    assert!(signals.contains("known message \"0/3 nodes are available: 3 Insufficient cpu\""), "{signals}");
}

#[test]
fn issue15_an_hpa_pinned_at_max_leads_to_no_more_pods() {
    let kb = engine().knowledge();
    let fm = |id: &str| kb.get(id).and_then(|e| e.failure_mode()).expect("failure mode").clone();
    let hpa = fm("failure-mode/hpa-scaling-limited-max-replicas");
    assert!(hpa.leads_to.is_empty(), "{:?}", hpa.leads_to);
    let ca = fm("failure-mode/cluster-autoscaler-max-node-group-size");
    assert!(!ca.caused_by.contains(&"failure-mode/hpa-scaling-limited-max-replicas".to_string()));
    // An out-of-space volume does not make an expansion pending (expanding it might).
    let full = fm("failure-mode/pvc-out-of-space");
    assert!(!full.leads_to.contains(&"failure-mode/volume-expansion-pending".to_string()));
}

// Acceptance: every command the README's "Using it" block shows runs, and shows what the README
// says it shows. `serve` and `mcp` are servers (tests/mcp and mcp-server/tests run them); the
// live-cluster commands run against the test API server through a kubeconfig.

#[test]
fn issue15_readme_commands_run_and_show_what_the_readme_says() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README");
    let block: Vec<&str> = readme.split("## Using it").nth(1).and_then(|s| s.split("```").nth(1)).expect("the Using it block").lines().collect();
    let d = temp_dir("readme");
    std::fs::write(d.join("answer.txt"), "SidecarContainers went beta in 1.29 (KEP-753).\n").expect("write");
    let api = kubewhy_e2e::apiserver::TestApiServer::start(kubewhy_e2e::scenarios::lab(), kubewhy_e2e::apiserver::Options::default());
    let kc = api.kubeconfig(&d, "shop").display().to_string();
    let abs = |p: &str| root.join(p).display().to_string();
    let describe = "Name: web-0\nNamespace: shop\nContainers:\n  app:\n    State:          Waiting\n      Reason:       CrashLoopBackOff\n    Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137\n    Ready:          False\nEvents:\n  Type     Reason   Age   From     Message\n  ----     ------   ----  ----     -------\n  Warning  BackOff  3m    kubelet  Back-off restarting failed container app in pod web-0_shop\n";
    let mut ran = 0;
    for line in block.iter().filter(|l| l.contains("kubewhy ")) {
        let cmd = line.split("  #").next().unwrap_or("").trim();
        let (stdin, cmd) = match cmd.split_once("| kubewhy") {
            Some((_, rest)) => (describe, format!("kubewhy{rest}")),
            None => ("", cmd.to_string()),
        };
        let mut words = shell_words(&cmd);
        // `> file`: the test reads standard output itself.
        if let Some(i) = words.iter().position(|w| w == ">") {
            words.truncate(i);
        }
        assert_eq!(words.first().map(String::as_str), Some("kubewhy"), "{cmd}");
        let mut args: Vec<String> = words[1..].to_vec();
        // Paths relative to the checkout, files the README assumes, and the cluster.
        let sub = args[0].clone();
        for a in args.iter_mut() {
            if a.starts_with("tests/") || a == "knowledge" {
                *a = abs(a);
            } else if a == "answer.txt" {
                *a = d.join("answer.txt").display().to_string();
            } else if a == "./site" {
                *a = d.join("site").display().to_string();
            } else if a == "./runbooks" {
                *a = abs("tests/fixtures/runbooks");
            }
        }
        let expect: &[&str] = match (sub.as_str(), args.get(1).map(String::as_str)) {
            ("serve" | "mcp", _) => continue,
            ("why", Some("etcdserver: mvcc: database space exceeded")) => &["failure-mode/etcd-nospace-alarm"],
            ("why", Some("-")) => &["OOMKilled", "137"],
            ("why", Some("--k8s-version")) => &["Kubernetes 1.22", "failure-mode/podsecuritypolicy-rejection"],
            ("why", _) => &["\"candidates\"", "failure-mode/liveness-probe-wrong-path"],
            ("explain", Some("kubelet")) => &["Loops (", "failure mode:", "metrics exposed"],
            ("explain", _) => &["watch cache"],
            ("search", _) => &["failure-mode/"],
            ("sparql", _) => &["fm"],
            ("gate", _) => &["SidecarContainers at Kubernetes 1.30", "Beta", "on by default", "753"],
            ("kep", _) => &["753", "Sidecar Containers"],
            ("metric", _) => &["etcd_mvcc_db_total_size_in_bytes", "gauge", "component/etcd"],
            ("check-claims", _) => &["supported"],
            ("eval", Some("grade")) => {
                let case = std::fs::read_to_string(root.join("evals/cases/etcd.jsonl")).expect("cases");
                let id = serde_json::from_str::<serde_json::Value>(case.lines().next().unwrap_or("{}")).expect("case")["id"].as_str().unwrap_or("").to_string();
                std::fs::write(d.join("answers.jsonl"), serde_json::json!({"id": id, "answer": "etcd's backend quota is exceeded: compact, defragment and disarm the NOSPACE alarm."}).to_string() + "\n").expect("write");
                args = vec!["eval".into(), "grade".into(), d.join("answers.jsonl").display().to_string(), "--cases".into(), abs("evals/cases"), "--realworld".into(), abs("evals/realworld/cases.jsonl")];
                &[]
            }
            ("eval", _) => {
                args.extend(["--cases".into(), abs("evals/cases"), "--realworld".into(), abs("evals/realworld/cases.jsonl"), "--reports".into(), d.join("reports").display().to_string()]);
                &["top-1"]
            }
            ("lint", _) => &["0 error(s)"],
            ("stats", _) => &["\"entities\"", "\"failure_modes_by_area\""],
            ("export", _) => &["@prefix"],
            ("scan", Some("-A")) => {
                args.extend(["--kubeconfig".into(), kc.clone()]);
                &["every namespace of live cluster", "failure-mode/insufficient-resources"]
            }
            ("scan", _) => &["every namespace of snapshot", "failure-mode/wffc-pvc-pod-unschedulable-deadlock"],
            ("verify", _) => {
                args = vec!["verify".into(), "pod/checkout-0".into(), "-n".into(), "shop".into(), "--kubeconfig".into(), kc.clone()];
                &["namespace shop of live cluster", "failure-mode/insufficient-resources", "holds"]
            }
            ("site", _) => &[],
            (other, _) => panic!("a README command this test does not know: {other} ({cmd})"),
        };
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out, err) = kubewhy(&argv, stdin);
        assert!(code == 0 || (code == 1 && matches!(sub.as_str(), "scan" | "verify")), "`{cmd}` exited {code}: {err}\n{out}");
        for e in expect {
            assert!(out.contains(e), "`{cmd}` does not show {e:?}:\n{out}");
        }
        if sub == "site" {
            assert!(d.join("site/index.html").is_file(), "`{cmd}` writes the site");
        }
        ran += 1;
    }
    assert!(ran >= 20, "{ran} README commands ran");
}

/// Splits a command line as a POSIX shell would for the README's simple quoting.
fn shell_words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for c in s.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if !cur.is_empty() || any {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            (None, c) => cur.push(c),
        }
    }
    if !cur.is_empty() || any {
        out.push(cur);
    }
    out
}
