//! The MCP server in process: a client and the server over a duplex pipe, and the HTTP router
//! over a real loopback socket.

use kubewhy_engine::knowledge::{self, SourceFile};
use kubewhy_engine::Engine;
use kubewhy_mcp::KubewhyServer;
use rmcp::model::{
    ArgumentInfo, CallToolRequestParams, CallToolResult, CompleteRequestParams, GetPromptRequestParams, JsonObject, PaginatedRequestParams, ReadResourceRequestParams, Reference,
    ResourceContents,
};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};
use std::sync::{Arc, OnceLock};

fn builtin() -> Vec<SourceFile> {
    knowledge::sources_from(kubewhy_knowledge::files())
}

/// The engine over the built-in knowledge, loaded once per test binary.
fn engine() -> Arc<Engine> {
    static ENGINE: OnceLock<Arc<Engine>> = OnceLock::new();
    ENGINE.get_or_init(|| Arc::new(Engine::from_sources(builtin()).expect("built-in knowledge loads").0)).clone()
}

async fn client() -> RunningService<RoleClient, ()> {
    let (server_side, client_side) = tokio::io::duplex(1 << 20);
    let server = KubewhyServer::new(engine());
    tokio::spawn(async move {
        if let Ok(s) = server.serve(server_side).await {
            let _ = s.waiting().await;
        }
    });
    ().serve(client_side).await.expect("client connects")
}

fn args(v: Value) -> JsonObject {
    v.as_object().cloned().expect("object")
}

async fn call(c: &RunningService<RoleClient, ()>, tool: &str, a: Value) -> CallToolResult {
    c.call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args(a))).await.expect("tools/call answers")
}

fn text(r: &CallToolResult) -> String {
    r.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect::<Vec<_>>().join("\n")
}

/// Asserts a successful call with structured content and Markdown text; returns the structured content.
fn check_ok(r: &CallToolResult) -> Value {
    assert_ne!(r.is_error, Some(true), "unexpected error: {}", text(r));
    assert!(!text(r).is_empty(), "no text content");
    r.structured_content.clone().expect("structured content")
}

/// Asserts an `isError` result whose message contains `needle`.
fn check_err(r: &CallToolResult, needle: &str) {
    assert_eq!(r.is_error, Some(true), "expected an error, got {}", text(r));
    assert!(text(r).contains(needle), "error {:?} does not mention {needle:?}", text(r));
}

#[tokio::test]
async fn server_info_and_tools() {
    let c = client().await;
    let info = c.peer_info().expect("server info");
    let server = info.server_info.clone().expect("server info");
    assert_eq!(server.name, "kubewhy");
    assert_eq!(server.version, env!("CARGO_PKG_VERSION"));
    let tools = c.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["diagnose", "explain", "search", "query_graph", "feature_gate", "kep", "metric", "check_claims"]);
    for t in &tools {
        let a = t.annotations.as_ref().expect("annotations");
        assert_eq!((a.read_only_hint, a.idempotent_hint, a.open_world_hint), (Some(true), Some(true), Some(false)), "{}", t.name);
        assert!(t.output_schema.is_some(), "{} has an output schema", t.name);
        let props = t.input_schema.get("properties").and_then(Value::as_object).expect("properties");
        for (name, p) in props {
            assert!(p.get("description").is_some(), "{}.{name} has a description", t.name);
        }
    }
    let d = tools.iter().find(|t| t.name == "diagnose").expect("diagnose");
    assert_eq!(d.input_schema.get("required"), Some(&json!(["symptom"])));
    assert!(d.input_schema["properties"]["symptom"].get("examples").is_some());
    c.cancel().await.ok();
}

/// Issue 15 (4): the default tool list (as `tools/list` sends it) costs every assistant
/// session; it stays under 8,000 characters with every argument documented.
#[tokio::test]
async fn issue15_tool_list_is_small() {
    let c = client().await;
    let tools = c.list_all_tools().await.expect("tools/list");
    let chars = serde_json::to_string(&tools).expect("json").chars().count();
    assert!(chars < 8_000, "the tool list is {chars} characters");
    for t in &tools {
        for (name, p) in t.input_schema.get("properties").and_then(Value::as_object).expect("properties") {
            assert!(p.get("description").and_then(Value::as_str).is_some_and(|d| d.len() >= 10), "{}.{name} is documented", t.name);
        }
    }
    c.cancel().await.ok();
}

