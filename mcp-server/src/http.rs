//! Streamable HTTP: an axum router serving MCP at `/mcp` and the reference site beside it.
//!
//! - `Host` is checked against loopback names (plus the listen address and any configured
//!   hosts) and `Origin`, when present, against loopback origins (plus configured ones), on every
//!   route (the site's `/sparql` and `/diagnose` too); a request failing either gets 403
//!   (DNS-rebinding and cross-site form protection).
//! - With a token configured, every request needs `Authorization: Bearer <token>`; others get
//!   401 with `WWW-Authenticate: Bearer`. [`HttpOptions::public_site`] opens the read-only site
//!   (pages, `/sparql`, `/diagnose`) without it; `/mcp` always needs it.
//! - [`serve`] refuses to listen beyond loopback without a token unless
//!   [`HttpOptions::insecure_no_auth_on_non_loopback`] is set.
//! - The server defends itself (issue 16): request headers must arrive within
//!   [`HEADER_TIMEOUT`] (also on an idle kept-alive connection), a request body within
//!   [`BODY_TIMEOUT`], a response must start within [`RESPONSE_TIMEOUT`]; at most
//!   [`HttpOptions::max_connections`] connections and [`HttpOptions::max_sessions`] MCP sessions
//!   are held (more get 503); sockets are `TCP_NODELAY`.
//! - Clients negotiating the 2025-11-25 revision (or older) get a session (`Mcp-Session-Id`);
//!   requests of the 2026-07-28 revision are served statelessly (rmcp routes them by version).

use crate::KubewhyServer;
use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use kubewhy_engine::Engine;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Time a client has to send a request's headers (and, on a kept-alive connection, to start the
/// next request) before the connection is closed.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Time a client has to send a request's whole body; slower requests get 408.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(20);
/// Time the server has to start a response; slower requests get 503.
pub const RESPONSE_TIMEOUT: Duration = Duration::from_secs(120);
/// Largest request body, in bytes (an MCP message with a 1 MiB argument, or a site form).
pub const MAX_BODY_BYTES: usize = crate::MAX_ARGUMENT_BYTES + 64 * 1024;

/// Options of the HTTP server.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Address to listen on (default `127.0.0.1:8787`).
    pub listen: SocketAddr,
    /// Bearer token every request must carry, when set.
    pub auth_token: Option<String>,
    /// Origins allowed besides the loopback ones (`https://app.example.com:443`).
    pub allowed_origins: Vec<String>,
    /// `Host` names allowed besides the loopback ones and the listen address.
    pub allowed_hosts: Vec<String>,
    /// Public base URL of the reference site (normalised): MCP answers link entity pages under
    /// it, and the site's links start with its path.
    pub base_url: Option<String>,
    /// With a token set: serve the read-only site (pages, `/sparql`, `/diagnose`) without it.
    /// `/mcp` always needs the token.
    pub public_site: bool,
    /// Listen on a non-loopback address without a token (refused otherwise).
    pub insecure_no_auth_on_non_loopback: bool,
    /// Most MCP sessions held at once (default 1,000); `initialize` beyond gets 503.
    pub max_sessions: usize,
    /// Most open connections (default 512); more are closed at once.
    pub max_connections: usize,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            listen: SocketAddr::from(([127, 0, 0, 1], 8787)),
            auth_token: None,
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            base_url: None,
            public_site: false,
            insecure_no_auth_on_non_loopback: false,
            max_sessions: 1_000,
            max_connections: 512,
        }
    }
}

/// Origins allowed by default: loopback pages on any port.
pub const LOOPBACK_ORIGINS: [&str; 6] = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*", "https://localhost:*", "https://127.0.0.1:*", "https://[::1]:*"];

/// The router: MCP at `/mcp` and the reference site ([`crate::site::router`]: pages, `/sparql`)
/// beside it, every route behind the Host/Origin check, the bearer-token check when a token is
/// set (the site excepted with [`HttpOptions::public_site`]), the body and response time limits
/// and the session cap.
pub fn router(engine: Arc<Engine>, opts: &HttpOptions, cancel: CancellationToken) -> Router {
    router_with(engine, None, opts, cancel)
}

