//! The reference site: server-rendered HTML pages over the graph, hung off the same axum router
//! as `/mcp`, and the same pages exported as static files ([`export()`]).
//!
//! Routes (all `GET` unless noted; pages read well without JavaScript):
//! - `/` home: search, areas with their failure modes, kinds, tools;
//! - `/search?q=…&kind=…` ranked hits with snippets and kind filters;
//! - `/e/<kind>` every entity of a kind; `/e/<kind>/<slug>` one entity: body, relation panels
//!   both ways, references, and for a failure mode its causal chain and mechanism path as SVG;
//! - `/gates?version=1.30&stage=beta&q=…` the feature-gate table at a version;
//! - `/diagnose` (`GET`, `POST` form) the answer of `kubewhy why`;
//! - `/sparql` (`GET`, `POST`) the SPARQL 1.1 Protocol endpoint and query page ([`sparql`]);
//! - `/assets/site.css`, `/assets/site.js`, `/search-index.json` (the export's index),
//!   `/graph.ttl` (the whole graph as Turtle).
//!
//! Stable URLs: an entity's page is `<base>/e/<kind>/<slug>` ([`entity_url`]); CLI JSON and MCP
//! answers carry it as `url` when a base URL is configured ([`add_urls`]).
//!
//! The pages are public: the MCP bearer token guards `/mcp` only, since everything here is the
//! read-only, built-in knowledge.

pub mod export;
mod html;
mod pages;
mod sparql;
mod svg;

pub use export::{export, ExportError, ExportOptions, ExportReport};

use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use html::Ctx;
use kubewhy_engine::diagnose::DiagnoseOptions;
use kubewhy_engine::model::{Kind, Version};
use kubewhy_engine::Engine;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// The site's stylesheet (served at `/assets/site.css`).
pub const SITE_CSS: &str = include_str!("assets/site.css");
/// The site's small progressive script (served at `/assets/site.js`): client-side search in an
/// export, live filtering of the gate table, example queries on the SPARQL page.
pub const SITE_JS: &str = include_str!("assets/site.js");

/// Options of the live site.
#[derive(Debug, Clone, Default)]
pub struct SiteOptions {
    /// The public base URL (`https://kubewhy.example.com/ref`); its path becomes the prefix of
    /// every link (for a reverse proxy that strips it). `None`: links start at `/`.
    pub base_url: Option<String>,
}

/// The engine plus what every page needs precomputed: the direct causal links both ways.
#[derive(Debug)]
pub(crate) struct Site {
    pub(crate) engine: Arc<Engine>,
    /// Failure mode → its direct upstream causes (causedBy plus inverse leadsTo).
    pub(crate) causes: BTreeMap<String, BTreeSet<String>>,
    /// Failure mode → what it directly leads to (the inverse of `causes`).
    pub(crate) effects: BTreeMap<String, BTreeSet<String>>,
}

impl Site {
    pub(crate) fn new(engine: Arc<Engine>) -> Site {
        let causes = kubewhy_engine::graph::direct_causes(engine.knowledge());
        let mut effects: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (fm, cs) in &causes {
            for c in cs {
                effects.entry(c.clone()).or_default().insert(fm.clone());
            }
        }
        Site { engine, causes, effects }
    }
}

struct AppState {
    site: Site,
    ctx: Ctx,
}

/// Checks and normalises a base URL: `http(s)://host[:port][/path]`, no query or fragment,
/// returned without a trailing `/`.
///
/// # Errors
/// A message naming the URL when it is not an absolute http(s) URL.
pub fn normalize_base_url(url: &str) -> Result<String, String> {
    let u = url.trim();
    let rest = u.strip_prefix("https://").or_else(|| u.strip_prefix("http://")).ok_or_else(|| format!("base URL `{u}` must start with http:// or https://"))?;
    let host = rest.split('/').next().unwrap_or("");
    if host.is_empty() || host.contains(char::is_whitespace) {
        return Err(format!("base URL `{u}` has no host"));
    }
    if u.contains(['?', '#']) || u.contains(char::is_whitespace) {
        return Err(format!("base URL `{u}` must not have a query, a fragment or spaces"));
    }
    Ok(u.trim_end_matches('/').to_string())
}

/// The path of a base URL with a trailing `/` ("/" when it has none).
fn base_path(base_url: &str) -> String {
    let rest = base_url.split_once("://").map(|(_, r)| r).unwrap_or(base_url);
    match rest.find('/') {
        Some(i) => format!("{}/", rest[i..].trim_end_matches('/')),
        None => "/".to_string(),
    }
}

