//! The CLI's subcommands, run in-process through the same `run` the binary calls.

use clap::Parser;
use kubewhy_cli::{run, Cli, Io};

/// Runs `kubewhy ARGS` with `stdin`; returns (exit code, stdout, stderr).
pub(crate) fn kubewhy(args: &[&str], stdin: &str) -> (i32, String, String) {
    let cli = Cli::try_parse_from(std::iter::once("kubewhy").chain(args.iter().copied())).expect("arguments parse");
    let mut input = stdin.as_bytes();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run(cli, &mut Io { stdin: &mut input, stdout: &mut out, stderr: &mut err, stdout_is_terminal: false, stderr_is_terminal: false });
    (code, String::from_utf8(out).expect("utf8"), String::from_utf8(err).expect("utf8"))
}

#[test]
fn why_json_has_the_documented_shape() {
    let (code, out, _) = kubewhy(&["why", "--output", "json", "--top", "3", "0/3 nodes are available: 3 Insufficient cpu."], "");
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["candidates"][0]["id"], "failure-mode/insufficient-resources");
    assert!(v["candidates"].as_array().expect("array").len() <= 3);
    assert_eq!(v["k8s_version"], serde_json::Value::Null);
}

#[test]
fn why_reads_stdin_and_prints_plain_text_without_a_terminal() {
    let (code, out, _) = kubewhy(&["why", "-", "--k8s-version", "1.30"], "etcdserver: mvcc: database space exceeded\n");
    assert_eq!(code, 0);
    assert!(out.contains("failure-mode/etcd-nospace-alarm"), "{out}");
    assert!(out.contains("Kubernetes 1.30"));
    assert!(!out.contains('\u{1b}'), "no ANSI escapes when stdout is not a terminal");
    let (_, colored, _) = kubewhy(&["--color", "always", "why", "etcdserver: mvcc: database space exceeded"], "");
    assert!(colored.contains('\u{1b}'));
}

#[test]
fn why_markdown_has_headings() {
    let (code, out, _) = kubewhy(&["why", "-o", "markdown", "Liveness probe failed: HTTP probe failed with statuscode: 404"], "");
    assert_eq!(code, 0);
    assert!(out.starts_with("# kubewhy diagnosis"));
    assert!(out.contains("## 1. "));
}

#[test]
fn why_empty_input_is_a_usage_error() {
    let (code, out, err) = kubewhy(&["why", "-"], "   \n");
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(err.contains("empty input"), "{err}");
}

#[test]
fn explain_component_shows_loops_and_failure_modes() {
    let (code, out, _) = kubewhy(&["explain", "kubelet"], "");
    assert_eq!(code, 0);
    assert!(out.contains("component/kubelet"));
    assert!(out.contains("loop/pleg"), "{out}");
    assert!(out.contains("loop PLEG") || out.contains("(loop/pleg)"), "{out}");
    assert!(out.contains("failure mode: "), "{out}");
    assert!(out.contains("metrics exposed"), "{out}");
    let (_, out, _) = kubewhy(&["explain", "kubelet", "-o", "json"], "");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let loops = v["loops"].as_array().expect("loops");
    assert!(loops.iter().any(|l| l["loop"]["id"] == "loop/kubelet-node-status" && l["writes"].as_array().is_some_and(|w| w.iter().any(|f| f["id"] == "field/Node.status.conditions"))), "{loops:?}");
    assert!(loops.iter().any(|l| !l["emits"].as_array().expect("emits").is_empty()));
    assert!(loops.iter().any(|l| l["failure_modes"].as_array().is_some_and(|f| f.iter().any(|x| x["id"] == "failure-mode/pleg-not-healthy"))));
    let (code, out, _) = kubewhy(&["explain", "watch cache", "-o", "json"], "");
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["entity"]["id"], "loop/watch-cache");
}

#[test]
fn explain_unknown_suggests_close_ids() {
    let (code, _, err) = kubewhy(&["explain", "component/kubelett"], "");
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("no entity matches"), "{err}");
    assert!(err.contains("component/kubelet"), "{err}");
}