/// [`router`] with cluster access (adds `verify_cluster` and `scan_cluster`).
pub fn router_with(engine: Arc<Engine>, cluster: Option<Arc<crate::cluster::ClusterAccess>>, opts: &HttpOptions, cancel: CancellationToken) -> Router {
    let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
    let ip = opts.listen.ip();
    if !ip.is_unspecified() && !ip.is_loopback() {
        hosts.push(ip.to_string());
    }
    hosts.extend(opts.allowed_hosts.iter().cloned());
    let mut origins: Vec<String> = LOOPBACK_ORIGINS.iter().map(|s| s.to_string()).collect();
    origins.extend(opts.allowed_origins.iter().cloned());
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts.clone())
        .with_allowed_origins(origins.clone())
        .enforce_origin_validation()
        .with_max_request_body_bytes(MAX_BODY_BYTES)
        .with_cancellation_token(cancel);
    let server = KubewhyServer::with_cluster(engine.clone(), cluster).with_base_url(opts.base_url.clone());
    let sessions = Arc::new(LocalSessionManager::default());
    let service = StreamableHttpService::new(move || Ok(server.clone()), sessions.clone(), config);
    let token: Arc<Option<String>> = Arc::new(opts.auth_token.clone().filter(|t| !t.is_empty()));
    let site_token: Arc<Option<String>> = if opts.public_site { Arc::new(None) } else { token.clone() };
    let cap = Arc::new(SessionCap { sessions, max: opts.max_sessions });
    let mcp = Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn(check_jsonrpc))
        .layer(axum::middleware::from_fn(closed_session_no_content))
        .layer(axum::middleware::from_fn_with_state(cap, cap_sessions))
        .layer(axum::middleware::from_fn_with_state(token, require_token));
    let site = crate::site::router(engine, &crate::site::SiteOptions { base_url: opts.base_url.clone() }).layer(axum::middleware::from_fn_with_state(site_token, require_token));
    let policy = Arc::new(Policy { hosts, origins });
    mcp.merge(site).layer(axum::middleware::from_fn(limit_time)).layer(axum::middleware::from_fn_with_state(policy, check_host_origin))
}

/// The MCP session manager and its cap.
struct SessionCap {
    sessions: Arc<LocalSessionManager>,
    max: usize,
}

/// A request that would open a session (a POST of `initialize` without `Mcp-Session-Id`) gets
/// 503 while [`HttpOptions::max_sessions`] sessions are held. Stateless requests (revision
/// 2026-07-28) open no session and pass.
async fn cap_sessions(State(cap): State<Arc<SessionCap>>, request: Request, next: Next) -> Response {
    if request.method() == axum::http::Method::POST && !request.headers().contains_key("mcp-session-id") {
        let held = cap.sessions.sessions.read().await.len();
        if held >= cap.max {
            // Only now look at the body (already in memory, see `limit_time`): is it `initialize`?
            let (parts, body) = request.into_parts();
            let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY_BYTES).await else {
                return (StatusCode::PAYLOAD_TOO_LARGE, format!("the request body is larger than {MAX_BODY_BYTES} bytes or was cut off\n")).into_response();
            };
            #[derive(serde::Deserialize)]
            struct Method {
                // Owned: an escaped "initialize" must not slip past the cap.
                method: Option<String>,
            }
            let opens = serde_json::from_slice::<Method>(&bytes).ok().and_then(|m| m.method).as_deref() == Some("initialize");
            if opens {
                tracing::warn!(held, "MCP session cap reached");
                return (StatusCode::SERVICE_UNAVAILABLE, [(header::RETRY_AFTER, "10")], format!("too many MCP sessions ({held}); close one (DELETE /mcp) or try again later\n")).into_response();
            }
            return next.run(Request::from_parts(parts, axum::body::Body::from(bytes))).await;
        }
    }
    next.run(request).await
}

/// A POSTed MCP message that is not JSON, not a JSON-RPC request, or a known method with params
/// that do not fit gets 400 with a JSON-RPC error (`-32700`, `-32600`, `-32601`, `-32602`; the
/// request's `id` when readable) instead of rmcp's plain-text 415 or `-32601`
/// ([`crate::jsonrpc::check`]). The body is already in memory ([`limit_time`]).
async fn check_jsonrpc(request: Request, next: Next) -> Response {
    if request.method() != axum::http::Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_BODY_BYTES).await {
        Ok(b) => b,
        Err(_) => return (StatusCode::PAYLOAD_TOO_LARGE, format!("the request body is larger than {MAX_BODY_BYTES} bytes or was cut off\n")).into_response(),
    };
    if let crate::jsonrpc::Checked::Reply(v) = crate::jsonrpc::check(&bytes) {
        return (StatusCode::BAD_REQUEST, [(header::CONTENT_TYPE, "application/json")], v.to_string()).into_response();
    }
    next.run(Request::from_parts(parts, axum::body::Body::from(bytes))).await
}

