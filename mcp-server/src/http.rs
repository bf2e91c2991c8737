//! Streamable HTTP: an axum router serving MCP at `/mcp`.
//!
//! - `Host` is checked against loopback names (plus the listen address and any configured
//!   hosts) and `Origin`, when present, against loopback origins (plus configured ones); a
//!   request failing either gets 403 (rmcp's checks, DNS-rebinding protection).
//! - With a token configured, every request needs `Authorization: Bearer <token>`; others get
//!   401 with `WWW-Authenticate: Bearer`.
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
use tokio_util::sync::CancellationToken;

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
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions { listen: SocketAddr::from(([127, 0, 0, 1], 8787)), auth_token: None, allowed_origins: Vec::new(), allowed_hosts: Vec::new(), base_url: None }
    }
}

/// Origins allowed by default: loopback pages on any port.
pub const LOOPBACK_ORIGINS: [&str; 6] = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*", "https://localhost:*", "https://127.0.0.1:*", "https://[::1]:*"];

/// The router: MCP at `/mcp`, behind the bearer-token check when a token is set, and the
/// reference site ([`crate::site::router`]: pages, `/sparql`) beside it, open to read.
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
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_max_request_body_bytes(crate::MAX_ARGUMENT_BYTES + 64 * 1024)
        .with_cancellation_token(cancel);
    let server = KubewhyServer::with_cluster(engine.clone(), cluster).with_base_url(opts.base_url.clone());
    let service = StreamableHttpService::new(move || Ok(server.clone()), Arc::new(LocalSessionManager::default()), config);
    let token: Arc<Option<String>> = Arc::new(opts.auth_token.clone().filter(|t| !t.is_empty()));
    let site = crate::site::router(engine, &crate::site::SiteOptions { base_url: opts.base_url.clone() });
    Router::new().nest_service("/mcp", service).layer(axum::middleware::from_fn_with_state(token, require_token)).merge(site)
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
/// The address cannot be bound, or serving failed.
pub async fn serve(engine: Arc<Engine>, opts: HttpOptions, on_ready: impl FnOnce(SocketAddr)) -> anyhow::Result<()> {
    serve_with(engine, None, opts, on_ready).await
}

/// [`serve`] with cluster access (adds `verify_cluster` and `scan_cluster`).
///
/// # Errors
/// As [`serve`].
pub async fn serve_with(engine: Arc<Engine>, cluster: Option<Arc<crate::cluster::ClusterAccess>>, opts: HttpOptions, on_ready: impl FnOnce(SocketAddr)) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(opts.listen).await.map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", opts.listen))?;
    let addr = listener.local_addr()?;
    let cancel = CancellationToken::new();
    let app = router_with(engine, cluster, &opts, cancel.clone());
    tracing::info!(%addr, auth = opts.auth_token.is_some(), "serving MCP over streamable HTTP at /mcp and the reference site at /");
    on_ready(addr);
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            shutdown_signal().await;
            cancel.cancel();
        })
        .await?;
    Ok(())
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