#[test]
fn search_finds_crash_loop_by_words() {
    let (code, out, _) = kubewhy(&["search", "crash", "loop", "--kind", "failure-mode", "-o", "json"], "");
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let hits = v["hits"].as_array().expect("hits");
    assert!(!hits.is_empty());
    assert!(hits.iter().all(|h| h["kind"] == "failure-mode"));
    assert!(hits.iter().take(5).any(|h| h["id"].as_str().is_some_and(|id| id.contains("crashloop"))), "{hits:?}");
}

#[test]
fn sparql_select_ask_and_refused_update() {
    let (code, out, _) = kubewhy(
        &["sparql", "-o", "csv", "SELECT ?fm WHERE { ?fm kw:causedBy failure-mode:node-affinity-mismatch } ORDER BY ?fm"],
        "",
    );
    assert_eq!(code, 0);
    assert!(out.starts_with("fm\n"));
    assert!(out.contains("https://kubewhy.dev/id/failure-mode/wffc-pvc-pod-unschedulable-deadlock"), "{out}");
    let (code, out, _) = kubewhy(&["sparql", "ASK { component:etcd a kw:Component }"], "");
    assert_eq!((code, out.trim()), (0, "true"));
    let (code, _, err) = kubewhy(&["sparql", "INSERT DATA { component:a kw:b component:c }"], "");
    assert_eq!(code, 1);
    assert!(err.contains("read-only"), "{err}");
    let (code, _, err) = kubewhy(&["sparql", "SELEKT nonsense"], "");
    assert_eq!(code, 1);
    assert!(err.contains("invalid SPARQL"), "{err}");
}

#[test]
fn stats_json_counts_kinds_and_areas() {
    let (code, out, _) = kubewhy(&["stats", "--output", "json"], "");
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert!(v["by_kind"]["failure-mode"].as_u64().expect("count") >= 60);
    for area in ["apiserver", "etcd", "scheduler", "controllers", "kubelet", "networking", "dns", "storage", "operations"] {
        assert!(v["failure_modes_by_area"][area].as_u64().expect("count") > 0, "no failure mode in {area}");
    }
}

#[test]
fn lint_reports_problems_and_fails() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/broken-knowledge");
    let (code, out, _) = kubewhy(&["lint", dir], "");
    assert_eq!(code, 1);
    assert!(out.contains("bad.md:4: error: `area`"), "{out}");
    assert!(out.contains("error(s)"));
    let (code, out, _) = kubewhy(&["lint"], "");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(" 0 error(s)"));
}

#[test]
fn own_runbooks_load_on_top_of_the_builtin_graph() {
    let dir = std::env::temp_dir().join(format!("kubewhy-runbooks-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("failure-modes")).expect("mkdir");
    std::fs::write(
        dir.join("failure-modes/acme-license-expired.md"),
        "+++\nid = \"failure-mode/acme-license-expired\"\ntitle = \"ACME sidecar refuses to start: licence expired\"\narea = \"operations\"\ncomponents = [\"component/kubelet\"]\nloops = [\"loop/container-lifecycle\"]\nreferences = [\"https://intranet.example/acme\"]\n[[symptom]]\nsignal = \"log\"\ntext = \"acme: licence {key} expired on {date}\"\nsource = \"acme/sidecar:cmd/main.go\"\n[[check]]\nlook_for = \"the licence date in the sidecar log\"\n[[fix]]\naction = \"renew the licence secret\"\nrisk = \"low\"\n+++\nOur own runbook.\n",
    )
    .expect("write");
    let d = dir.to_string_lossy().to_string();
    let (code, out, err) = kubewhy(&["--knowledge", &d, "why", "-o", "json", "acme: licence ABC expired on 2026-11-01"], "");
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["candidates"][0]["id"], "failure-mode/acme-license-expired");
    let _ = std::fs::remove_dir_all(&dir);
}