/// Issue 15 (4): `explain` says what the entity is before its relations, and groups them.
#[tokio::test]
async fn issue15_explain_leads_with_the_description() {
    let c = client().await;
    let r = call(&c, "explain", json!({"id_or_name": "kubelet"})).await;
    let md = text(&r);
    let first_line = engine().explain("kubelet").expect("kubelet").entity.body.trim().lines().next().unwrap_or("").to_string();
    let body = md.find(&first_line).expect("body");
    let rels = md.find("## Relations").expect("relations");
    let loops = md.find("## Loops").expect("loops");
    assert!(body < loops && loops < rels, "description and loops before relations:\n{md}");
    let rel_lines = md[rels..].lines().take_while(|l| !l.starts_with("## References")).count();
    assert!(rel_lines < 25, "{rel_lines} relation lines:\n{md}");
    c.cancel().await.ok();
}

/// The tool definitions as sent on the wire: a schema change shows in review.
#[test]
fn tool_schemas_snapshot() {
    let server = KubewhyServer::new(engine());
    insta::assert_json_snapshot!("tools", server.tools());
}

#[tokio::test]
async fn diagnose_ranks_etcd_nospace_first_and_is_short() {
    let c = client().await;
    let r = call(&c, "diagnose", json!({"symptom": "etcdserver: mvcc: database space exceeded"})).await;
    let s = check_ok(&r);
    assert_eq!(s["candidates"][0]["id"], "failure-mode/etcd-nospace-alarm");
    assert_eq!(s["candidates"][0]["uri"], "kubewhy://failure-mode/etcd-nospace-alarm");
    assert!(s["candidates"].as_array().is_some_and(|a| a.len() <= 3));
    let brief = text(&r);
    assert!(brief.len() < 6000, "brief answer is {} chars", brief.len());
    let full = call(&c, "diagnose", json!({"symptom": "etcdserver: mvcc: database space exceeded", "detail": "full", "top": 5, "k8s_version": "1.30"})).await;
    let fs = check_ok(&full);
    assert_eq!(fs["k8s_version"], "1.30");
    assert!(text(&full).len() >= brief.len());
    c.cancel().await.ok();
}

#[tokio::test]
async fn every_tool_answers() {
    let c = client().await;
    let x = check_ok(&call(&c, "explain", json!({"id_or_name": "kubelet"})).await);
    assert_eq!(x["id"], "component/kubelet");
    let s = check_ok(&call(&c, "search", json!({"text": "crash loop", "kind": "failure-mode", "limit": 5})).await);
    assert!(s["hits"].as_array().is_some_and(|h| !h.is_empty() && h.len() <= 5));
    let q = check_ok(&call(&c, "query_graph", json!({"sparql": "SELECT ?fm WHERE { ?fm kw:inLoop ?l } LIMIT 3"})).await);
    assert_eq!(q["type"], "solutions");
    let ask = check_ok(&call(&c, "query_graph", json!({"sparql": "ASK { failure-mode:etcd-nospace-alarm ?p ?o }"})).await);
    assert_eq!(ask["boolean"], true);
    let g = check_ok(&call(&c, "feature_gate", json!({"name": "SidecarContainers", "version": "1.30"})).await);
    assert_eq!(g["name"], "SidecarContainers");
    let k = check_ok(&call(&c, "kep", json!({"query": "753"})).await);
    assert_eq!(k["keps"][0]["number"], 753);
    let m = check_ok(&call(&c, "metric", json!({"name": "etcd_mvcc_db_total_size_in_bytes"})).await);
    assert_eq!(m["name"], "etcd_mvcc_db_total_size_in_bytes");
    let cc = check_ok(&call(&c, "check_claims", json!({"text": "The SidecarContainers feature gate went beta in 1.29."})).await);
    assert!(cc["claims"].as_array().is_some_and(|a| !a.is_empty()));
    c.cancel().await.ok();
}

