//! Load test of `kubewhy serve` with rmcp (the official Rust MCP SDK) as the client, loopback
//! only: prints figures, asserts nothing but that every call got an answer.
//!
//! Run: `cargo build --release -p kubewhy && cargo bench -p kubewhy-mcp --bench load`, with
//! options after `--`:
//! - `--sessions N` (default 100, at most 200) concurrent MCP sessions over streamable HTTP;
//! - `--calls M` (default 10, at most 100) `diagnose` calls made one after another in each;
//! - `--deadline S` (default 120) seconds for the whole run: sessions still running are cut and
//!   counted as errors;
//! - `--distinct`: every call diagnoses a different input (the `input` or `symptom` of each line
//!   of `evals/**/*.jsonl`: about 1,800 real and gold inputs, some of them whole `kubectl
//!   describe` outputs), so no answer is ever repeated; by default the calls cycle through five
//!   one-line symptoms, as `tests/mcp/load.py` does;
//! - `--stateless`: negotiate revision 2026-07-28 (`server/discover`, no session) instead of
//!   `initialize` with 2025-11-25 (a session per client, as most clients do today);
//! - `--url URL`: a running server's loopback `/mcp` URL; by default the bench starts
//!   `--bin BIN` (default `target/release/kubewhy`, or env `KUBEWHY_BIN`) on a free loopback
//!   port and stops it at the end.
//!
//! Prints: wall time and errors; p50/p99 of a call's round trip and of session set-up (from
//! nothing to a session ready for calls), in ms; calls per second; CPU time (user + system, from
//! `/proc/<pid>/stat`) of the client and of the server per 1,000 calls, in ms; the server's peak
//! RSS (`VmHWM`) when the bench started it. The server and this client share the machine's
//! cores, so the client's share is printed beside the server's.
//!
//! `tests/mcp/load.py` is the same load with the Python SDK.

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use kubewhy_e2e::procfs::{cpu_time, peak_rss_kib};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const SYMPTOMS: [&str; 5] = [
    "etcdserver: mvcc: database space exceeded",
    "0/3 nodes are available: 3 Insufficient cpu.",
    "Back-off restarting failed container",
    "Liveness probe failed: HTTP probe failed with statuscode: 404",
    "MountVolume.SetUp failed for volume \"data\" : secret \"db-creds\" not found",
];

struct Options {
    sessions: usize,
    calls: usize,
    deadline: Duration,
    stateless: bool,
    distinct: bool,
    url: Option<String>,
    bin: PathBuf,
}

fn options() -> anyhow::Result<Options> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut o = Options {
        sessions: 100,
        calls: 10,
        deadline: Duration::from_secs(120),
        stateless: false,
        distinct: false,
        url: None,
        bin: std::env::var_os("KUBEWHY_BIN")
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join("target/release/kubewhy")),
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .ok_or_else(|| anyhow::anyhow!("{name} needs a value"))
        };
        match a.as_str() {
            "--bench" => {}
            "--sessions" => o.sessions = value("--sessions")?.parse::<usize>().map_err(|e| anyhow::anyhow!("--sessions: {e}"))?.clamp(1, 200),
            "--calls" => o.calls = value("--calls")?.parse::<usize>().map_err(|e| anyhow::anyhow!("--calls: {e}"))?.clamp(1, 100),
            "--deadline" => o.deadline = Duration::from_secs_f64(value("--deadline")?.parse::<f64>().map_err(|e| anyhow::anyhow!("--deadline: {e}"))?.clamp(1.0, 600.0)),
            "--stateless" => o.stateless = true,
            "--distinct" => o.distinct = true,
            "--url" => o.url = Some(value("--url")?),
            "--bin" => o.bin = PathBuf::from(value("--bin")?),
            other => anyhow::bail!("unknown argument {other:?} (expected --sessions N, --calls M, --deadline S, --distinct, --stateless, --url URL, --bin BIN)"),
        }
    }
    Ok(o)
}

