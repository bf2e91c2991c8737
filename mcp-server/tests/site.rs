//! The reference site through its axum router (tower `oneshot`, no socket): status codes,
//! content types, SPARQL 1.1 Protocol shapes, relation links both ways, HTML escaping, `url`
//! links in MCP answers, and the static export (files exist, every link resolves to a file).

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use axum::Router;
use kubewhy_engine::diagnose::DiagnoseOptions;
use kubewhy_engine::knowledge::{self, SourceFile};
use kubewhy_engine::Engine;
use kubewhy_mcp::site::{self, ExportOptions, SiteOptions};
use kubewhy_mcp::KubewhyServer;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use tower::ServiceExt;

fn engine() -> Arc<Engine> {
    static ENGINE: OnceLock<Arc<Engine>> = OnceLock::new();
    ENGINE.get_or_init(|| Arc::new(Engine::from_sources(knowledge::sources_from(kubewhy_knowledge::files())).expect("built-in knowledge loads").0)).clone()
}

fn app() -> Router {
    site::router(engine(), &SiteOptions::default())
}

struct Got {
    status: StatusCode,
    content_type: String,
    body: String,
}

async fn send(app: Router, req: Request<Body>) -> Got {
    let resp = app.oneshot(req).await.expect("router answers");
    let status = resp.status();
    let content_type = resp.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX).await.expect("body");
    Got { status, content_type, body: String::from_utf8_lossy(&bytes).into_owned() }
}

async fn get(uri: &str) -> Got {
    send(app(), Request::get(uri).body(Body::empty()).expect("request")).await
}

async fn get_accept(uri: &str, accept: &str) -> Got {
    send(app(), Request::get(uri).header(header::ACCEPT, accept).body(Body::empty()).expect("request")).await
}

async fn post(uri: &str, content_type: &str, body: &str, accept: Option<&str>) -> Got {
    let mut r = Request::post(uri).header(header::CONTENT_TYPE, content_type);
    if let Some(a) = accept {
        r = r.header(header::ACCEPT, a);
    }
    send(app(), r.body(Body::from(body.to_string())).expect("request")).await
}

fn enc(s: &str) -> String {
    form_urlencoded_encode(s)
}

