//! The acceptance scenarios: each asserts the top-ranked failure mode for a real input.

use crate::support::{check_top, engine, fixture, ids, why};
use kubewhy_engine::diagnose::{DiagnoseError, DiagnoseOptions};

#[test]
fn insufficient_cpu_is_the_resource_fit_filter() {
    let d = check_top("0/3 nodes are available: 3 Insufficient cpu.", None, "failure-mode/insufficient-resources");
    let top = &d.candidates[0];
    assert_eq!(top.loop_.as_ref().map(|l| l.id.as_str()), Some("loop/scheduler-noderesourcesfit"));
    assert_eq!(top.component.as_ref().map(|c| c.id.as_str()), Some("component/kube-scheduler"));
    // A hub whose causes the input does not separate: the surface failure is certain, which of
    // its causes is not, and the confidence says so.
    assert!(top.confidence > 0.4, "confidence {}", top.confidence);
    assert_eq!(top.level, "symptom");
    assert!(top.causes.len() >= 2);
    assert!(d.signals.templates.iter().any(|t| t.full));
}

#[test]
fn describe_pod_oomkilled_ranks_above_node_pressure_eviction() {
    let d = check_top(&fixture("describe-pod-oomkilled.txt"), None, "failure-mode/oom-killed-container-limit");
    assert_eq!(d.signals.input_style, "describe");
    assert!(d.signals.exit_codes.contains(&137));
    assert!(d.signals.status_reasons.iter().any(|r| r == "OOMKilled"));
    assert!(d.signals.event_reasons.iter().any(|r| r == "BackOff"));
    let list = ids(&d);
    if let Some(p) = list.iter().position(|id| *id == "failure-mode/node-pressure-eviction-memory") {
        assert!(p > 0, "node-pressure eviction must rank below the OOM kill: {list:?}");
    }
}

#[test]
fn liveness_probe_404_is_a_wrong_path() {
    let d = check_top("Liveness probe failed: HTTP probe failed with statuscode: 404", None, "failure-mode/liveness-probe-wrong-path");
    // Event lines as kubectl prints them give the same answer.
    let _ = d;
    check_top(
        "  Warning  Unhealthy  2m (x9 over 4m)  kubelet  Liveness probe failed: HTTP probe failed with statuscode: 404\n  Normal   Killing    2m (x3 over 4m)  kubelet  Container web failed liveness probe, will be restarted",
        None,
        "failure-mode/liveness-probe-wrong-path",
    );
}

#[test]
fn service_without_endpoints_is_a_selector_mismatch() {
    check_top("Service my-svc has no endpoints although its pods are Running", None, "failure-mode/service-selector-mismatch");
    check_top(&fixture("describe-svc-no-endpoints.txt"), None, "failure-mode/service-selector-mismatch");
}

#[test]
fn etcd_database_space_exceeded_is_the_nospace_alarm() {
    let d = check_top("etcdserver: mvcc: database space exceeded", None, "failure-mode/etcd-nospace-alarm");
    assert_eq!(d.candidates[0].loop_.as_ref().map(|l| l.id.as_str()), Some("loop/etcd-backend-quota"));
    assert!(!d.candidates[0].fixes.is_empty());
}

#[test]
fn webhook_deadline_is_an_unreachable_webhook() {
    check_top(
        r#"Error from server (InternalError): error when creating "deploy.yaml": Internal error occurred: failed calling webhook "policy.example.com": failed to call webhook: Post "https://policy-svc.policy.svc:443/validate?timeout=10s": context deadline exceeded"#,
        None,
        "failure-mode/admission-webhook-unreachable",
    );
    check_top(
        r#"Internal error occurred: failed calling webhook "policy.example.com": ... context deadline exceeded"#,
        None,
        "failure-mode/admission-webhook-unreachable",
    );
}

#[test]
fn discovery_failure_is_an_unavailable_apiservice() {
    check_top(
        "unable to retrieve the complete list of server APIs: metrics.k8s.io/v1beta1: the server is currently unable to handle the request",
        None,
        "failure-mode/aggregated-apiservice-unavailable",
    );
}

#[test]
fn wffc_pvc_with_unschedulable_pod_is_the_deadlock_with_its_chain() {
    let d = check_top(&fixture("wffc-deadlock.txt"), None, "failure-mode/wffc-pvc-pod-unschedulable-deadlock");
    let chain = &d.candidates[0].chain;
    assert!(
        chain.iter().any(|s| s.relation == "causedBy" && s.id == "failure-mode/node-affinity-mismatch"),
        "chain lacks the causedBy step: {chain:?}"
    );
    let rels: Vec<&str> = chain.iter().map(|s| s.relation.as_str()).collect();
    assert_eq!(&rels[..2], &["observed", "manifestsAs"], "chain starts with the symptom then the failure mode");
}

#[test]
fn the_answer_depends_on_the_cluster_version() {
    let q = "my pods are rejected by pod security policy after the upgrade";
    let old = check_top(q, Some("1.22"), "failure-mode/podsecuritypolicy-rejection");
    assert_eq!(old.k8s_version.as_deref(), Some("1.22"));
    let new = check_top(q, Some("1.30"), "failure-mode/podsecurity-admission-rejection");
    assert!(new.excluded.iter().any(|e| e.id == "failure-mode/podsecuritypolicy-rejection"), "PSP is reported as left out at 1.30");
    assert!(new.notices.iter().any(|n| n.contains("1.30")));
    // dockershim is gone from 1.24: its failure mode only applies from then on.
    let d = why("kubelet fails to start: unknown flag: --network-plugin", Some("1.22"));
    assert!(!ids(&d).contains(&"failure-mode/dockershim-removed"));
    check_top("kubelet fails to start: unknown flag: --network-plugin", Some("1.30"), "failure-mode/dockershim-removed");
}