fn percentile(values: &mut [f64], p: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    values[(((values.len() - 1) as f64) * p).round() as usize]
}

/// Stops the server the bench started, even when the bench fails.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_server(bin: &PathBuf) -> anyhow::Result<(Server, String)> {
    if !bin.is_file() {
        anyhow::bail!("{} does not exist: build it with `cargo build --release -p kubewhy`, or pass --bin BIN or --url URL", bin.display());
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let child = Command::new(bin)
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| anyhow::anyhow!("cannot start {}: {e}", bin.display()))?;
    let server = Server(child);
    let start = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if start.elapsed() > Duration::from_secs(30) {
            anyhow::bail!(
                "{} serve did not listen on 127.0.0.1:{port} within 30 s",
                bin.display()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok((server, format!("http://127.0.0.1:{port}/mcp")))
}

/// The `input` or `symptom` of every line of the `.jsonl` files under `dir`, each once, in file
/// and line order.
fn eval_inputs(dir: &std::path::Path) -> anyhow::Result<Vec<String>> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).map_err(|e| anyhow::anyhow!("{}: {e}", d.display()))? {
            let p = e?.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut seen = std::collections::HashSet::new();
    let mut inputs = Vec::new();
    for f in files {
        let text =
            std::fs::read_to_string(&f).map_err(|e| anyhow::anyhow!("{}: {e}", f.display()))?;
        for (n, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let v: serde_json::Value = serde_json::from_str(line)
                .map_err(|e| anyhow::anyhow!("{}:{}: {e}", f.display(), n + 1))?;
            for k in ["input", "symptom"] {
                if let Some(s) = v
                    .get(k)
                    .and_then(serde_json::Value::as_str)
                    .filter(|s| !s.trim().is_empty())
                {
                    if seen.insert(s.to_string()) {
                        inputs.push(s.to_string());
                    }
                }
            }
        }
    }
    Ok(inputs)
}

#[derive(Default)]
struct Figures {
    setup_ms: Vec<f64>,
    call_ms: Vec<f64>,
    errors: Vec<String>,
}

async fn session(
    url: String,
    inputs: Arc<Vec<String>>,
    first: usize,
    calls: usize,
    stateless: bool,
    figures: Arc<Mutex<Figures>>,
) {
    let started = Instant::now();
    let transport = StreamableHttpClientTransport::from_uri(url);
    let config = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("kubewhy-load", env!("CARGO_PKG_VERSION")),
    );
    let lifecycle = if stateless {
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        }
    } else {
        ClientLifecycleMode::Initialize
    };
    let config = if stateless {
        config
    } else {
        config.with_protocol_version(ProtocolVersion::V_2025_11_25)
    };
    let client = match config.serve_with_lifecycle(transport, lifecycle).await {
        Ok(c) => c,
        Err(e) => {
            figures
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .errors
                .push(format!("set-up: {e}"));
            return;
        }
    };
    figures
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .setup_ms
        .push(started.elapsed().as_secs_f64() * 1e3);
    for i in 0..calls {
        let mut arguments = serde_json::Map::new();
        arguments.insert(
            "symptom".into(),
            inputs[(first + i) % inputs.len()].clone().into(),
        );
        let t = Instant::now();
        let result = client
            .call_tool(CallToolRequestParams::new("diagnose").with_arguments(arguments))
            .await;
        let took = t.elapsed().as_secs_f64() * 1e3;
        let mut f = figures
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match result {
            Ok(r) if r.is_error != Some(true) && !r.content.is_empty() => f.call_ms.push(took),
            Ok(_) => f.errors.push("tool error or empty answer".into()),
            Err(e) => f.errors.push(format!("call: {e}")),
        }
    }
    let _ = client.cancel().await;
}