/// The stable URL of an entity's page: `<base>/e/<kind>/<slug>` (the slug percent-encoded).
/// `base` is a normalised base URL ([`normalize_base_url`]).
pub fn entity_url(base: &str, id: &str) -> String {
    format!("{}/{}", base.trim_end_matches('/'), html::entity_path(id))
}

/// Adds `url` (see [`entity_url`]) to every JSON object that names an entity: one with an `id`
/// of a known kind prefix (`failure-mode/…`) and a `title`, or one with a `uri` of the form
/// `kubewhy://<kind>/<slug>`. Existing keys are kept; `url` is added after them.
pub fn add_urls(value: &mut serde_json::Value, base: &str) {
    link(value, base, true);
}

/// Like [`add_urls`], only for objects with a `kubewhy://` `uri` (the MCP wire types that
/// declare `url`).
pub(crate) fn add_resource_urls(value: &mut serde_json::Value, base: &str) {
    link(value, base, false);
}

fn link(value: &mut serde_json::Value, base: &str, by_id: bool) {
    use serde_json::Value;
    match value {
        Value::Array(items) => items.iter_mut().for_each(|v| link(v, base, by_id)),
        Value::Object(map) => {
            for v in map.values_mut() {
                link(v, base, by_id);
            }
            let is_id = |s: &str| s.split_once('/').is_some_and(|(k, slug)| Kind::from_prefix(k).is_some() && !slug.is_empty());
            let id = match (map.get("uri").and_then(Value::as_str), map.get("id").and_then(Value::as_str)) {
                (Some(uri), _) if uri.strip_prefix("kubewhy://").is_some_and(is_id) => uri.strip_prefix("kubewhy://").map(str::to_string),
                (_, Some(id)) if by_id && is_id(id) && map.contains_key("title") => Some(id.to_string()),
                _ => None,
            };
            if let Some(id) = id {
                if !map.contains_key("url") {
                    map.insert("url".into(), Value::String(entity_url(base, &id)));
                }
            }
        }
        _ => {}
    }
}

/// The site's routes over `engine` (merged into the HTTP router by [`crate::http::router`]).
pub fn router(engine: Arc<Engine>, opts: &SiteOptions) -> Router {
    let root = opts.base_url.as_deref().map(base_path).unwrap_or_else(|| "/".to_string());
    // Build the RDF graph now, off the request path (the engine builds it lazily).
    let warm = engine.clone();
    std::thread::spawn(move || {
        warm.graph();
    });
    let state = Arc::new(AppState { site: Site::new(engine), ctx: Ctx::server(&root) });
    Router::new()
        .route("/", get(home))
        .route("/search", get(search))
        .route("/search/", get(search))
        .route("/e/{kind}", get(kind_index))
        .route("/e/{kind}/", get(kind_index))
        .route("/e/{kind}/{slug}", get(entity))
        .route("/e/{kind}/{slug}/", get(entity))
        .route("/gates", get(gates))
        .route("/diagnose", get(diagnose_get).post(diagnose_post))
        .route("/sparql", get(sparql_get).post(sparql_post))
        .route("/assets/site.css", get(|| async { asset("text/css; charset=utf-8", SITE_CSS) }))
        .route("/assets/site.js", get(|| async { asset("text/javascript; charset=utf-8", SITE_JS) }))
        .route("/search-index.json", get(search_index))
        .route("/graph.ttl", get(turtle))
        .fallback(not_found)
        .with_state(state)
}

/// Headers every page carries: no sniffing, no external anything.
fn secure(mut r: Response) -> Response {
    let h = r.headers_mut();
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static("default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; form-action 'self'; frame-ancestors 'none'"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    r
}

fn html_response(status: StatusCode, body: String) -> Response {
    secure((status, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response())
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    secure(([(header::CONTENT_TYPE, content_type), (header::CACHE_CONTROL, "public, max-age=3600")], body).into_response())
}

/// Runs page rendering on a blocking thread (search and diagnosis do real work).
async fn blocking<F: FnOnce(&AppState) -> Response + Send + 'static>(state: Arc<AppState>, f: F) -> Response {
    match tokio::task::spawn_blocking(move || f(&state)).await {
        Ok(r) => r,
        Err(e) => {
            tracing::error!(error = %e, "rendering a page panicked");
            (StatusCode::INTERNAL_SERVER_ERROR, "internal error while rendering the page\n").into_response()
        }
    }
}

fn params(raw: Option<&str>) -> Vec<(String, String)> {
    raw.map(|q| form_urlencoded::parse(q.as_bytes()).into_owned().collect()).unwrap_or_default()
}

fn param<'a>(p: &'a [(String, String)], name: &str) -> Option<&'a str> {
    p.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

async fn home(State(st): State<Arc<AppState>>) -> Response {
    blocking(st, |s| html_response(StatusCode::OK, pages::home(&s.site, &s.ctx))).await
}