/// A `DELETE /mcp` that closed its session answers 204 No Content instead of rmcp's 202: the
/// official Python SDK counts only 200 and 204 as a closed session and logs "Session termination
/// failed: 202" at the end of every session otherwise (`mcp/client/streamable_http.py`,
/// `terminate_session`). The MCP specification names no status for it; 202 Accepted says the
/// work is still to be done, which it is not.
async fn closed_session_no_content(request: Request, next: Next) -> Response {
    let delete = request.method() == axum::http::Method::DELETE;
    let mut response = next.run(request).await;
    if delete && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
        *response.body_mut() = axum::body::Body::empty();
        response.headers_mut().remove(header::CONTENT_LENGTH);
    }
    response
}

/// Allowed `Host` names and `Origin` patterns (`scheme://host:port`, `:*` for any port).
struct Policy {
    hosts: Vec<String>,
    origins: Vec<String>,
}

/// The host name of a `Host` header value (`[::1]:8787` -> `::1`, `localhost:80` -> `localhost`).
fn host_name(host: &str) -> &str {
    let host = host.trim();
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or("");
    }
    match host.rsplit_once(':') {
        Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => h,
        _ => host,
    }
}

/// Whether `origin` (`scheme://host[:port]`) matches `pattern` (`scheme://host:port` or `:*`).
fn origin_matches(origin: &str, pattern: &str) -> bool {
    let origin = origin.trim().trim_end_matches('/').to_ascii_lowercase();
    let pattern = pattern.trim().trim_end_matches('/').to_ascii_lowercase();
    if origin == pattern {
        return true;
    }
    match pattern.strip_suffix(":*") {
        Some(base) => origin == base || origin.strip_prefix(base).and_then(|r| r.strip_prefix(':')).is_some_and(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit())),
        None => false,
    }
}

async fn check_host_origin(State(policy): State<Arc<Policy>>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok()).or_else(|| request.uri().host());
    let host_ok = host.map(host_name).is_some_and(|h| policy.hosts.iter().any(|a| a.eq_ignore_ascii_case(h) || a.trim_start_matches('[').trim_end_matches(']').eq_ignore_ascii_case(h)));
    if !host_ok {
        return (StatusCode::FORBIDDEN, "this Host is not allowed (DNS-rebinding protection): use a loopback name or add it with --allow-host\n").into_response();
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let ok = origin.to_str().ok().is_some_and(|o| policy.origins.iter().any(|p| origin_matches(o, p)));
        if !ok {
            return (StatusCode::FORBIDDEN, "this Origin is not allowed (cross-site request): add it with --allow-origin\n").into_response();
        }
    }
    next.run(request).await
}

/// Reads a request body within [`BODY_TIMEOUT`] and [`MAX_BODY_BYTES`], and gives the handler
/// [`RESPONSE_TIMEOUT`] to start its response.
async fn limit_time(request: Request, next: Next) -> Response {
    let has_body = request.headers().contains_key(header::CONTENT_LENGTH) || request.headers().contains_key(header::TRANSFER_ENCODING);
    let request = if has_body {
        let (parts, body) = request.into_parts();
        match tokio::time::timeout(BODY_TIMEOUT, axum::body::to_bytes(body, MAX_BODY_BYTES)).await {
            Ok(Ok(bytes)) => Request::from_parts(parts, axum::body::Body::from(bytes)),
            Ok(Err(_)) => return (StatusCode::PAYLOAD_TOO_LARGE, format!("the request body is larger than {MAX_BODY_BYTES} bytes or was cut off\n")).into_response(),
            Err(_) => return (StatusCode::REQUEST_TIMEOUT, format!("the request body did not arrive within {}s\n", BODY_TIMEOUT.as_secs())).into_response(),
        }
    } else {
        request
    };
    match tokio::time::timeout(RESPONSE_TIMEOUT, next.run(request)).await {
        Ok(r) => r,
        Err(_) => (StatusCode::SERVICE_UNAVAILABLE, format!("no answer within {}s\n", RESPONSE_TIMEOUT.as_secs())).into_response(),
    }
}