fn main() -> anyhow::Result<()> {
    let o = options()?;
    let (server, url) = match &o.url {
        Some(url) => {
            let host = url
                .split("://")
                .nth(1)
                .and_then(|r| r.split('/').next())
                .unwrap_or("");
            let host = host.rsplit_once(':').map_or(host, |(h, _)| h);
            if !matches!(host, "127.0.0.1" | "localhost" | "[::1]") {
                anyhow::bail!("--url {url:?}: the load test targets loopback only");
            }
            (None, url.clone())
        }
        None => {
            let (s, url) = start_server(&o.bin)?;
            (Some(s), url)
        }
    };
    let server_pid = server.as_ref().map(|s| s.0.id());
    let inputs: Arc<Vec<String>> = Arc::new(if o.distinct {
        eval_inputs(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../evals"))?
    } else {
        SYMPTOMS.iter().map(|s| s.to_string()).collect()
    });
    let cpu = |pid: Option<u32>| pid.and_then(cpu_time);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let figures = Arc::new(Mutex::new(Figures::default()));
    let (client0, server0) = (cpu_time("self"), cpu(server_pid));
    let start = Instant::now();
    let cut = rt.block_on(async {
        let tasks: Vec<_> = (0..o.sessions)
            .map(|s| {
                tokio::spawn(session(
                    url.clone(),
                    inputs.clone(),
                    if o.distinct { s * o.calls } else { 0 },
                    o.calls,
                    o.stateless,
                    figures.clone(),
                ))
            })
            .collect();
        let all = async {
            for t in tasks {
                let _ = t.await;
            }
        };
        tokio::time::timeout(o.deadline, all).await.is_err()
    });
    let wall = start.elapsed();
    let (client1, server1) = (cpu_time("self"), cpu(server_pid));
    rt.shutdown_timeout(Duration::from_secs(5));
    let mut f = std::mem::take(
        &mut *figures
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    if cut {
        f.errors
            .push(format!("deadline of {:?} reached", o.deadline));
    }
    let n = f.call_ms.len();
    println!(
        "{} sessions x {} diagnose calls ({}; {}) in {:.1} s: {:.0} calls/s; errors: {}",
        o.sessions,
        o.calls,
        if o.distinct {
            format!("each a different input of {}", inputs.len())
        } else {
            format!("cycling through {} symptoms", inputs.len())
        },
        if o.stateless {
            "2026-07-28, stateless"
        } else {
            "2025-11-25, a session each"
        },
        wall.as_secs_f64(),
        n as f64 / wall.as_secs_f64(),
        f.errors.len()
    );
    println!(
        "call   p50 {:8.1} ms   p99 {:8.1} ms   (n={n})",
        percentile(&mut f.call_ms, 0.5),
        percentile(&mut f.call_ms, 0.99)
    );
    let s = f.setup_ms.len();
    println!(
        "set-up p50 {:8.1} ms   p99 {:8.1} ms   (n={s})",
        percentile(&mut f.setup_ms, 0.5),
        percentile(&mut f.setup_ms, 0.99)
    );
    let per_1000 = |a: Option<Duration>, b: Option<Duration>| match (a, b) {
        (Some(a), Some(b)) if n > 0 => {
            format!("{:.0} ms", (b - a).as_secs_f64() * 1e3 * 1000.0 / n as f64)
        }
        _ => "n/a".into(),
    };
    println!(
        "CPU per 1,000 calls (set-up included): client {}, server {}",
        per_1000(client0, client1),
        per_1000(server0, server1)
    );
    if let Some(pid) = server_pid {
        println!(
            "server peak RSS {} KiB",
            peak_rss_kib(pid).map_or("n/a".into(), |k| k.to_string())
        );
    }
    let mut distinct = f.errors.clone();
    distinct.sort();
    distinct.dedup();
    for e in distinct.iter().take(5) {
        println!("  error: {e}");
    }
    drop(server);
    if f.errors.is_empty() {
        Ok(())
    } else {
        anyhow::bail!("{} errors", f.errors.len())
    }
}
