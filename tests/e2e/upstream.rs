//! The upstream import and the accuracy lint: generated files regenerate byte-identically, the
//! lookups answer from them, and wrong facts in curated text fail the lint.

use crate::cli::kubewhy;
use kubewhy_engine::knowledge::{load_sources, Severity, SourceFile};

fn knowledge_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../knowledge")
}

#[test]
fn generated_files_regenerate_byte_identically() {
    let upstream = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/upstream");
    if !upstream.is_dir() {
        eprintln!("skipped: no shared/upstream beside the checkout ({})", upstream.display());
        return;
    }
    let files = kubewhy_engine::upstream::import(&upstream).expect("import runs");
    assert_eq!(files.len(), 4);
    for (rel, text) in files {
        let committed = std::fs::read_to_string(knowledge_dir().join(&rel)).expect("generated file is committed");
        assert!(committed == text, "{rel} differs from a fresh import: run `kubewhy import-upstream ../shared/upstream`");
    }
}

/// Problems (as text) of the built-in knowledge plus one extra file.
fn lint_with(path: &str, text: &str) -> Vec<String> {
    let mut files = kubewhy_cli::builtin_sources();
    files.push(SourceFile { path: path.into(), text: text.into() });
    let (_, diags) = load_sources(files);
    diags.into_iter().filter(|d| d.severity == Severity::Error).map(|d| d.to_string()).collect()
}

fn concept(slug: &str, front: &str, body: &str) -> (String, String) {
    (format!("concepts/{slug}.md"), format!("+++\nid = \"concept/{slug}\"\ntitle = \"test concept\"\n{front}+++\n{body}\n"))
}

#[test]
fn a_misspelled_metric_fails_the_lint() {
    let (p, t) = (
        "metrics/etcd_disk_wal_fsync_duration_secs.md",
        "+++\nid = \"metric/etcd_disk_wal_fsync_duration_secs\"\ntitle = \"x\"\nname = \"etcd_disk_wal_fsync_duration_secs\"\ncomponent = \"component/etcd\"\ntype = \"histogram\"\n+++\n",
    );
    let errs = lint_with(p, t);
    assert!(errs.iter().any(|e| e.contains("metrics/etcd_disk_wal_fsync_duration_secs.md:4") && e.contains("not in the imported metric lists")), "{errs:?}");
    let (p, t) = concept("metric-in-text", "", "Watch `apiserver_request_duration_secondz` for latency.");
    let errs = lint_with(&p, &t);
    assert!(errs.iter().any(|e| e.contains("apiserver_request_duration_secondz") && e.contains("not a known metric")), "{errs:?}");
    let (p, t) = concept("metric-in-text-ok", "", "Watch `apiserver_request_duration_seconds_bucket` for latency.");
    assert!(lint_with(&p, &t).is_empty());
}

#[test]
fn a_gate_given_the_wrong_version_fails_the_lint() {
    // SidecarContainers: alpha 1.28, beta 1.29, GA 1.33 in the imported lifecycle.
    let (p, t) = concept("sidecar-wrong", "", "Native sidecars: the SidecarContainers feature gate went GA in 1.29.");
    let errs = lint_with(&p, &t);
    assert!(errs.iter().any(|e| e.contains("SidecarContainers is GA in 1.29")), "{errs:?}");
    let (p, t) = concept("sidecar-right", "", "Native sidecars: the SidecarContainers feature gate went GA in 1.33.");
    assert!(lint_with(&p, &t).is_empty(), "{:?}", lint_with(&p, &t));
    let (p, t) = concept("gate-unknown", "feature_gates = [\"SidecarContainer\"]\n", "x");
    let errs = lint_with(&p, &t);
    assert!(errs.iter().any(|e| e.contains("`SidecarContainer` is not a known feature gate (closest: `SidecarContainers`)")), "{errs:?}");
    let (p, t) = concept("gate-since", "feature_gates = [\"SidecarContainers\"]\nsince = \"1.27\"\n", "x");
    let errs = lint_with(&p, &t);
    assert!(errs.iter().any(|e| e.contains("`since` 1.27 is not a step of `SidecarContainers`")), "{errs:?}");
}

#[test]
fn a_wrong_kep_fails_the_lint() {
    let (p, t) = concept("kep-title", "", "See KEP-753 (Pod Priority and Preemption).");
    let errs = lint_with(&p, &t);
    assert!(errs.iter().any(|e| e.contains("KEP 753 is titled")), "{errs:?}");
    let (p, t) = concept("kep-title-ok", "", "See KEP-753 (Sidecar Containers).");
    assert!(lint_with(&p, &t).is_empty(), "{:?}", lint_with(&p, &t));
    let (p, t) = concept("kep-missing", "keps = [99999]\n", "x");
    let errs = lint_with(&p, &t);
    assert!(errs.iter().any(|e| e.contains("KEP 99999 does not exist")), "{errs:?}");
    let (p, t) = concept("version-future", "since = \"1.60\"\n", "x");
    let errs = lint_with(&p, &t);
    assert!(errs.iter().any(|e| e.contains("after the newest release")), "{errs:?}");
}

#[test]
fn gate_kep_and_metric_lookups() {
    let (code, out, _) = kubewhy(&["gate", "SidecarContainers", "--k8s-version", "1.30", "-o", "json"], "");
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["at_version"]["stage"], "Beta");
    assert_eq!(v["at_version"]["version"], "1.29");
    assert!(v["keps"].as_array().expect("keps").iter().any(|k| k["id"] == "kep/753"));
    let (code, out, _) = kubewhy(&["gate", "SidecarContainers", "--k8s-version", "1.27"], "");
    assert_eq!(code, 0);
    assert!(out.contains("does not exist yet at Kubernetes 1.27"), "{out}");
    let (code, _, err) = kubewhy(&["gate", "SidecarContainer"], "");
    assert_eq!(code, 1);
    assert!(err.contains("SidecarContainers"), "closest names offered: {err}");

    let (code, out, _) = kubewhy(&["kep", "753", "-o", "json"], "");
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v[0]["kep"]["title"], "Sidecar Containers");
    let (code, out, _) = kubewhy(&["kep", "sidecar", "containers"], "");
    assert_eq!(code, 0);
    assert!(out.contains("KEP-753"));

    let (code, out, _) = kubewhy(&["metric", "etcd_mvcc_db_total_size_in_bytes", "-o", "json"], "");
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["component"]["id"], "component/etcd");
    assert!(v["bad_value"].is_string());
    assert!(v["failure_modes"].as_array().expect("fms").iter().any(|f| f["id"] == "failure-mode/etcd-nospace-alarm"));
    let (code, _, err) = kubewhy(&["metric", "etcd_mvcc_db_total_size_bytes"], "");
    assert_eq!(code, 1);
    assert!(err.contains("etcd_mvcc_db_total_size_in_bytes"), "{err}");
}
