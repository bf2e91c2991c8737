//! Prints how long every probe takes on a large synthetic cluster: the `healthy` fixture
//! grown to 100 nodes and 5,000 pods (one in ten crash-looping, with three events each),
//! then all probes run once.
//!
//! Run: `cargo run --release -p kubewhy-cluster --example probe_figures [PODS] [NODES]`.

use kubewhy_cluster::probes;
use kubewhy_cluster::snapshot;
use std::path::Path;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let pods = args.first().copied().unwrap_or(5000);
    let nodes = args.get(1).copied().unwrap_or(100);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/cluster/healthy");
    let mut state = snapshot::load(&dir)?.state;

    let node0 = state.nodes.iter().find(|n| n.metadata.name.as_deref() == Some("worker-1")).cloned().ok_or("no worker-1")?;
    for i in 0..nodes {
        let mut n = node0.clone();
        n.metadata.name = Some(format!("node-{i:04}"));
        state.nodes.push(n);
    }
    let pod0 = state.pods.iter().find(|p| p.metadata.name.as_deref().is_some_and(|n| n.starts_with("web-"))).cloned().ok_or("no web pod")?;
    let mut crash = serde_json::to_value(&pod0)?;
    crash["status"]["containerStatuses"][0]["state"] = serde_json::json!({"waiting": {"reason": "CrashLoopBackOff"}});
    crash["status"]["containerStatuses"][0]["lastState"] = serde_json::json!({"terminated": {"exitCode": 1, "reason": "Error"}});
    crash["status"]["containerStatuses"][0]["restartCount"] = serde_json::json!(7);
    let crash: k8s_openapi::api::core::v1::Pod = serde_json::from_value(crash)?;
    let event0 = state.events.first().cloned().ok_or("no event")?;
    for i in 0..pods {
        let mut p = if i % 10 == 0 { crash.clone() } else { pod0.clone() };
        let name = format!("app-{i:05}");
        p.metadata.name = Some(name.clone());
        p.metadata.uid = Some(format!("uid-{i}"));
        p.metadata.namespace = Some(format!("team-{}", i % 50));
        if let Some(s) = p.spec.as_mut() {
            s.node_name = Some(format!("node-{:04}", i % nodes));
        }
        for (j, reason) in ["Scheduled", "Pulled", if i % 10 == 0 { "BackOff" } else { "Started" }].iter().enumerate() {
            let mut e = event0.clone();
            e.metadata.name = Some(format!("{name}.{j}"));
            e.metadata.namespace = p.metadata.namespace.clone();
            e.involved_object.kind = Some("Pod".into());
            e.involved_object.name = Some(name.clone());
            e.involved_object.namespace = p.metadata.namespace.clone();
            e.involved_object.uid = p.metadata.uid.clone();
            e.reason = Some((*reason).into());
            state.events.push(e);
        }
        state.pods.push(p);
    }
    println!("state: {} pods, {} nodes, {} events", state.pods.len(), state.nodes.len(), state.events.len());

    let all = probes::all();
    let start = Instant::now();
    let mut rows = Vec::new();
    let mut findings = 0;
    for p in &all {
        let t = Instant::now();
        let o = probes::run(p, &state);
        findings += o.findings.len();
        rows.push((t.elapsed(), p.id));
    }
    let total = start.elapsed();
    rows.sort();
    rows.reverse();
    println!("{} probes in {:.1} ms, {findings} findings", all.len(), total.as_secs_f64() * 1000.0);
    for (d, id) in rows.iter().take(8) {
        println!("  {:>8.2} ms  {id}", d.as_secs_f64() * 1000.0);
    }
    Ok(())
}