/// Compares in time independent of where the first difference is.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn require_token(State(token): State<Arc<Option<String>>>, request: Request, next: Next) -> Response {
    if let Some(expected) = token.as_ref() {
        let given = request.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")));
        if !given.is_some_and(|g| same(g.trim().as_bytes(), expected.as_bytes())) {
            return (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, "Bearer")], "missing or wrong bearer token\n").into_response();
        }
    }
    next.run(request).await
}

/// Binds `opts.listen`, calls `on_ready` with the bound address and serves until Ctrl-C (or
/// SIGTERM).
///
/// # Errors
/// The address is not loopback and no token is set (without
/// [`HttpOptions::insecure_no_auth_on_non_loopback`]), the address cannot be bound, or serving
/// failed.
pub async fn serve(engine: Arc<Engine>, opts: HttpOptions, on_ready: impl FnOnce(SocketAddr)) -> anyhow::Result<()> {
    serve_with(engine, None, opts, on_ready).await
}

/// Refuses a non-loopback listen address without a token (unless explicitly allowed).
///
/// # Errors
/// A message naming the address and the two ways out.
pub fn check_exposure(opts: &HttpOptions) -> anyhow::Result<()> {
    let has_token = opts.auth_token.as_deref().is_some_and(|t| !t.is_empty());
    if !opts.listen.ip().is_loopback() && !has_token && !opts.insecure_no_auth_on_non_loopback {
        anyhow::bail!(
            "refusing to listen on {} (beyond loopback) without a bearer token: set one with --auth-token-file FILE or env KUBEWHY_AUTH_TOKEN, or pass --insecure-no-auth-on-non-loopback to serve anyone who can reach the address",
            opts.listen
        );
    }
    Ok(())
}

/// [`serve`] with cluster access (adds `verify_cluster` and `scan_cluster`).
///
/// # Errors
/// As [`serve`].
pub async fn serve_with(engine: Arc<Engine>, cluster: Option<Arc<crate::cluster::ClusterAccess>>, opts: HttpOptions, on_ready: impl FnOnce(SocketAddr)) -> anyhow::Result<()> {
    check_exposure(&opts)?;
    if !opts.listen.ip().is_loopback() && opts.auth_token.is_none() {
        tracing::warn!(listen = %opts.listen, "serving beyond loopback WITHOUT a bearer token (--insecure-no-auth-on-non-loopback)");
    }
    let listener = tokio::net::TcpListener::bind(opts.listen).await.map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", opts.listen))?;
    let addr = listener.local_addr()?;
    let cancel = CancellationToken::new();
    let app = router_with(engine, cluster, &opts, cancel.clone());
    tracing::info!(%addr, auth = opts.auth_token.is_some(), "serving MCP over streamable HTTP at /mcp and the reference site at /");
    on_ready(addr);
    let stop = cancel.clone();
    tokio::spawn(async move {
        shutdown_signal().await;
        stop.cancel();
    });
    serve_listener(listener, app, opts.max_connections, cancel).await;
    Ok(())
}

/// Serves `app` on `listener` until `cancel`: HTTP/1.1 with [`HEADER_TIMEOUT`], `TCP_NODELAY`
/// and at most `max_connections` connections (more are closed at once); on `cancel`, open
/// connections finish their current request.
pub async fn serve_listener(listener: tokio::net::TcpListener, app: Router, max_connections: usize, cancel: CancellationToken) {
    use hyper_util::rt::{TokioIo, TokioTimer};
    use hyper_util::service::TowerToHyperService;
    let permits = Arc::new(tokio::sync::Semaphore::new(max_connections.max(1)));
    loop {
        let (stream, peer) = tokio::select! {
            _ = cancel.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of file descriptors and the like: wait instead of spinning.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            tracing::warn!(%peer, "connection cap reached: closing the new connection");
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(app.clone());
        let cancel = cancel.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder.timer(TokioTimer::new()).header_read_timeout(HEADER_TIMEOUT).keep_alive(true);
            let conn = builder.serve_connection(TokioIo::new(stream), service).with_upgrades();
            let mut conn = std::pin::pin!(conn);
            tokio::select! {
                r = conn.as_mut() => {
                    if let Err(e) = r {
                        tracing::debug!(%peer, error = %e, "connection ended");
                    }
                }
                _ = cancel.cancelled() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(Duration::from_secs(5), conn).await;
                }
            }
        });
    }
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(s) => s,
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                return;
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
