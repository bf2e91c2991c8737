//! Benchmark of `kubewhy why`: prints figures, asserts nothing.
//!
//! Run: `cargo bench -p kubewhy --bench why` (it builds the release binary first when needed).
//! Prints: entities loaded and engine build time; warm diagnosis latency p50/p99 over a set of
//! real inputs; cold `kubewhy why` end to end (process start to exit) p50 over 10 runs of the
//! release binary; peak RSS of one cold run (from /usr/bin/time when present) and of this process.

use kubewhy_engine::diagnose::DiagnoseOptions;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn inputs() -> Vec<String> {
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
    let mut v: Vec<String> = ["describe-pod-oomkilled.txt", "describe-svc-no-endpoints.txt", "wffc-deadlock.txt"]
        .iter()
        .filter_map(|f| std::fs::read_to_string(fixtures.join(f)).ok())
        .collect();
    v.extend(
        [
            "0/3 nodes are available: 3 Insufficient cpu.",
            "Liveness probe failed: HTTP probe failed with statuscode: 404",
            "etcdserver: mvcc: database space exceeded",
            r#"Internal error occurred: failed calling webhook "policy.example.com": context deadline exceeded"#,
            "unable to retrieve the complete list of server APIs: metrics.k8s.io/v1beta1: the server is currently unable to handle the request",
            "why is kubectl so slow on every command?",
            "pods cannot resolve external names, lookups take 5 seconds",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    v
}

fn vm_hwm_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines().find(|l| l.starts_with("VmHWM:"))?.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    let t = Instant::now();
    let (engine, _) = kubewhy_cli::load_engine(None).expect("built-in knowledge loads");
    let load = t.elapsed();
    let stats = engine.stats();
    println!("entities loaded: {} ({} failure modes, {} triples)", stats.entities, stats.by_kind["failure-mode"], stats.triples);
    println!("engine build (parse + validate + graph + index), in process: {:.1} ms", load.as_secs_f64() * 1e3);

    let inputs = inputs();
    let mut times = Vec::new();
    for _ in 0..30 {
        for i in &inputs {
            let t = Instant::now();
            let d = engine.diagnose(i, DiagnoseOptions::default()).expect("diagnosis");
            std::hint::black_box(d);
            times.push(t.elapsed());
        }
    }
    times.sort();
    println!(
        "warm diagnosis over {} runs of {} inputs: p50 {:.2} ms, p99 {:.2} ms",
        times.len(),
        inputs.len(),
        percentile(&times, 0.5).as_secs_f64() * 1e3,
        percentile(&times, 0.99).as_secs_f64() * 1e3
    );
    if let Some(k) = vm_hwm_kib() {
        println!("peak RSS of this benchmark process: {:.1} MiB", k as f64 / 1024.0);
    }

    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let bin = std::env::var_os("KUBEWHY_BIN").map(PathBuf::from).unwrap_or_else(|| root.join("target/release/kubewhy"));
    if !bin.exists() {
        let ok = Command::new(env!("CARGO")).args(["build", "--release", "-p", "kubewhy"]).current_dir(&root).status().map(|s| s.success()).unwrap_or(false);
        if !ok || !bin.exists() {
            println!("cold run skipped: no release binary at {}", bin.display());
            return;
        }
    }
    let mut cold = Vec::new();
    for _ in 0..10 {
        let t = Instant::now();
        let out = Command::new(&bin).args(["why", "0/3 nodes are available: 3 Insufficient cpu."]).output().expect("runs");
        cold.push(t.elapsed());
        assert!(out.status.success());
    }
    cold.sort();
    println!(
        "cold `kubewhy why` end to end ({}): p50 {:.1} ms, max {:.1} ms over {} runs",
        bin.display(),
        percentile(&cold, 0.5).as_secs_f64() * 1e3,
        cold.last().map(|d| d.as_secs_f64() * 1e3).unwrap_or(0.0),
        cold.len()
    );
    if std::path::Path::new("/usr/bin/time").exists() {
        if let Ok(out) = Command::new("/usr/bin/time").args(["-f", "%M"]).arg(&bin).args(["why", "0/3 nodes are available: 3 Insufficient cpu."]).output() {
            let err = String::from_utf8_lossy(&out.stderr);
            if let Some(k) = err.lines().last().and_then(|l| l.trim().parse::<f64>().ok()) {
                println!("peak RSS of one cold `kubewhy why`: {:.1} MiB", k / 1024.0);
            }
        }
    }
}