#[tokio::test]
async fn bad_arguments_are_tool_errors_naming_the_argument() {
    let c = client().await;
    check_err(&call(&c, "diagnose", json!({})).await, "symptom");
    check_err(&call(&c, "diagnose", json!({"symptom": "  "})).await, "symptom");
    check_err(&call(&c, "diagnose", json!({"symptom": "x", "top": 99})).await, "top");
    check_err(&call(&c, "diagnose", json!({"symptom": "x", "detail": "verbose"})).await, "detail");
    check_err(&call(&c, "diagnose", json!({"symptom": "x", "k8s_version": "latest"})).await, "k8s_version");
    check_err(&call(&c, "diagnose", json!({"symptom": "x", "colour": "red"})).await, "colour");
    check_err(&call(&c, "diagnose", json!({"symptom": "a".repeat(kubewhy_mcp::MAX_ARGUMENT_BYTES + 1)})).await, "1 MiB");
    check_err(&call(&c, "explain", json!({"id_or_name": "component/no-such-thing"})).await, "id_or_name");
    check_err(&call(&c, "search", json!({"text": "etcd", "kind": "widget"})).await, "kind");
    check_err(&call(&c, "query_graph", json!({"sparql": "DELETE WHERE { ?s ?p ?o }"})).await, "read-only");
    check_err(&call(&c, "query_graph", json!({"sparql": "SELEKT"})).await, "sparql");
    check_err(&call(&c, "feature_gate", json!({"name": "NoSuchGateAtAll"})).await, "name");
    check_err(&call(&c, "kep", json!({"query": 753})).await, "query");
    check_err(&call(&c, "metric", json!({"name": "no_such_metric_total"})).await, "name");
    check_err(&call(&c, "check_claims", json!({})).await, "text");
    // An unknown tool is a protocol error, and the server is still up afterwards.
    assert!(c.call_tool(CallToolRequestParams::new("nope")).await.is_err());
    check_ok(&call(&c, "diagnose", json!({"symptom": "CrashLoopBackOff"})).await);
    c.cancel().await.ok();
}

#[tokio::test]
async fn resources_are_paged_in_id_order_and_readable() {
    let c = client().await;
    let first = c.list_resources(None).await.expect("resources/list");
    assert_eq!(first.resources.len(), kubewhy_mcp::RESOURCE_PAGE_SIZE);
    let cursor = first.next_cursor.clone().expect("a second page");
    let second = c.list_resources(Some(PaginatedRequestParams::default().with_cursor(Some(cursor)))).await.expect("page 2");
    let uris: Vec<&str> = first.resources.iter().chain(&second.resources).map(|r| r.uri.as_str()).collect();
    let mut sorted = uris.clone();
    sorted.sort();
    assert_eq!(uris, sorted);
    let all = c.list_all_resources().await.expect("every page");
    assert!(all.iter().any(|r| r.uri == "kubewhy://failure-mode/etcd-nospace-alarm"));
    assert!(all.iter().all(|r| !r.uri.starts_with("kubewhy://kep/")), "generated entities are not listed");
    let read = c.read_resource(ReadResourceRequestParams::new("kubewhy://failure-mode/etcd-nospace-alarm")).await.expect("read");
    let ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else { panic!("text contents") };
    assert!(text.starts_with("# "), "{text}");
    assert!(text.contains("## Relations"));
    // Through the template, generated entities too.
    assert!(c.read_resource(ReadResourceRequestParams::new("kubewhy://kep/753")).await.is_ok());
    assert!(c.read_resource(ReadResourceRequestParams::new("kubewhy://component/nope")).await.is_err());
    let templates = c.list_all_resource_templates().await.expect("templates");
    assert_eq!(templates[0].uri_template, kubewhy_mcp::RESOURCE_TEMPLATE);
    c.cancel().await.ok();
}

#[tokio::test]
async fn prompts_and_completions() {
    let c = client().await;
    let prompts = c.list_all_prompts().await.expect("prompts/list");
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["diagnose_symptom", "explain_component", "review_answer"]);
    let p = c
        .get_prompt(GetPromptRequestParams::new("diagnose_symptom").with_arguments(args(json!({"symptom": "etcdserver: mvcc: database space exceeded"}))))
        .await
        .expect("prompts/get");
    let t = serde_json::to_string(&p.messages).expect("json");
    assert!(t.contains("failure-mode/etcd-nospace-alarm"));
    assert!(c.get_prompt(GetPromptRequestParams::new("explain_component")).await.is_err(), "a missing argument is refused");
    let done = c
        .complete(CompleteRequestParams::new(Reference::for_prompt("explain_component"), ArgumentInfo::new("component", "component/kube-s")))
        .await
        .expect("completion/complete");
    assert!(done.completion.values.iter().any(|v| v == "component/kube-scheduler"), "{:?}", done.completion.values);
    let slugs = c
        .complete(CompleteRequestParams::new(Reference::for_resource(kubewhy_mcp::RESOURCE_TEMPLATE), ArgumentInfo::new("slug", "Sidecar")).with_context(rmcp::model::CompletionContext::with_arguments(
            [("kind".to_string(), "feature-gate".to_string())].into_iter().collect(),
        )))
        .await
        .expect("template completion");
    assert!(slugs.completion.values.iter().any(|v| v == "SidecarContainers"), "{:?}", slugs.completion.values);
    c.cancel().await.ok();
}

