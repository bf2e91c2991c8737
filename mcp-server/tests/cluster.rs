//! The cluster tools over MCP in process: offered only with cluster access, read-only
//! (open-world for a live cluster), answering from the test API server through a kubeconfig,
//! redacted with `redact`, never showing the token.

use kubewhy_cluster::live::LiveOptions;
use kubewhy_e2e::apiserver::{Options, TestApiServer};
use kubewhy_e2e::scenarios;
use kubewhy_engine::knowledge;
use kubewhy_engine::Engine;
use kubewhy_mcp::cluster::ClusterAccess;
use kubewhy_mcp::KubewhyServer;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};
use std::sync::{Arc, OnceLock};

fn engine() -> Arc<Engine> {
    static ENGINE: OnceLock<Arc<Engine>> = OnceLock::new();
    ENGINE.get_or_init(|| Arc::new(Engine::from_sources(knowledge::sources_from(kubewhy_knowledge::files())).expect("knowledge loads").0)).clone()
}

async fn access(server: &TestApiServer, name: &str, redact: bool) -> Arc<ClusterAccess> {
    let dir = std::env::temp_dir().join(format!("kubewhy-mcp-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let kc = server.kubeconfig(&dir, "shop");
    let cluster = kubewhy_cluster::source::open(None, &LiveOptions { kubeconfig: Some(kc), ..LiveOptions::default() }).await.expect("opens");
    Arc::new(ClusterAccess { cluster, redact })
}

async fn client(server: KubewhyServer) -> RunningService<RoleClient, ()> {
    let (server_side, client_side) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(s) = server.serve(server_side).await {
            let _ = s.waiting().await;
        }
    });
    ().serve(client_side).await.expect("client connects")
}

async fn call(c: &RunningService<RoleClient, ()>, tool: &str, a: Value) -> CallToolResult {
    c.call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(a.as_object().cloned().expect("object"))).await.expect("answers")
}

fn text(r: &CallToolResult) -> String {
    r.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect::<Vec<_>>().join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_tools_only_with_access() {
    let plain = client(KubewhyServer::new(engine())).await;
    let names: Vec<String> = plain.list_all_tools().await.expect("tools").iter().map(|t| t.name.to_string()).collect();
    assert!(!names.iter().any(|n| n.ends_with("_cluster")), "{names:?}");
    let r = plain.call_tool(CallToolRequestParams::new("scan_cluster")).await;
    assert!(r.is_err(), "an unknown tool without cluster access");
    plain.cancel().await.ok();

    let api = TestApiServer::start(scenarios::lab(), Options::default());
    let c = client(KubewhyServer::with_cluster(engine(), Some(access(&api, "tools", false).await))).await;
    let tools = c.list_all_tools().await.expect("tools");
    for name in ["verify_cluster", "scan_cluster"] {
        let t = tools.iter().find(|t| t.name == name).expect("offered");
        let a = t.annotations.as_ref().expect("annotations");
        assert_eq!((a.read_only_hint, a.destructive_hint, a.open_world_hint), (Some(true), Some(false), Some(true)), "{name}");
        assert!(t.output_schema.is_some());
    }
    c.cancel().await.ok();
}

#[test]
fn cluster_tool_schemas_snapshot() {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let api = TestApiServer::start(scenarios::healthy(), Options::default());
    let server = rt.block_on(async { KubewhyServer::with_cluster(engine(), Some(access(&api, "schema", false).await)) });
    let cluster: Vec<_> = server.tools().iter().filter(|t| t.name.ends_with("_cluster")).cloned().collect();
    insta::assert_json_snapshot!("cluster_tools", cluster);
}

/// Issue 15 (1): `scan_cluster {}` over a snapshot reads every namespace and says so first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue15_scan_cluster_of_a_snapshot_states_its_scope() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/cluster/wffc-deadlock");
    let cluster = kubewhy_cluster::source::open(Some(&dir), &LiveOptions::default()).await.expect("snapshot opens");
    let c = client(KubewhyServer::with_cluster(engine(), Some(Arc::new(ClusterAccess { cluster, redact: false })))).await;
    let r = call(&c, "scan_cluster", json!({})).await;
    let v = r.structured_content.clone().expect("structured");
    assert!(v["scope"].as_str().is_some_and(|s| s.starts_with("every namespace of snapshot")), "{v}");
    let fms: Vec<&str> = v["findings"].as_array().expect("findings").iter().filter_map(|f| f["failure_mode"].as_str()).collect();
    assert!(fms.contains(&"failure-mode/wffc-pvc-pod-unschedulable-deadlock"), "{fms:?}");
    assert!(text(&r).starts_with("# Cluster scan\n\nScope: every namespace of snapshot"), "{}", text(&r));
    let r = call(&c, "scan_cluster", json!({"namespace": "default"})).await;
    let v = r.structured_content.clone().expect("structured");
    assert!(v["conclusion"].as_str().is_some_and(|s| s.contains("no failure mode found in namespace default") && s.contains("other namespaces")), "{v}");
    c.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scan_and_verify_over_mcp() {
    let api = TestApiServer::start(scenarios::lab(), Options::default());
    let c = client(KubewhyServer::with_cluster(engine(), Some(access(&api, "calls", false).await))).await;
    let r = call(&c, "scan_cluster", json!({"all_namespaces": true})).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    let v = r.structured_content.clone().expect("structured");
    let fms: Vec<&str> = v["findings"].as_array().expect("findings").iter().filter_map(|f| f["failure_mode"].as_str()).collect();
    for fm in ["failure-mode/insufficient-resources", "failure-mode/liveness-probe-wrong-path", "failure-mode/service-selector-mismatch"] {
        assert!(fms.contains(&fm), "{fm} in {fms:?}");
    }
    assert!(text(&r).contains("# Cluster scan"));
    let r = call(&c, "verify_cluster", json!({"object": "pod/checkout-0", "namespace": "shop"})).await;
    let v = r.structured_content.clone().expect("structured");
    assert_eq!(v["candidates"][0]["id"], "failure-mode/insufficient-resources", "{}", text(&r));
    assert_eq!(v["candidates"][0]["evidence"], "holds");
    let r = call(&c, "verify_cluster", json!({"object": "secret/db"})).await;
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("argument `object`"), "{}", text(&r));
    let r = call(&c, "verify_cluster", json!({})).await;
    assert_eq!(r.is_error, Some(true));
    for req in api.requests() {
        assert_eq!(req.method, "GET");
        assert!(!req.path.contains("secrets"), "{req:?}");
    }
    c.cancel().await.ok();

    let c = client(KubewhyServer::with_cluster(engine(), Some(access(&api, "redact", true).await))).await;
    let r = call(&c, "scan_cluster", json!({"all_namespaces": true})).await;
    let all = format!("{}{}", text(&r), r.structured_content.clone().unwrap_or_default());
    for s in ["checkout-0", "web-5c8", "worker-1", "shop", "10.0.0.11", "127.0.0.1", api.token()] {
        assert!(!all.contains(s), "`{s}` leaked: {all}");
    }
    c.cancel().await.ok();
}
