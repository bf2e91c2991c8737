//! Benchmark of the reference site: prints figures, asserts nothing.
//!
//! Run: `cargo bench -p kubewhy-mcp --bench site`.
//! Prints: server-side render time (request in, full HTML out, through the axum router) p50 and
//! p90 for an entity page (a failure mode, with its two SVG diagrams and relation panels), a kind
//! listing and a search; then the static export's time, file count and size.

use axum::body::Body;
use axum::http::Request;
use kubewhy_engine::knowledge;
use kubewhy_engine::Engine;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tower::ServiceExt;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn main() -> anyhow::Result<()> {
    let t = Instant::now();
    let files = knowledge::sources_from(kubewhy_knowledge::files());
    let engine = Arc::new(Engine::from_sources(files).map_err(|e| anyhow::anyhow!("{e}"))?.0);
    engine.graph();
    println!("engine: {} entities, built in {:.2?}", engine.knowledge().len(), t.elapsed());
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let app = kubewhy_mcp::site::router(engine.clone(), &kubewhy_mcp::site::SiteOptions::default());
    let pages = [
        ("entity page (failure-mode/insufficient-resources)", "/e/failure-mode/insufficient-resources"),
        ("entity page (component/kubelet)", "/e/component/kubelet"),
        ("search (insufficient cpu)", "/search?q=insufficient+cpu"),
        ("search (watch cache too old resource version)", "/search?q=watch+cache+too+old+resource+version"),
    ];
    for (label, uri) in pages {
        let mut times = Vec::new();
        let mut bytes = 0;
        for i in 0..105 {
            let req = Request::builder().uri(uri).body(Body::empty())?;
            let start = Instant::now();
            let resp = rt.block_on(app.clone().oneshot(req))?;
            let body = rt.block_on(axum::body::to_bytes(resp.into_body(), usize::MAX))?;
            let took = start.elapsed();
            if i >= 5 {
                times.push(took);
            }
            bytes = body.len();
        }
        times.sort();
        println!("{label}: p50 {:.2?}, p90 {:.2?} over {} renders ({} bytes of HTML)", percentile(&times, 0.5), percentile(&times, 0.9), times.len(), bytes);
    }
    let dir = std::env::temp_dir().join(format!("kubewhy-site-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let start = Instant::now();
    let report = kubewhy_mcp::site::export(engine, &dir, &kubewhy_mcp::site::ExportOptions::default())?;
    println!(
        "static export: {} files ({} entity pages), {} bytes ({:.1} MiB) in {:.2?}",
        report.files,
        report.entity_pages,
        report.bytes,
        report.bytes as f64 / (1024.0 * 1024.0),
        start.elapsed()
    );
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