#[tokio::test]
async fn concurrent_calls_on_one_session() {
    let c = Arc::new(client().await);
    let mut tasks = Vec::new();
    for _ in 0..16 {
        let c = c.clone();
        tasks.push(tokio::spawn(async move { call(&c, "diagnose", json!({"symptom": "0/3 nodes are available: 3 Insufficient cpu."})).await }));
    }
    for t in tasks {
        let r = t.await.expect("task");
        assert_eq!(check_ok(&r)["candidates"][0]["id"], "failure-mode/insufficient-resources");
    }
}

/// Issue 16: a 1 MB name to a lookup tool took 23-192 s; now refused at once, naming the
/// argument, and the limit is in the tool's input schema.
#[tokio::test]
async fn issue16_long_names_are_refused_naming_the_argument() {
    let c = client().await;
    let long = "a".repeat(1_000_000);
    let started = std::time::Instant::now();
    for (tool, arg) in [("explain", "id_or_name"), ("feature_gate", "name"), ("kep", "query"), ("metric", "name")] {
        let r = call(&c, tool, json!({ arg: long })).await;
        check_err(&r, &format!("argument `{arg}`"));
        check_err(&r, "at most 512 bytes");
        let listed = KubewhyServer::new(engine()).tools().iter().find(|t| t.name == tool).cloned().expect("tool");
        assert_eq!(listed.input_schema["properties"][arg]["maxLength"], 512, "{tool}");
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(10), "{:?}", started.elapsed());
    c.cancel().await.ok();
}

/// Issue 16: JSON-RPC error codes over stdio. Before the fix a line that is not JSON got no
/// reply, `params: 5` got -32600 without the id and bad `tools/call` params got -32601.
#[tokio::test]
async fn issue16_stdio_jsonrpc_errors_have_the_right_code_and_id() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let (server_side, client_side) = tokio::io::duplex(1 << 20);
    let (sr, sw) = tokio::io::split(server_side);
    let server = KubewhyServer::new(engine());
    tokio::spawn(async move {
        if let Ok(s) = server.serve(kubewhy_mcp::jsonrpc::StdioTransport::new(sr, sw)).await {
            let _ = s.waiting().await;
        }
    });
    let (cr, mut cw) = tokio::io::split(client_side);
    let mut lines = BufReader::new(cr).lines();
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let sent = [
        init,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "{not json",
        r#"{"jsonrpc":"2.0","id":"s1","method":"tools/call","params":5}"#,
        r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"nme":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":9,"method":"nosuch"}"#,
        r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"nope"}}"#,
        r#"{"jsonrpc":"2.0","id":11,"method":7}"#,
        "[1,2]",
        r#"{"jsonrpc":"2.0","method":"tools/call","params":5}"#,
        r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"explain","arguments":{"id_or_name":"component/etcd"}}}"#,
    ];
    for l in sent {
        cw.write_all(l.as_bytes()).await.expect("write");
        cw.write_all(b"\n").await.expect("write");
    }
    cw.flush().await.expect("flush");
    let mut got: Vec<Value> = Vec::new();
    let deadline = std::time::Duration::from_secs(30);
    while got.len() < 9 {
        let line = tokio::time::timeout(deadline, lines.next_line()).await.expect("a reply in time").expect("read").expect("a line");
        got.push(serde_json::from_str(&line).expect("replies are JSON"));
    }
    let by_id = |id: Value| got.iter().find(|v| v["id"] == id).unwrap_or_else(|| panic!("no reply with id {id}: {got:?}")).clone();
    let code = |v: &Value| v["error"]["code"].as_i64();
    let nulls: Vec<&Value> = got.iter().filter(|v| v["id"].is_null()).collect();
    assert_eq!(nulls.len(), 2, "parse error and batch: {nulls:?}");
    assert!(nulls.iter().any(|v| code(v) == Some(-32700)), "{nulls:?}");
    assert!(nulls.iter().any(|v| code(v) == Some(-32600)), "{nulls:?}");
    assert_eq!(code(&by_id(json!("s1"))), Some(-32602));
    let bad = by_id(json!(8));
    assert_eq!(code(&bad), Some(-32602), "{bad}");
    assert!(bad["error"]["message"].as_str().unwrap_or("").contains("name"), "{bad}");
    assert_eq!(code(&by_id(json!(9))), Some(-32601));
    assert_eq!(code(&by_id(json!(10))), Some(-32602));
    assert_eq!(code(&by_id(json!(11))), Some(-32600));
    assert!(by_id(json!(12))["result"].is_object(), "the session goes on after the errors");
}