#[test]
fn version_in_the_input_is_used_when_no_option_is_given() {
    let d = why("Server Version: v1.30.4\nmy pods are rejected by pod security policy", None);
    assert_eq!(d.k8s_version.as_deref(), Some("1.30"));
    assert_eq!(d.k8s_version_source, "input");
    assert_eq!(d.candidates[0].id, "failure-mode/podsecurity-admission-rejection");
}

#[test]
fn empty_nonsense_and_huge_inputs_never_panic() {
    let e = engine();
    assert!(matches!(e.diagnose("", DiagnoseOptions::default()), Err(DiagnoseError::EmptyInput)));
    assert!(matches!(e.diagnose(" \n\t ", DiagnoseOptions::default()), Err(DiagnoseError::EmptyInput)));
    let d = why("qwzx plorb vextrum glanf", None);
    assert!(d.candidates.is_empty(), "nonsense matched {:?}", ids(&d));
    assert!(!d.notices.is_empty());
    // A 5 MB paste of a real log with the signal buried at the end.
    let mut big = String::new();
    while big.len() < 5_000_000 {
        big.push_str("I1130 07:00:00.000000       1 reflector.go:255] Listing and watching *v1.Pod from informers\n");
    }
    big.push_str("Error: etcdserver: mvcc: database space exceeded\n");
    let d = why(&big, None);
    assert_eq!(d.candidates[0].id, "failure-mode/etcd-nospace-alarm");
    assert!(d.input.len() <= 8_000);
    assert_eq!(d.input_bytes, big.len());
    let huge = "x".repeat(kubewhy_engine::diagnose::MAX_INPUT_BYTES + 1);
    assert!(matches!(e.diagnose(&huge, DiagnoseOptions::default()), Err(DiagnoseError::TooLarge { .. })));
}

#[test]
fn every_candidate_carries_the_documented_fields() {
    let d = why(&fixture("describe-pod-oomkilled.txt"), Some("1.30"));
    let v = serde_json::to_value(&d).expect("serialises");
    for key in ["input", "k8s_version", "signals", "candidates"] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    for c in v["candidates"].as_array().expect("array") {
        for key in ["id", "kind", "title", "confidence", "component", "loop", "chain", "checks", "fixes", "references", "applies"] {
            assert!(c.get(key).is_some(), "candidate missing {key}: {c}");
        }
        let conf = c["confidence"].as_f64().expect("number");
        assert!((0.0..=1.0).contains(&conf));
    }
    let confs: Vec<f64> = d.candidates.iter().map(|c| c.confidence).collect();
    assert!(confs.windows(2).all(|w| w[0] >= w[1]), "confidence follows rank: {confs:?}");
}

#[test]
fn top_candidates_get_checks_that_tell_them_apart() {
    let d = why("pod stuck Pending with FailedScheduling: 0/5 nodes are available: 2 Insufficient memory, 3 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }.", None);
    // Both reasons are among the first answers: the resource fit (a hub, with its causes) and
    // the taint, as its hub or as the cause the message points to (only control-plane nodes
    // carry it, and the scheduler treats that taint as background).
    let top = &d.candidates[..d.candidates.len().min(5)];
    assert!(top.iter().any(|c| c.id == "failure-mode/insufficient-resources"), "{:?}", ids(&d));
    assert!(
        top.iter().any(|c| c.id == "failure-mode/untolerated-taint"
            || c.id == "failure-mode/control-plane-taint-no-workers"
            || c.hub.as_deref() == Some("failure-mode/untolerated-taint")),
        "{:?}",
        ids(&d)
    );
    assert!(!d.distinguishing_checks.is_empty());
    for k in &d.distinguishing_checks {
        assert!(!k.versus.is_empty() && !k.versus.contains(&k.confirms));
    }
}

/// A query that is an entity's name (an alias here) ranks that entity first, ahead of pages
/// that only use the same words often (the CFS-throttling failure mode says "cpu" a lot).
#[test]
fn search_ranks_an_exact_alias_first() {
    let top = |q: &str, kinds: Option<&[kubewhy_engine::model::Kind]>| {
        engine().search(q, kinds, 5).into_iter().map(|h| h.id).collect::<Vec<_>>()
    };
    let hits = top("insufficient cpu", None);
    assert_eq!(hits.first().map(String::as_str), Some("failure-mode/insufficient-resources"), "{hits:?}");
    let hits = top("  Insufficient   CPU ", Some(&[kubewhy_engine::model::Kind::FailureMode]));
    assert_eq!(hits.first().map(String::as_str), Some("failure-mode/insufficient-resources"), "{hits:?}");
    // A kind filter still applies to exact names.
    let hits = top("insufficient cpu", Some(&[kubewhy_engine::model::Kind::Loop]));
    assert!(hits.iter().all(|id| id.starts_with("loop/")), "{hits:?}");
    // Words that are nobody's name keep the plain BM25 order.
    let hits = top("cpu throttling quota period", None);
    assert_eq!(hits.first().map(String::as_str), Some("failure-mode/cpu-throttling-limit"), "{hits:?}");
}