async fn search(State(st): State<Arc<AppState>>, RawQuery(raw): RawQuery) -> Response {
    let p = params(raw.as_deref());
    let q = param(&p, "q").unwrap_or("").to_string();
    let kind_s = param(&p, "kind").unwrap_or("").to_string();
    blocking(st, move |s| {
        let kind = match kind_s.as_str() {
            "" => None,
            k => match Kind::from_prefix(k) {
                Some(k) => Some(k),
                None => return html_response(StatusCode::BAD_REQUEST, pages::not_found(&s.ctx, &format!("unknown kind `{k}`"))),
            },
        };
        html_response(StatusCode::OK, pages::search(&s.site, &s.ctx, &q, kind))
    })
    .await
}

async fn kind_index(State(st): State<Arc<AppState>>, Path(kind): Path<String>) -> Response {
    blocking(st, move |s| match Kind::from_prefix(&kind) {
        Some(k) => html_response(StatusCode::OK, pages::kind_index(&s.site, &s.ctx, k)),
        None => html_response(StatusCode::NOT_FOUND, pages::not_found(&s.ctx, &format!("there is no kind `{kind}`"))),
    })
    .await
}

async fn entity(State(st): State<Arc<AppState>>, Path((kind, slug)): Path<(String, String)>) -> Response {
    blocking(st, move |s| {
        let id = format!("{kind}/{slug}");
        match s.site.engine.knowledge().get(&id) {
            Some(e) => html_response(StatusCode::OK, pages::entity(&s.site, &s.ctx, e)),
            None => html_response(StatusCode::NOT_FOUND, pages::not_found(&s.ctx, &format!("no entity `{id}` in the graph"))),
        }
    })
    .await
}

async fn gates(State(st): State<Arc<AppState>>, RawQuery(raw): RawQuery) -> Response {
    let p = params(raw.as_deref());
    let version = param(&p, "version").unwrap_or("").trim().to_string();
    let stage = param(&p, "stage").unwrap_or("").to_string();
    let q = param(&p, "q").unwrap_or("").to_string();
    blocking(st, move |s| {
        let v = if version.is_empty() {
            None
        } else {
            match Version::parse(&version) {
                Ok(v) => Some(v),
                Err(e) => return html_response(StatusCode::BAD_REQUEST, pages::not_found(&s.ctx, &format!("version: {e}"))),
            }
        };
        html_response(StatusCode::OK, pages::gates(&s.site, &s.ctx, v, &stage, &q))
    })
    .await
}

fn diagnose_answer(s: &AppState, p: &[(String, String)]) -> Response {
    let symptom = param(p, "symptom").unwrap_or("").to_string();
    let version = param(p, "k8s_version").unwrap_or("").trim().to_string();
    if symptom.trim().is_empty() {
        let status = if p.iter().any(|(k, _)| k == "symptom") { StatusCode::BAD_REQUEST } else { StatusCode::OK };
        let answer = (status == StatusCode::BAD_REQUEST).then(|| Err("paste a symptom: the text is empty".to_string()));
        return html_response(status, pages::diagnose(&s.site, &s.ctx, &symptom, &version, answer));
    }
    let k8s_version = if version.is_empty() {
        None
    } else {
        match Version::parse(&version) {
            Ok(v) => Some(v),
            Err(e) => return html_response(StatusCode::BAD_REQUEST, pages::diagnose(&s.site, &s.ctx, &symptom, &version, Some(Err(format!("Kubernetes version: {e}"))))),
        }
    };
    match s.site.engine.diagnose(&symptom, DiagnoseOptions { k8s_version, top: 5 }) {
        Ok(d) => html_response(StatusCode::OK, pages::diagnose(&s.site, &s.ctx, &symptom, &version, Some(Ok(d)))),
        Err(e) => html_response(StatusCode::BAD_REQUEST, pages::diagnose(&s.site, &s.ctx, &symptom, &version, Some(Err(e.to_string())))),
    }
}

async fn diagnose_get(State(st): State<Arc<AppState>>, RawQuery(raw): RawQuery) -> Response {
    let p = params(raw.as_deref());
    blocking(st, move |s| diagnose_answer(s, &p)).await
}

async fn diagnose_post(State(st): State<Arc<AppState>>, headers: HeaderMap, body: Bytes) -> Response {
    if !is_form(&headers) {
        return (StatusCode::UNSUPPORTED_MEDIA_TYPE, "send the form as application/x-www-form-urlencoded\n").into_response();
    }
    let p: Vec<(String, String)> = form_urlencoded::parse(&body).into_owned().collect();
    blocking(st, move |s| diagnose_answer(s, &p)).await
}

