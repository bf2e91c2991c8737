//! The real `kubewhy` process: exit codes, standard input, colour and broken pipes.

use assert_cmd::Command;
use predicates::prelude::*;

fn kubewhy() -> Command {
    Command::new(env!("CARGO_BIN_EXE_kubewhy"))
}

#[test]
fn why_from_argument_and_stdin() {
    kubewhy()
        .args(["why", "0/3 nodes are available: 3 Insufficient cpu."])
        .assert()
        .success()
        .stdout(predicate::str::contains("failure-mode/insufficient-resources"))
        .stdout(predicate::str::contains("\u{1b}[").not());
    kubewhy()
        .args(["why", "-", "--output", "json"])
        .write_stdin("Liveness probe failed: HTTP probe failed with statuscode: 404\n")
        .assert()
        .success()
        .stdout(predicate::str::contains("\"id\": \"failure-mode/liveness-probe-wrong-path\""));
}

#[test]
fn bad_arguments_exit_2_and_name_the_argument() {
    kubewhy().args(["why"]).assert().code(2).stderr(predicate::str::contains("<TEXT>"));
    kubewhy()
        .args(["why", "--k8s-version", "one.thirty", "x"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--k8s-version").and(predicate::str::contains("one.thirty")));
    kubewhy().args(["why", "--top", "0", "x"]).assert().code(2).stderr(predicate::str::contains("--top"));
    kubewhy().args(["why", "-"]).write_stdin("").assert().code(2).stderr(predicate::str::contains("empty input"));
    kubewhy().args(["lint", "/nonexistent/kubewhy"]).assert().code(2).stderr(predicate::str::contains("/nonexistent/kubewhy"));
    kubewhy()
        .args(["why", "-"])
        .write_stdin(vec![0xff, 0xfe, b'x'])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not UTF-8"));
}

#[test]
fn no_color_and_forced_color() {
    kubewhy()
        .env("NO_COLOR", "1")
        .args(["why", "etcdserver: mvcc: database space exceeded"])
        .assert()
        .success()
        .stdout(predicate::str::contains("\u{1b}[").not());
    kubewhy()
        .args(["--color", "always", "why", "etcdserver: mvcc: database space exceeded"])
        .assert()
        .success()
        .stdout(predicate::str::contains("\u{1b}["));
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    use std::io::Read;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_kubewhy"))
        .args(["export", "--format", "ntriples"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawns");
    let mut first = [0u8; 64];
    let mut out = child.stdout.take().expect("stdout");
    out.read_exact(&mut first).expect("some output");
    drop(out);
    let status = child.wait().expect("exits");
    let mut err = String::new();
    child.stderr.take().expect("stderr").read_to_string(&mut err).expect("stderr reads");
    assert!(status.success(), "exit {status:?}, stderr {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn help_lists_every_subcommand() {
    let assert = kubewhy().arg("--help").assert().success();
    let out = String::from_utf8_lossy(&assert.get_output().stdout).to_string();
    for sub in ["why", "explain", "search", "sparql", "lint", "stats", "export"] {
        assert!(out.contains(sub), "help lacks {sub}: {out}");
    }
}