mod http {
    use super::engine;
    use kubewhy_mcp::http::{router, HttpOptions};
    use tokio_util::sync::CancellationToken;

    async fn start(token: Option<&str>) -> (std::net::SocketAddr, CancellationToken) {
        let opts = HttpOptions { auth_token: token.map(str::to_string), ..HttpOptions::default() };
        start_with(opts).await
    }

    async fn start_with(mut opts: HttpOptions) -> (std::net::SocketAddr, CancellationToken) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        opts.listen = addr;
        let cancel = CancellationToken::new();
        let app = router(engine(), &opts, cancel.clone());
        tokio::spawn(kubewhy_mcp::http::serve_listener(listener, app, opts.max_connections, cancel.clone()));
        (addr, cancel)
    }

    /// A raw HTTP/1.1 request; returns the status code.
    async fn raw(addr: std::net::SocketAddr, method_path: &str, headers: &str, body: &str) -> u16 {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let req = format!("{method_path} HTTP/1.1\r\nContent-Length: {}\r\nConnection: close\r\n{headers}\r\n{body}", body.len());
        let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
        s.write_all(req.as_bytes()).await.expect("write");
        let mut buf = vec![0u8; 64];
        let n = s.read(&mut buf).await.expect("read");
        let head = String::from_utf8_lossy(&buf[..n]).to_string();
        head.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0)
    }

    /// Issue 16: the site's expensive routes get the Host/Origin policy and the token of `/mcp`.
    #[tokio::test]
    async fn issue16_site_routes_check_host_origin_and_token() {
        let (addr, cancel) = start(None).await;
        let form = "Content-Type: application/x-www-form-urlencoded\r\n";
        let ask = "query=ASK%20%7B%7D";
        assert_eq!(raw(addr, "POST /sparql", &format!("Host: {addr}\r\n{form}"), ask).await, 200);
        assert_eq!(raw(addr, "POST /sparql", &format!("Host: evil.example.com\r\n{form}"), ask).await, 403);
        assert_eq!(raw(addr, "POST /sparql", &format!("Host: {addr}\r\nOrigin: https://evil.example.com\r\n{form}"), ask).await, 403);
        assert_eq!(raw(addr, "POST /diagnose", &format!("Host: {addr}\r\nOrigin: https://evil.example.com\r\n{form}"), "q=x").await, 403);
        assert_eq!(raw(addr, "GET /", "Host: rebind.example.com:8787\r\n", "").await, 403);
        cancel.cancel();
        let (addr, cancel) = start(Some("s3cret")).await;
        assert_eq!(raw(addr, "POST /sparql", &format!("Host: {addr}\r\n{form}"), ask).await, 401);
        assert_eq!(raw(addr, "GET /", &format!("Host: {addr}\r\n"), "").await, 401);
        assert_eq!(raw(addr, "POST /sparql", &format!("Host: {addr}\r\nAuthorization: Bearer s3cret\r\n{form}"), ask).await, 200);
        cancel.cancel();
        let opts = HttpOptions { auth_token: Some("s3cret".into()), public_site: true, ..HttpOptions::default() };
        let (addr, cancel) = start_with(opts).await;
        assert_eq!(raw(addr, "GET /", &format!("Host: {addr}\r\n"), "").await, 200);
        assert_eq!(post(addr, "").await, 401, "/mcp keeps its token with --public-site");
        cancel.cancel();
    }

    /// Issue 16: the number of MCP sessions is capped.
    #[tokio::test]
    async fn issue16_sessions_are_capped() {
        let opts = HttpOptions { max_sessions: 2, ..HttpOptions::default() };
        let (addr, cancel) = start_with(opts).await;
        assert_eq!(post(addr, "").await, 200);
        assert_eq!(post(addr, "").await, 200);
        assert_eq!(post(addr, "").await, 503);
        // An escaped method name is still `initialize`.
        let escaped = r#"{"jsonrpc":"2.0","id":1,"method":"initializ\u0065","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
        assert_eq!(post_body(addr, "", escaped).await.0, 503);
        // A stateless request (revision 2026-07-28) opens no session: it passes the cap.
        let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"explain","arguments":{"id_or_name":"component/etcd"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
        let (status, body) = post_body(addr, "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: explain\r\n", call).await;
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("component/etcd"), "{body}");
        cancel.cancel();
    }

    /// A raw HTTP/1.1 POST to `/mcp`; returns the status and the body.
    async fn post_body(addr: std::net::SocketAddr, headers: &str, body: &str) -> (u16, String) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let req = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n{headers}\r\n{body}",
            body.len()
        );
        let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
        s.write_all(req.as_bytes()).await.expect("write");
        let mut buf = Vec::new();
        s.read_to_end(&mut buf).await.expect("read");
        let text = String::from_utf8_lossy(&buf).to_string();
        let status = text.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
        (status, text.split_once("\r\n\r\n").map(|x| x.1.to_string()).unwrap_or_default())
    }

    /// Issue 16: JSON-RPC error codes over HTTP. Before the fix a body that is not JSON got a
    /// plain-text 415 and bad `tools/call` params got -32601.
    #[tokio::test]
    async fn issue16_http_jsonrpc_errors_have_the_right_code_and_id() {
        let (addr, cancel) = start(None).await;
        let err = |body: &str| -> serde_json::Value { serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}")) };
        let (status, body) = post_body(addr, "", "{not json").await;
        assert_eq!(status, 400);
        let v = err(&body);
        assert_eq!(v["error"]["code"], -32700, "{v}");
        assert!(v["id"].is_null(), "{v}");
        let stateless = "MCP-Protocol-Version: 2026-07-28\r\n";
        let (status, body) = post_body(addr, stateless, r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":5}"#).await;
        assert_eq!(status, 400);
        let v = err(&body);
        assert_eq!((v["error"]["code"].as_i64(), v["id"].as_i64()), (Some(-32602), Some(3)), "{v}");
        let (status, body) = post_body(addr, stateless, r#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"nme":"diagnose"}}"#).await;
        assert_eq!(status, 400);
        let v = err(&body);
        assert_eq!((v["error"]["code"].as_i64(), v["id"].as_str()), (Some(-32602), Some("x")), "{v}");
        let (status, body) = post_body(addr, stateless, r#"{"jsonrpc":"1.0","id":4,"method":"ping"}"#).await;
        assert_eq!(status, 400);
        assert_eq!(err(&body)["error"]["code"], -32600);
        // A good initialize still opens a session.
        assert_eq!(post(addr, "").await, 200);
        cancel.cancel();
    }

    /// Beyond loopback, `serve` needs a token or the loudly named flag.
    #[test]
    fn non_loopback_needs_a_token() {
        use kubewhy_mcp::http::check_exposure;
        let open = HttpOptions { listen: "0.0.0.0:8787".parse().expect("addr"), ..HttpOptions::default() };
        let e = check_exposure(&open).expect_err("refused");
        assert!(e.to_string().contains("--insecure-no-auth-on-non-loopback"), "{e}");
        assert!(check_exposure(&HttpOptions { auth_token: Some("t".into()), ..open.clone() }).is_ok());
        assert!(check_exposure(&HttpOptions { insecure_no_auth_on_non_loopback: true, ..open.clone() }).is_ok());
        assert!(check_exposure(&HttpOptions::default()).is_ok());
    }

    /// A raw HTTP/1.1 POST of an initialize request; returns the status code.
    async fn post(addr: std::net::SocketAddr, extra_headers: &str) -> u16 {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
        let req = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n{extra_headers}\r\n{body}",
            body.len()
        );
        let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
        s.write_all(req.as_bytes()).await.expect("write");
        let mut buf = vec![0u8; 64];
        let n = s.read(&mut buf).await.expect("read");
        let head = String::from_utf8_lossy(&buf[..n]).to_string();
        head.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0)
    }

    #[tokio::test]
    async fn origin_host_and_token_are_checked() {
        let (addr, cancel) = start(None).await;
        assert_eq!(post(addr, "").await, 200);
        assert_eq!(post(addr, "Origin: http://localhost:3000\r\n").await, 200);
        assert_eq!(post(addr, "Origin: https://evil.example.com\r\n").await, 403);
        cancel.cancel();
        let (addr, cancel) = start(Some("s3cret")).await;
        assert_eq!(post(addr, "").await, 401);
        assert_eq!(post(addr, "Authorization: Bearer wrong\r\n").await, 401);
        assert_eq!(post(addr, "Authorization: Bearer s3cret\r\n").await, 200);
        cancel.cancel();
    }
}
