//! Issue 11: a surface error plus context ranks the specific cause first; the same error alone
//! answers with the hub, its causes and the checks that tell them apart; confidence does not
//! depend on `--top`.

use crate::support::{check_top, engine, ids, why};
use kubewhy_engine::diagnose::DiagnoseOptions;

const TAINT: &str = "0/3 nodes are available: 3 node(s) had untolerated taint {node.kubernetes.io/not-ready: }.";
const FORBIDDEN: &str = r#"Error from server (Forbidden): deployments.apps is forbidden: User "system:serviceaccount:ci:deployer" cannot create resource "deployments" in API group "apps" in the namespace "prod""#;

#[test]
fn taint_not_ready_plus_no_network_plugin_is_the_missing_cni() {
    let d = check_top(&format!("{TAINT}\nThe nodes just joined and no network plugin is installed yet."), None, "failure-mode/cni-not-initialized");
    let c = &d.candidates[0];
    assert_eq!(c.level, "cause");
    assert!(c.evidence.iter().any(|e| e.scorer == "context"), "{:?}", c.evidence);
}

#[test]
fn forbidden_plus_role_bound_in_another_namespace_is_the_rolebinding_namespace() {
    check_top(&format!("{FORBIDDEN}\nWe bound the Role in namespace ci but deploy to prod."), None, "failure-mode/rbac-rolebinding-wrong-namespace");
}

#[test]
fn crashloop_exit_code_0_plus_migration_script_is_run_to_completion() {
    check_top(
        "Pod is in CrashLoopBackOff.\n    Last State:     Terminated\n      Reason:       Completed\n      Exit Code:    0\nThe container runs a migration script.",
        None,
        "failure-mode/crashloop-completed-restart-always",
    );
}

#[test]
fn the_surface_error_alone_answers_with_the_hub_and_its_causes() {
    let d = check_top(TAINT, None, "failure-mode/untolerated-taint");
    let hub = &d.candidates[0];
    assert_eq!(hub.level, "symptom");
    assert!(hub.causes.len() >= 2, "{:?}", hub.causes);
    assert!(hub.causes.iter().all(|c| c.check.is_some()), "every cause carries the check that tells it apart");
    assert!(d.notices.iter().any(|n| n.contains("nothing in the input separates")), "{:?}", d.notices);
    // Its first cause follows it, reached through it.
    assert_eq!(d.candidates[1].hub.as_deref(), Some("failure-mode/untolerated-taint"), "{:?}", ids(&d));
}

#[test]
fn confidence_is_the_same_with_top_1_and_top_10() {
    for input in [TAINT.to_string(), format!("{FORBIDDEN}\nWe bound the Role in namespace ci but deploy to prod.")] {
        let one = engine().diagnose(&input, DiagnoseOptions { k8s_version: None, top: 1 }).expect("diagnosis");
        let ten = engine().diagnose(&input, DiagnoseOptions { k8s_version: None, top: 10 }).expect("diagnosis");
        assert_eq!(one.candidates[0].id, ten.candidates[0].id);
        assert_eq!(one.candidates[0].confidence, ten.candidates[0].confidence);
        assert!(ten.candidates.windows(2).all(|w| w[0].confidence >= w[1].confidence), "ranks follow confidence");
    }
}

#[test]
fn a_one_line_input_gives_a_short_text_answer() {
    let d = why(TAINT, None);
    assert!(!d.candidates.is_empty());
    let (code, out, _) = crate::cli::kubewhy(&["why", TAINT], "");
    assert_eq!(code, 0);
    let lines = out.lines().count();
    assert!(lines <= 32, "{lines} lines for a one-line input");
}
