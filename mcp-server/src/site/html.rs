//! HTML building blocks of the reference site: escaping, links (server or static export), the
//! page shell, and Markdown bodies rendered with pulldown-cmark with raw HTML escaped.

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// Escapes text for HTML element content and double-quoted attribute values.
pub(crate) fn esc(text: &str) -> String {
    let mut o = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// Percent-encodes one path segment (everything but RFC 3986 unreserved characters).
pub(crate) fn seg(text: &str) -> String {
    let mut o = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            o.push(b as char);
        } else {
            o.push_str(&format!("%{b:02X}"));
        }
    }
    o
}

/// Encodes a query-string value (`application/x-www-form-urlencoded`).
pub(crate) fn qv(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// How links are written: for the live server (absolute paths under a base path) or for a static
/// export (relative to the page, or under a configured base path, with `dir/` page URLs).
#[derive(Debug, Clone)]
pub(crate) struct Ctx {
    /// Prefix of every link: "/" or "/ref/" on the server; "../../" or a base path in an export.
    pub(crate) root: String,
    /// Whether this page belongs to a static export.
    pub(crate) export: bool,
}

impl Ctx {
    /// Links for the live server under `base_path` ("/" or "/ref/").
    pub(crate) fn server(base_path: &str) -> Ctx {
        Ctx { root: base_path.to_string(), export: false }
    }

    /// Links for an exported page `depth` directories below the export root, or under `base_path`.
    pub(crate) fn export(depth: usize, base_path: Option<&str>) -> Ctx {
        let root = match base_path {
            Some(b) => b.to_string(),
            None => "../".repeat(depth),
        };
        Ctx { root, export: true }
    }

    /// The URL of a page given by its site path (`""`, `"search"`, `"e/loop/pleg"`), already encoded.
    pub(crate) fn page(&self, path: &str) -> String {
        match (path.is_empty(), self.export) {
            (true, _) if self.root.is_empty() => "./".to_string(),
            (true, _) => self.root.clone(),
            (false, true) => format!("{}{path}/", self.root),
            (false, false) => format!("{}{path}", self.root),
        }
    }

    /// The URL of a page with a query string (`pairs` are encoded here).
    pub(crate) fn page_q(&self, path: &str, pairs: &[(&str, &str)]) -> String {
        let q: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={}", qv(v))).collect();
        format!("{}?{}", self.page(path), q.join("&"))
    }

    /// The URL of an entity page (`failure-mode/etcd-nospace-alarm`).
    pub(crate) fn entity(&self, id: &str) -> String {
        self.page(&entity_path(id))
    }

    /// The URL of a file under the root (`assets/site.css`, `search-index.json`).
    pub(crate) fn file(&self, path: &str) -> String {
        format!("{}{path}", self.root)
    }
}

/// The site path of an entity page, `e/<kind>/<slug>` with the slug percent-encoded.
pub(crate) fn entity_path(id: &str) -> String {
    let (kind, slug) = id.split_once('/').unwrap_or(("entity", id));
    format!("e/{}/{}", seg(kind), seg(slug))
}

/// A link to an entity, its title as text.
pub(crate) fn entity_link(ctx: &Ctx, id: &str, title: &str) -> String {
    format!("<a href=\"{}\">{}</a>", esc(&ctx.entity(id)), esc(title))
}

/// One page: the shell with header navigation, the search box, `main` and the footer.
///
/// `title` is the page's `<title>` (the site name is appended); `body` is the content of `main`.
pub(crate) fn page(ctx: &Ctx, title: &str, body: &str) -> String {
    let nav = [("", "Home"), ("search", "Search"), ("diagnose", "Diagnose"), ("gates", "Feature gates"), ("e/kep", "KEPs"), ("sparql", "SPARQL")];
    let mut links = String::new();
    for (path, label) in nav {
        links.push_str(&format!("<li><a href=\"{}\">{label}</a></li>", esc(&ctx.page(path))));
    }
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{title} · kubewhy</title>\n<link rel=\"stylesheet\" href=\"{css}\">\n</head>\n<body data-root=\"{root}\" data-mode=\"{mode}\">\n<a class=\"skip\" href=\"#main\">Skip to content</a>\n<header class=\"top\">\n<a class=\"brand\" href=\"{home}\">kubewhy</a>\n<nav aria-label=\"Site\"><ul>{links}</ul></nav>\n<form class=\"top-search\" role=\"search\" action=\"{search}\" method=\"get\"><label for=\"top-q\">Search</label> <input id=\"top-q\" name=\"q\" type=\"search\" placeholder=\"Insufficient cpu, watch cache, PLEG…\"> <button type=\"submit\">Go</button></form>\n</header>\n<main id=\"main\">\n{body}\n</main>\n<footer><p>kubewhy: a curated knowledge graph of Kubernetes internals. Pages are generated from the graph; every fact names its source.</p></footer>\n<script src=\"{js}\" defer></script>\n</body>\n</html>\n",
        title = esc(title),
        css = esc(&ctx.file("assets/site.css")),
        js = esc(&ctx.file("assets/site.js")),
        root = esc(&ctx.root),
        mode = if ctx.export { "static" } else { "server" },
        home = esc(&ctx.page("")),
        search = esc(&ctx.page("search")),
    )
}