fn content_type(headers: &HeaderMap) -> String {
    headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("").split(';').next().unwrap_or("").trim().to_ascii_lowercase()
}

fn is_form(headers: &HeaderMap) -> bool {
    content_type(headers) == "application/x-www-form-urlencoded"
}

fn sparql_reply(r: sparql::Reply) -> Response {
    let status = StatusCode::from_u16(r.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut resp = (status, [(header::CONTENT_TYPE, r.content_type)], r.body).into_response();
    resp.headers_mut().insert(header::VARY, HeaderValue::from_static("Accept"));
    if r.truncated {
        resp.headers_mut().insert("kubewhy-truncated", HeaderValue::from_static("true"));
    }
    secure(resp)
}

async fn sparql_get(State(st): State<Arc<AppState>>, headers: HeaderMap, RawQuery(raw): RawQuery) -> Response {
    let p = params(raw.as_deref());
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).map(str::to_string);
    blocking(st, move |s| {
        if param(&p, "query").is_none() && !p.iter().any(|(k, _)| k == "update") {
            return html_response(StatusCode::OK, pages::sparql(&s.ctx, "", None));
        }
        sparql_reply(sparql::run(&s.site.engine, &s.ctx, &p, None, accept.as_deref()))
    })
    .await
}

async fn sparql_post(State(st): State<Arc<AppState>>, headers: HeaderMap, RawQuery(raw): RawQuery, body: Bytes) -> Response {
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).map(str::to_string);
    let ct = content_type(&headers);
    let mut p = params(raw.as_deref());
    let body_query = match ct.as_str() {
        "application/x-www-form-urlencoded" => {
            p.extend(form_urlencoded::parse(&body).into_owned());
            None
        }
        "application/sparql-query" => match String::from_utf8(body.to_vec()) {
            Ok(q) => Some(q),
            Err(_) => return (StatusCode::BAD_REQUEST, "the query is not UTF-8 text\n").into_response(),
        },
        "application/sparql-update" => return (StatusCode::BAD_REQUEST, "the graph is read-only: SPARQL Update is not accepted\n").into_response(),
        other => {
            let msg = format!("unsupported Content-Type `{other}`: use application/x-www-form-urlencoded or application/sparql-query\n");
            return (StatusCode::UNSUPPORTED_MEDIA_TYPE, msg).into_response();
        }
    };
    if body_query.is_some() && param(&p, "query").is_some() {
        return (StatusCode::BAD_REQUEST, "give the query once: in the body or as `query`, not both\n").into_response();
    }
    blocking(st, move |s| sparql_reply(sparql::run(&s.site.engine, &s.ctx, &p, body_query, accept.as_deref()))).await
}

async fn search_index(State(st): State<Arc<AppState>>) -> Response {
    blocking(st, |s| {
        let json = export::search_index(&s.site).to_string();
        secure(([(header::CONTENT_TYPE, "application/json")], json).into_response())
    })
    .await
}

async fn turtle(State(st): State<Arc<AppState>>) -> Response {
    blocking(st, |s| match s.site.engine.graph().export("turtle") {
        Ok(t) => secure(([(header::CONTENT_TYPE, "text/turtle; charset=utf-8")], t).into_response()),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")).into_response(),
    })
    .await
}

async fn not_found(State(st): State<Arc<AppState>>, uri: axum::http::Uri) -> Response {
    html_response(StatusCode::NOT_FOUND, pages::not_found(&st.ctx, &format!("nothing at {}", uri.path())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls() {
        assert_eq!(normalize_base_url("https://k.example.com/ref/").as_deref(), Ok("https://k.example.com/ref"));
        assert!(normalize_base_url("k.example.com").is_err());
        assert!(normalize_base_url("https://k.example.com/?x=1").is_err());
        assert_eq!(base_path("https://k.example.com/ref"), "/ref/");
        assert_eq!(base_path("http://127.0.0.1:8787"), "/");
        assert_eq!(entity_url("https://k.example.com", "failure-mode/etcd-nospace-alarm"), "https://k.example.com/e/failure-mode/etcd-nospace-alarm");
    }

    #[test]
    fn urls_are_added_where_entities_are_named() {
        let mut v = serde_json::json!({"candidates": [{"id": "failure-mode/x", "title": "X", "chain": [{"id": "loop/y", "title": "Y"}]}], "uri": "kubewhy://component/etcd", "query": "a/b"});
        add_urls(&mut v, "http://h");
        assert_eq!(v["candidates"][0]["url"], "http://h/e/failure-mode/x");
        assert_eq!(v["candidates"][0]["chain"][0]["url"], "http://h/e/loop/y");
        assert_eq!(v["url"], "http://h/e/component/etcd");
        assert!(v.get("query").is_some_and(|q| q == "a/b"));
    }
}
