//! Figures for the cluster checks: prints figures, asserts nothing.
//!
//! Run: `cargo bench -p kubewhy --bench cluster` (builds the release binary when missing; set
//! KUBEWHY_BIN to use another) or with `-- --pods N`. It generates a cluster of N pods (default
//! 5,000) over N/50 nodes with a Service, EndpointSlice and event per 10 pods
//! (`kubewhy_e2e::scenarios::large`), then reports:
//! - a live `kubewhy scan -A` against the test API server serving those objects (pagination
//!   at limit=500): wall time, the number of API requests (counted by the server) and peak RSS;
//! - `kubewhy scan -A --snapshot DIR` over the same objects written as `kubectl get -o json`
//!   lists: wall time and peak RSS.
//!
//! Peak RSS comes from `/usr/bin/time -f %M` when present.

use kubewhy_e2e::apiserver::{Options, TestApiServer};
use kubewhy_e2e::scenarios;
use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

fn timed(bin: &PathBuf, args: &[&str]) -> (f64, Option<u64>, i32) {
    let time = std::path::Path::new("/usr/bin/time");
    let start = Instant::now();
    let out = if time.exists() {
        Command::new(time).args(["-f", "%M"]).arg(bin).args(args).output()
    } else {
        Command::new(bin).args(args).output()
    }
    .expect("kubewhy runs");
    let secs = start.elapsed().as_secs_f64();
    let rss = if time.exists() {
        String::from_utf8_lossy(&out.stderr).lines().last().and_then(|l| l.trim().parse::<u64>().ok())
    } else {
        None
    };
    (secs, rss, out.status.code().unwrap_or(-1))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let pods = args.iter().position(|a| a == "--pods").and_then(|i| args.get(i + 1)).and_then(|n| n.parse().ok()).unwrap_or(5000usize);
    if args.iter().any(|a| a == "--list" || a == "--test") {
        return; // `cargo test --benches` probes; nothing to list
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let bin = std::env::var_os("KUBEWHY_BIN").map(PathBuf::from).unwrap_or_else(|| root.join("target/release/kubewhy"));
    if !bin.exists() {
        let ok = Command::new(env!("CARGO")).args(["build", "--release", "-p", "kubewhy"]).current_dir(&root).status().map(|s| s.success()).unwrap_or(false);
        if !ok {
            println!("skipped: no kubewhy binary at {}", bin.display());
            return;
        }
    }
    let t = Instant::now();
    let objects = scenarios::large(pods);
    println!("generated {} objects ({pods} pods, {} nodes) in {:.2} s", objects.len(), (pods / 50).max(1), t.elapsed().as_secs_f64());
    let dir = std::env::temp_dir().join(format!("kubewhy-bench-cluster-{}", std::process::id()));
    let snap = dir.join("snapshot");
    objects.write_snapshot(&snap, "v1.33.2").expect("write snapshot");
    let server = TestApiServer::start(objects, Options::default());
    let kc = server.kubeconfig(&dir, "default");
    let kc = kc.to_str().expect("utf8 path");

    let (secs, rss, code) = timed(&bin, &["scan", "-A", "--kubeconfig", kc, "--output", "json"]);
    let reqs = server.requests();
    let pod_pages = reqs.iter().filter(|r| r.path.starts_with("/api/v1/pods?")).count();
    let non_get = reqs.iter().filter(|r| r.method != "GET").count();
    println!(
        "live scan -A: {secs:.2} s, {} API requests ({pod_pages} pod pages at limit=500, {non_get} non-GET), peak RSS {}, exit {code}",
        reqs.len(),
        rss.map(|k| format!("{:.1} MiB", k as f64 / 1024.0)).unwrap_or_else(|| "n/a".into())
    );
    let snap_s = snap.to_str().expect("utf8 path");
    let (secs, rss, code) = timed(&bin, &["scan", "-A", "--snapshot", snap_s, "--output", "json"]);
    println!(
        "snapshot scan -A: {secs:.2} s, 0 API requests, peak RSS {}, exit {code}",
        rss.map(|k| format!("{:.1} MiB", k as f64 / 1024.0)).unwrap_or_else(|| "n/a".into())
    );
    let (secs, _, _) = timed(&bin, &["why", "x"]);
    println!("(for comparison, `kubewhy why x` end to end: {secs:.2} s: loading the knowledge is part of every run)");
    let _ = std::fs::remove_dir_all(&dir);
}