/// Renders a Markdown body to HTML: raw HTML is shown as text, headings move down one level
/// (the page has its own `<h1>`), and only http(s), mailto and relative link targets survive.
pub(crate) fn markdown(text: &str) -> String {
    let opts = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    let events = Parser::new_ext(text, opts).map(|ev| match ev {
        Event::Html(h) | Event::InlineHtml(h) => Event::Text(h),
        Event::Start(Tag::Heading { level, id, classes, attrs }) => Event::Start(Tag::Heading { level: lower(level), id, classes, attrs }),
        Event::End(TagEnd::Heading(level)) => Event::End(TagEnd::Heading(lower(level))),
        Event::Start(Tag::Link { link_type, dest_url, title, id }) => {
            let dest_url = if safe_url(&dest_url) { dest_url } else { "#".into() };
            Event::Start(Tag::Link { link_type, dest_url, title, id })
        }
        Event::Start(Tag::Image { link_type, dest_url, title, id }) => {
            let dest_url = if safe_url(&dest_url) { dest_url } else { "#".into() };
            Event::Start(Tag::Image { link_type, dest_url, title, id })
        }
        other => other,
    });
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, events);
    html
}

fn lower(level: HeadingLevel) -> HeadingLevel {
    match level {
        HeadingLevel::H1 => HeadingLevel::H2,
        HeadingLevel::H2 => HeadingLevel::H3,
        HeadingLevel::H3 => HeadingLevel::H4,
        HeadingLevel::H4 => HeadingLevel::H5,
        _ => HeadingLevel::H6,
    }
}

fn safe_url(url: &str) -> bool {
    let l = url.trim().to_ascii_lowercase();
    match l.split_once(':') {
        Some((scheme, _)) if !scheme.contains('/') => matches!(scheme, "http" | "https" | "mailto"),
        _ => true,
    }
}

/// The link for a reference: URLs as they are, `owner/repo:path` to the file on GitHub, `KEP-N`
/// to the KEP's page; `None` for anything else (shown as text).
pub(crate) fn reference_href(ctx: &Ctx, r: &str) -> Option<String> {
    let t = r.trim();
    if t.starts_with("https://") || t.starts_with("http://") {
        return Some(t.to_string());
    }
    if let Some(n) = t.strip_prefix("KEP-").or_else(|| t.strip_prefix("kep-")).and_then(|n| n.parse::<u32>().ok()) {
        return Some(ctx.entity(&format!("kep/{n}")));
    }
    let (repo, path) = t.split_once(':')?;
    let (owner, name) = repo.split_once('/')?;
    let ok = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !ok(owner) || !ok(name) || path.is_empty() || path.contains(char::is_whitespace) {
        return None;
    }
    let (path, line) = match path.rsplit_once('#') {
        Some((p, l)) => (p, format!("#{l}")),
        None => (path, String::new()),
    };
    let path: Vec<String> = path.trim_start_matches('/').split('/').map(seg).collect();
    Some(format!("https://github.com/{owner}/{name}/blob/HEAD/{}{line}", path.join("/")))
}