fn form_urlencoded_encode(s: &str) -> String {
    s.bytes()
        .map(|b| if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect()
}

/// Every `href="..."` and `src="..."` of a page, HTML entities of `&amp;` undone.
fn links(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    for attr in ["href=\"", "src=\""] {
        let mut rest = html;
        while let Some(i) = rest.find(attr) {
            rest = &rest[i + attr.len()..];
            let end = rest.find('"').unwrap_or(rest.len());
            out.push(rest[..end].replace("&amp;", "&"));
            rest = &rest[end..];
        }
    }
    out
}

fn check_html(g: &Got) {
    assert!(g.content_type.starts_with("text/html"), "{}", g.content_type);
    assert!(g.body.starts_with("<!doctype html>"), "{}", &g.body[..g.body.len().min(200)]);
    assert_eq!(g.body.matches("<h1>").count(), 1, "one <h1> per page");
    assert!(g.body.contains("<title>") && g.body.contains(" · kubewhy</title>"));
    // Every form control has a label.
    let mut rest = g.body.as_str();
    while let Some(i) = rest.find(" id=\"") {
        let before = &rest[..i];
        rest = &rest[i + 5..];
        let id = &rest[..rest.find('"').unwrap_or(0)];
        let tag_start = before.rfind('<').map(|t| &before[t..]).unwrap_or("");
        if tag_start.starts_with("<input") || tag_start.starts_with("<select") || tag_start.starts_with("<textarea") {
            assert!(g.body.contains(&format!("<label for=\"{id}\">")), "no label for #{id}");
        }
    }
}

#[tokio::test]
async fn pages_answer_with_html_and_status_codes() {
    for uri in ["/", "/search?q=insufficient+cpu", "/search", "/e/failure-mode/insufficient-resources", "/e/component/kubelet", "/e/kep/753", "/e/feature-gate/SidecarContainers", "/e/kep", "/gates", "/gates?version=1.30&stage=beta", "/diagnose", "/sparql", "/e/metric/etcd_mvcc_db_total_size_in_bytes/"] {
        let g = get(uri).await;
        assert_eq!(g.status, StatusCode::OK, "{uri}");
        check_html(&g);
    }
    for (uri, status) in [("/e/failure-mode/no-such-thing", StatusCode::NOT_FOUND), ("/e/nokind", StatusCode::NOT_FOUND), ("/nothing-here", StatusCode::NOT_FOUND), ("/gates?version=x.y", StatusCode::BAD_REQUEST), ("/search?q=a&kind=bogus", StatusCode::BAD_REQUEST)] {
        let g = get(uri).await;
        assert_eq!(g.status, status, "{uri}");
        check_html(&g);
    }
    let css = get("/assets/site.css").await;
    assert_eq!((css.status, css.content_type.as_str()), (StatusCode::OK, "text/css; charset=utf-8"));
    let js = get("/assets/site.js").await;
    assert!(js.content_type.starts_with("text/javascript"));
    let ttl = get("/graph.ttl").await;
    assert!(ttl.content_type.starts_with("text/turtle") && ttl.body.contains("@prefix kw:"));
    let idx = get("/search-index.json").await;
    let v: Value = serde_json::from_str(&idx.body).expect("index is JSON");
    assert_eq!(v["docs"].as_array().map(Vec::len), Some(engine().knowledge().len()));
}

#[tokio::test]
async fn no_page_refers_to_an_external_asset() {
    for uri in ["/", "/e/failure-mode/insufficient-resources", "/sparql"] {
        let g = get(uri).await;
        for tag in ["<link ", "<script "] {
            for piece in g.body.split(tag).skip(1) {
                let head = &piece[..piece.find('>').unwrap_or(0)];
                assert!(!head.contains("http://") && !head.contains("https://") && !head.contains("//"), "{uri}: external asset {head}");
            }
        }
    }
}

#[tokio::test]
async fn search_ranks_like_the_engine_and_filters_by_kind() {
    let g = get("/search?q=insufficient+cpu").await;
    let hits = engine().search("insufficient cpu", None, 5);
    let first = hits.first().expect("hits");
    let pos = |id: &str| g.body.find(&format!("href=\"/{}\"", kubewhy_path(id))).unwrap_or(usize::MAX);
    assert!(pos(&first.id) < usize::MAX, "top hit {} not on the page", first.id);
    for w in hits.windows(2) {
        assert!(pos(&w[0].id) < pos(&w[1].id), "{} should come before {}", w[0].id, w[1].id);
    }
    assert!(g.body.contains("<mark>"), "snippets mark the words");
    let f = get("/search?q=insufficient+cpu&kind=symptom").await;
    let results = &f.body[f.body.find("id=\"results\"").expect("results list")..];
    assert!(results.contains("href=\"/e/symptom/"));
    assert!(!results.contains("href=\"/e/failure-mode/"), "kind filter leaks other kinds");
    assert!(f.body.contains("aria-current=\"page\">Symptoms"));
}

fn kubewhy_path(id: &str) -> String {
    let (k, s) = id.split_once('/').expect("id");
    format!("e/{k}/{}", enc(s))
}

#[tokio::test]
async fn entity_pages_link_relations_both_ways() {
    let fm = "failure-mode/insufficient-resources";
    let x = engine().explain(fm).expect("entity");
    let page = get(&format!("/{}", kubewhy_path(fm))).await;
    let hrefs = links(&page.body);
    assert!(!x.outgoing.is_empty() && !x.incoming.is_empty());
    for r in x.outgoing.iter().chain(&x.incoming).filter(|r| engine().knowledge().get(&r.id).is_some()) {
        assert!(hrefs.contains(&format!("/{}", kubewhy_path(&r.id))), "{fm} does not link {} ({})", r.id, r.property);
    }
    // And back: each loop it happens in links to it, and so does each cause.
    for other in ["loop/scheduler-noderesourcesfit", "component/kube-scheduler"] {
        let p = get(&format!("/{}", kubewhy_path(other))).await;
        assert!(links(&p.body).contains(&format!("/{}", kubewhy_path(fm))), "{other} does not link back to {fm}");
    }
    // The causal chain and the mechanism path are SVG with the entity and its neighbours.
    assert!(page.body.contains("<svg class=\"diagram chain\""));
    assert!(page.body.contains("<svg class=\"diagram mechanism\""));
    let chain = &page.body[page.body.find("<svg class=\"diagram chain\"").unwrap_or(0)..];
    let chain = &chain[..chain.find("</svg>").unwrap_or(0)];
    assert!(chain.contains(&format!("data-id=\"{fm}\"")));
    let causes = kubewhy_engine::graph::direct_causes(engine().knowledge());
    for c in causes.get(fm).into_iter().flatten().take(7) {
        assert!(chain.contains(&format!("data-id=\"{c}\"")), "chain lacks cause {c}");
    }
    // References: KEPs to their pages, sources to GitHub.
    assert!(page.body.contains("href=\"https://github.com/kubernetes/kubernetes/blob/HEAD/pkg/scheduler/framework/plugins/noderesources/fit.go\""));
    let kep_page = get("/e/feature-gate/SidecarContainers").await;
    assert!(links(&kep_page.body).contains(&"/e/kep/753".to_string()), "gate page links its KEP");
}

#[tokio::test]
async fn bodies_are_rendered_with_raw_html_escaped() {
    let text = "+++\nid = \"concept/xss-probe\"\ntitle = \"A <b>bold</b> title\"\n+++\nSome *emphasis* and <script>alert(1)</script> and <img src=x onerror=alert(2)>.\n\n[bad](javascript:alert(3)) [good](https://kubernetes.io/)\n";
    let (e, _) = Engine::from_sources(vec![SourceFile { path: "concepts/xss-probe.md".into(), text: text.into() }]).expect("loads");
    let app = site::router(Arc::new(e), &SiteOptions::default());
    let g = send(app, Request::get("/e/concept/xss-probe").body(Body::empty()).expect("request")).await;
    assert_eq!(g.status, StatusCode::OK);
    assert!(!g.body.contains("<script>alert"), "raw script survived");
    assert!(!g.body.contains("<img src=x"), "raw img survived");
    assert!(g.body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(g.body.contains("<em>emphasis</em>"));
    assert!(g.body.contains("<h1>A &lt;b&gt;bold&lt;/b&gt; title</h1>"));
    assert!(!g.body.contains("javascript:"));
    assert!(g.body.contains("href=\"https://kubernetes.io/\""));
}

#[tokio::test]
async fn diagnose_gives_the_cli_answer() {
    let symptom = "0/3 nodes are available: 3 Insufficient cpu.";
    let d = engine().diagnose(symptom, DiagnoseOptions { k8s_version: None, top: 5 }).expect("diagnosis");
    let g = post("/diagnose", "application/x-www-form-urlencoded", &format!("symptom={}&k8s_version=", enc(symptom)), None).await;
    assert_eq!(g.status, StatusCode::OK);
    check_html(&g);
    let mut last = 0;
    for c in &d.candidates {
        let at = g.body.find(&format!("<h3><a href=\"/{}\">", kubewhy_path(&c.id))).unwrap_or_else(|| panic!("candidate {} missing", c.id));
        assert!(at > last, "candidates out of order");
        last = at;
    }
    let get_form = get(&format!("/diagnose?symptom={}", enc(symptom))).await;
    assert!(get_form.body.contains(&format!("/{}", kubewhy_path(&d.candidates[0].id))));
    let empty = post("/diagnose", "application/x-www-form-urlencoded", "symptom=", None).await;
    assert_eq!(empty.status, StatusCode::BAD_REQUEST);
    let bad_version = post("/diagnose", "application/x-www-form-urlencoded", "symptom=x&k8s_version=one", None).await;
    assert_eq!(bad_version.status, StatusCode::BAD_REQUEST);
    assert!(bad_version.body.contains("role=\"alert\""));
    let wrong_type = post("/diagnose", "text/plain", "symptom=x", None).await;
    assert_eq!(wrong_type.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
}

const SELECT: &str = "SELECT ?fm ?title WHERE { ?fm a kw:FailureMode ; kw:area \"etcd\" ; rdfs:label ?title } ORDER BY ?fm LIMIT 3";

#[tokio::test]
async fn sparql_protocol_json_and_csv() {
    // GET, default JSON.
    let g = get(&format!("/sparql?query={}", enc(SELECT))).await;
    assert_eq!(g.status, StatusCode::OK, "{}", g.body);
    assert_eq!(g.content_type, "application/sparql-results+json");
    let v: Value = serde_json::from_str(&g.body).expect("JSON");
    assert_eq!(v["head"]["vars"], serde_json::json!(["fm", "title"]));
    let rows = v["results"]["bindings"].as_array().expect("bindings");
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0]["fm"]["type"], "uri");
    assert!(rows[0]["fm"]["value"].as_str().is_some_and(|s| s.starts_with("https://kubewhy.dev/id/failure-mode/")));
    assert_eq!(rows[0]["title"]["type"], "literal");
    // CSV by Accept, by format, and through both POST forms.
    let csv = get_accept(&format!("/sparql?query={}", enc(SELECT)), "text/csv").await;
    assert!(csv.content_type.starts_with("text/csv"));
    let lines: Vec<&str> = csv.body.split("\r\n").collect();
    assert_eq!(lines[0], "fm,title");
    assert_eq!(lines.len(), 5, "header, 3 rows, final empty: {:?}", lines);
    assert!(lines[1].starts_with("https://kubewhy.dev/id/failure-mode/"));
    let by_format = get(&format!("/sparql?query={}&format=csv", enc(SELECT))).await;
    assert_eq!(by_format.body, csv.body);
    let form = post("/sparql", "application/x-www-form-urlencoded", &format!("query={}", enc(SELECT)), Some("application/sparql-results+json")).await;
    assert_eq!(serde_json::from_str::<Value>(&form.body).expect("JSON"), v);
    let direct = post("/sparql", "application/sparql-query", SELECT, Some("text/csv")).await;
    assert_eq!(direct.body, csv.body);
    // Typed literals keep their datatype.
    let count = get(&format!("/sparql?query={}", enc("SELECT (COUNT(*) AS ?n) WHERE { ?s a kw:FailureMode }"))).await;
    let n: Value = serde_json::from_str(&count.body).expect("JSON");
    assert_eq!(n["results"]["bindings"][0]["n"]["datatype"], "http://www.w3.org/2001/XMLSchema#integer");
    // ASK is a boolean; CONSTRUCT is N-Triples.
    let ask = get(&format!("/sparql?query={}", enc("ASK { failure-mode:etcd-nospace-alarm a kw:FailureMode }"))).await;
    assert_eq!(serde_json::from_str::<Value>(&ask.body).expect("JSON"), serde_json::json!({"head": {}, "boolean": true}));
    let construct = get(&format!("/sparql?query={}", enc("CONSTRUCT { ?s rdfs:label ?l } WHERE { ?s rdfs:label ?l } LIMIT 2"))).await;
    assert_eq!(construct.content_type, "application/n-triples");
    assert_eq!(construct.body.lines().count(), 2);
    // A browser gets the HTML page with a table.
    let html = get_accept(&format!("/sparql?query={}", enc(SELECT)), "text/html,application/xhtml+xml,*/*;q=0.8").await;
    check_html(&html);
    assert!(html.body.contains("<table class=\"solutions\""));
}

#[tokio::test]
async fn sparql_errors() {
    let bad = get(&format!("/sparql?query={}", enc("SELECT ?x WHERE { ?x"))).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(bad.content_type.starts_with("text/plain"));
    assert!(bad.body.starts_with("invalid SPARQL query: "), "{}", bad.body);
    let update = post("/sparql", "application/sparql-query", "DELETE WHERE { ?s ?p ?o }", None).await;
    assert_eq!(update.status, StatusCode::BAD_REQUEST);
    assert!(update.body.contains("read-only"));
    let update2 = post("/sparql", "application/sparql-update", "DELETE WHERE { ?s ?p ?o }", None).await;
    assert_eq!(update2.status, StatusCode::BAD_REQUEST);
    let unsupported = post("/sparql", "application/json", "{}", None).await;
    assert_eq!(unsupported.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let missing = post("/sparql", "application/x-www-form-urlencoded", "format=json", None).await;
    assert_eq!(missing.status, StatusCode::BAD_REQUEST);
    let dataset = get(&format!("/sparql?query={}&default-graph-uri=http://x", enc(SELECT))).await;
    assert_eq!(dataset.status, StatusCode::BAD_REQUEST);
    let not_acceptable = get_accept(&format!("/sparql?query={}", enc(SELECT)), "image/png").await;
    assert_eq!(not_acceptable.status, StatusCode::NOT_ACCEPTABLE);
    let ask_csv = get(&format!("/sparql?query={}&format=csv", enc("ASK { ?s ?p ?o }"))).await;
    assert_eq!(ask_csv.status, StatusCode::NOT_ACCEPTABLE);
}

#[tokio::test]
async fn base_url_sets_link_prefix_and_mcp_urls() {
    let app = site::router(engine(), &SiteOptions { base_url: Some("https://k.example.com/ref".into()) });
    let g = send(app, Request::get("/e/component/etcd").body(Body::empty()).expect("request")).await;
    assert!(g.body.contains("href=\"/ref/assets/site.css\""));
    assert!(g.body.contains("href=\"/ref/e/component\""));
    let server = KubewhyServer::new(engine()).with_base_url(Some("https://k.example.com/ref".into()));
    let args = serde_json::json!({"text": "etcd database space exceeded", "limit": 3});
    let r = server.call("search", args.as_object().cloned()).await.expect("call");
    let v = r.structured_content.expect("structured");
    let hit = &v["hits"][0];
    let id = hit["id"].as_str().expect("id");
    assert_eq!(hit["url"], format!("https://k.example.com/ref/{}", kubewhy_path(id)));
    let plain = KubewhyServer::new(engine()).call("search", args.as_object().cloned()).await.expect("call");
    assert!(plain.structured_content.expect("structured")["hits"][0].get("url").is_none(), "no url without a base URL");
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn html_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read dir").flatten() {
        let p = e.path();
        if p.is_dir() {
            html_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "html") {
            out.push(p);
        }
    }
}

#[test]
fn export_writes_every_page_and_links_resolve() {
    let dir = std::env::temp_dir().join(format!("kubewhy-site-export-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let report = site::export(engine(), &dir, &ExportOptions::default()).expect("export");
    let eng = engine();
    let kb = eng.knowledge();
    assert_eq!(report.entity_pages, kb.len());
    for f in ["index.html", "search/index.html", "gates/index.html", "diagnose/index.html", "sparql/index.html", "assets/site.css", "assets/site.js", "search-index.json", "graph.ttl", "e/failure-mode/index.html", "e/failure-mode/insufficient-resources/index.html", "e/feature-gate/CSIMigration{vendor}/index.html"] {
        assert!(dir.join(f).is_file(), "missing {f}");
    }
    let mut files = Vec::new();
    html_files(&dir, &mut files);
    assert_eq!(files.len(), report.entity_pages + 6 + kubewhy_engine::model::Kind::ALL.len());
    let mut checked = 0;
    for f in &files {
        let html = std::fs::read_to_string(f).expect("read");
        assert!(!html.contains("href=\"/"), "{} has an absolute link", f.display());
        let here = f.parent().expect("parent");
        for l in links(&html) {
            if l.starts_with("http://") || l.starts_with("https://") || l.starts_with("mailto:") || l.starts_with('#') {
                continue;
            }
            let path = l.split(['?', '#']).next().unwrap_or("");
            let target = here.join(percent_decode(path));
            let ok = if path.ends_with('/') || path.is_empty() || path == "./" { target.join("index.html").is_file() } else { target.is_file() };
            assert!(ok, "{}: link {l} does not resolve", f.display());
            checked += 1;
        }
    }
    assert!(checked > 50_000, "only {checked} links checked");
    // The diagnose and SPARQL pages say they need the server.
    assert!(std::fs::read_to_string(dir.join("diagnose/index.html")).expect("read").contains("kubewhy serve"));
    assert!(std::fs::read_to_string(dir.join("sparql/index.html")).expect("read").contains("kubewhy serve"));
    let bad = site::export(engine(), &dir, &ExportOptions { base_path: Some("docs".into()) });
    assert!(bad.is_err());
    let _ = std::fs::remove_dir_all(&dir);
}