/// A reference as an HTML list item's content (a link when it has one).
pub(crate) fn reference(ctx: &Ctx, r: &str) -> String {
    match reference_href(ctx, r) {
        Some(h) => format!("<a href=\"{}\">{}</a>", esc(&h), esc(r)),
        None => esc(r),
    }
}

/// How an incoming relation reads from its target (`X causedBy this` → "caused by this").
pub(crate) fn inverse_label(p: &str) -> String {
    let fixed = match p {
        "causedBy" => "caused by this",
        "leadsTo" => "lead to this",
        "hasUpstreamCause" => "have this as an upstream cause (transitive)",
        "manifestsAs" => "manifest as this",
        "inLoop" => "happen in this loop",
        "involves" => "involve this",
        "partOf" => "parts of this",
        "talksTo" => "talk to this",
        "reads" => "read this",
        "writes" => "write this",
        "emits" => "emit this",
        "emittedBy" => "emitted by this",
        "exposedBy" => "exposed by this",
        "concernsField" => "concern this field",
        "observableVia" => "observable via this",
        "diagnosedBy" => "diagnosed by this",
        "fixedBy" => "fixed by this",
        "describedIn" => "described in this",
        "gatedBy" => "gated by this",
        "concerns" => "myths about this",
        "seeAlso" => "list this under see also",
        _ => "",
    };
    if fixed.is_empty() {
        format!("{} this", property_label(p))
    } else {
        fixed.to_string()
    }
}

/// Splits a camelCase ontology property into words (`manifestsAs` → "manifests as").
pub(crate) fn property_label(p: &str) -> String {
    let mut o = String::new();
    for c in p.chars() {
        if c.is_ascii_uppercase() {
            o.push(' ');
            o.push(c.to_ascii_lowercase());
        } else {
            o.push(c);
        }
    }
    match o.as_str() {
        "has upstream cause" => "has upstream cause (transitive)".to_string(),
        _ => o,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_escapes_raw_html_and_unsafe_links() {
        let h = markdown("# T\n\n<script>alert(1)</script>\n\nx <b>y</b> [a](javascript:alert(1)) [b](https://k8s.io)\n");
        assert!(!h.contains("<script>"), "{h}");
        assert!(h.contains("&lt;script&gt;"), "{h}");
        assert!(h.contains("<h2>T</h2>"), "{h}");
        assert!(!h.contains("javascript:"), "{h}");
        assert!(h.contains("href=\"https://k8s.io\""), "{h}");
    }

    #[test]
    fn references_link_sensibly() {
        let ctx = Ctx::server("/");
        assert_eq!(reference_href(&ctx, "kubernetes/kubernetes:pkg/kubelet/pleg/generic.go").as_deref(), Some("https://github.com/kubernetes/kubernetes/blob/HEAD/pkg/kubelet/pleg/generic.go"));
        assert_eq!(reference_href(&ctx, "KEP-753").as_deref(), Some("/e/kep/753"));
        assert_eq!(reference_href(&ctx, "https://kubernetes.io/docs/").as_deref(), Some("https://kubernetes.io/docs/"));
        assert_eq!(reference_href(&ctx, "the etcd FAQ"), None);
    }

    #[test]
    fn links_differ_between_server_and_export() {
        assert_eq!(Ctx::server("/").entity("feature-gate/CSIMigration{vendor}"), "/e/feature-gate/CSIMigration%7Bvendor%7D");
        assert_eq!(Ctx::export(3, None).entity("loop/pleg"), "../../../e/loop/pleg/");
        assert_eq!(Ctx::export(0, None).page(""), "./");
        assert_eq!(Ctx::export(2, Some("/docs/")).page("search"), "/docs/search/");
    }
}
