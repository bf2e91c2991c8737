//! The pages of the reference site, rendered to HTML strings: home, search, entity pages (with
//! relation panels, references and, for failure modes, the causal-chain and mechanism diagrams),
//! kind listings, the feature-gate table, diagnose and the SPARQL query page.
//!
//! Every function is pure over the [`Site`] and a link context, so the live server and the static
//! export render the same pages.

use super::html::{entity_link, esc, inverse_label, markdown, page, property_label, reference, Ctx};
use super::svg::{compact_diagram, diagram, Column, Edge, Node};
use super::Site;
use kubewhy_engine::diagnose::Diagnosis;
use kubewhy_engine::model::{Entity, Kind, KindData, Version, AREAS};
use kubewhy_engine::upstream::FeatureGate;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Most hits a search page shows.
pub(crate) const SEARCH_SHOWN: usize = 50;
/// Hits a search considers for its kind counts.
const SEARCH_POOL: usize = 400;
/// Most boxes per diagram column.
const MAX_COL: usize = 7;

pub(crate) fn kind_label(k: Kind) -> &'static str {
    match k {
        Kind::Component => "Components",
        Kind::Loop => "Control loops",
        Kind::Field => "API fields",
        Kind::Metric => "Metrics",
        Kind::FailureMode => "Failure modes",
        Kind::Symptom => "Symptoms",
        Kind::Check => "Checks",
        Kind::Fix => "Fixes",
        Kind::Concept => "Concepts",
        Kind::Myth => "Myths",
        Kind::Kep => "KEPs",
        Kind::FeatureGate => "Feature gates",
        Kind::Release => "Releases",
    }
}

fn area_label(a: &str) -> &str {
    match a {
        "apiserver" => "API server",
        "etcd" => "etcd",
        "scheduler" => "Scheduler",
        "controllers" => "Controllers",
        "kubelet" => "Kubelet and nodes",
        "networking" => "Networking",
        "dns" => "DNS",
        "storage" => "Storage",
        "operations" => "Operations",
        other => other,
    }
}

fn search_form(ctx: &Ctx, id: &str, q: &str, kind: Option<&str>) -> String {
    let mut opts = String::from("<option value=\"\">all kinds</option>");
    for k in Kind::ALL {
        let sel = if kind == Some(k.prefix()) { " selected" } else { "" };
        let _ = write!(opts, "<option value=\"{}\"{sel}>{}</option>", k.prefix(), kind_label(k));
    }
    format!(
        "<form class=\"search\" role=\"search\" action=\"{}\" method=\"get\">\n<label for=\"{id}\">Search the graph</label>\n<input id=\"{id}\" name=\"q\" type=\"search\" value=\"{}\" placeholder=\"an error message, a component, a metric…\">\n<label for=\"{id}-kind\">Kind</label>\n<select id=\"{id}-kind\" name=\"kind\">{opts}</select>\n<button type=\"submit\">Search</button>\n</form>",
        esc(&ctx.page("search")),
        esc(q)
    )
}

/// The home page: search, the areas with their failure modes, the kinds, the tools.
pub(crate) fn home(site: &Site, ctx: &Ctx) -> String {
    let kb = site.engine.knowledge();
    let mut b = String::new();
    b.push_str("<h1>kubewhy reference</h1>\n<p class=\"lead\">A curated knowledge graph of Kubernetes internals: components, control loops, API fields, metrics and the ways they fail, each with its symptoms, checks, fixes and sources.</p>\n");
    b.push_str(&search_form(ctx, "q", "", None));
    let _ = write!(b, "\n<p>Have an error message? <a href=\"{}\">Diagnose it</a>.</p>\n", esc(&ctx.page("diagnose")));
    b.push_str("<h2 id=\"areas\">Areas</h2>\n<div class=\"areas\">\n");
    for area in AREAS {
        let mut fms: Vec<&Entity> = kb.of_kind(Kind::FailureMode).filter(|e| e.failure_mode().is_some_and(|f| f.area == area)).collect();
        fms.sort_by(|a, b| a.title.cmp(&b.title));
        let _ = write!(b, "<section class=\"area\" id=\"area-{area}\"><h3>{} <span class=\"count\">{} failure modes</span></h3>\n<details><summary>Show the failure modes</summary><ul>", esc(area_label(area)), fms.len());
        for e in fms {
            let _ = write!(b, "<li>{}</li>", entity_link(ctx, &e.id, &e.title));
        }
        b.push_str("</ul></details></section>\n");
    }
    b.push_str("</div>\n<h2 id=\"kinds\">Browse by kind</h2>\n<ul class=\"kinds\">\n");
    for k in Kind::ALL {
        let n = kb.of_kind(k).count();
        let _ = writeln!(b, "<li><a href=\"{}\">{}</a> <span class=\"count\">{n}</span></li>", esc(&ctx.page(&format!("e/{}", k.prefix()))), kind_label(k));
    }
    b.push_str("</ul>\n<h2 id=\"tools\">Tools</h2>\n<ul>\n");
    let _ = writeln!(b, "<li><a href=\"{}\">Diagnose a symptom</a>: paste an error, events or <code>kubectl describe</code> output.</li>", esc(&ctx.page("diagnose")));
    let _ = writeln!(b, "<li><a href=\"{}\">Feature gates by version</a>: stage and default of every gate at a release.</li>", esc(&ctx.page("gates")));
    let _ = writeln!(b, "<li><a href=\"{}\">SPARQL</a>: query the graph (SPARQL 1.1, read-only).</li>", esc(&ctx.page("sparql")));
    let _ = writeln!(b, "<li><a href=\"{}\">The whole graph as Turtle</a>.</li>", esc(&ctx.file("graph.ttl")));
    b.push_str("</ul>\n");
    page(ctx, "Kubernetes internals reference", &b)
}

/// One search result, for the page and the JSON of the static index.
#[derive(Debug, Clone)]
pub(crate) struct SearchResult {
    pub(crate) id: String,
    pub(crate) kind: Kind,
    pub(crate) title: String,
    pub(crate) snippet: String,
}

/// Plain text of an entity that a snippet is cut from: symptom texts, summary, body.
pub(crate) fn searchable_text(e: &Entity) -> String {
    let mut t = String::new();
    if let Some(s) = e.symptom() {
        if let Some(x) = &s.text {
            t.push_str(x);
            t.push_str(". ");
        }
    }
    if let KindData::Check { command, look_for, .. } = &e.data {
        t.push_str(command.as_deref().unwrap_or(""));
        t.push(' ');
        t.push_str(look_for);
        t.push_str(". ");
    }
    t.push_str(&e.body);
    let flat: String = t.chars().map(|c| if matches!(c, '`' | '*' | '#' | '_' | '[' | ']') { ' ' } else { c }).collect();
    flat.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A snippet of at most ~240 characters around the first query word found, the words marked.
fn snippet(text: &str, words: &[String]) -> String {
    let lower = text.to_lowercase();
    let first = words.iter().filter_map(|w| lower.find(w.as_str())).min();
    let start = first.map(|i| i.saturating_sub(80)).unwrap_or(0);
    let start = (0..=start).rev().find(|i| text.is_char_boundary(*i)).unwrap_or(0);
    let body: String = text[start..].chars().take(240).collect();
    let mut s = esc(&body);
    // Mark each word where it occurs (the escaped text only changes `&<>"'`, never letters).
    for w in words.iter().filter(|w| w.chars().count() >= 3) {
        let ew = esc(w);
        let mut out = String::new();
        let mut rest = s.as_str();
        loop {
            let l = rest.to_lowercase();
            match l.find(ew.as_str()) {
                Some(i) if rest.is_char_boundary(i) && rest.is_char_boundary(i + ew.len()) => {
                    out.push_str(&rest[..i]);
                    let _ = write!(out, "<mark>{}</mark>", &rest[i..i + ew.len()]);
                    rest = &rest[i + ew.len()..];
                }
                _ => break,
            }
        }
        out.push_str(rest);
        s = out;
    }
    let pre = if start > 0 { "…" } else { "" };
    let post = if text.len() - start > body.len() { "…" } else { "" };
    format!("{pre}{s}{post}")
}

fn query_words(q: &str) -> Vec<String> {
    let mut v: Vec<String> = q.to_lowercase().split(|c: char| !c.is_alphanumeric() && c != '_' && c != '-').filter(|w| w.len() >= 2).map(str::to_string).collect();
    v.sort_by_key(|w| std::cmp::Reverse(w.len()));
    v.dedup();
    v
}

/// Runs a search: `(results shown, hits per kind over the pool)`.
pub(crate) fn run_search(site: &Site, q: &str, kind: Option<Kind>) -> (Vec<SearchResult>, BTreeMap<Kind, usize>) {
    let kb = site.engine.knowledge();
    let hits = site.engine.search(q, None, SEARCH_POOL);
    let mut counts: BTreeMap<Kind, usize> = BTreeMap::new();
    let words = query_words(q);
    let mut out = Vec::new();
    for h in &hits {
        let Some(e) = kb.get(&h.id) else { continue };
        *counts.entry(e.kind).or_default() += 1;
        if kind.is_some_and(|k| k != e.kind) || out.len() >= SEARCH_SHOWN {
            continue;
        }
        out.push(SearchResult { id: e.id.clone(), kind: e.kind, title: e.title.clone(), snippet: snippet(&searchable_text(e), &words) });
    }
    (out, counts)
}

/// The search page: the form, kind filters with counts, ranked results with snippets. In an
/// export the results are filled in by the page's script from the prebuilt index.
pub(crate) fn search(site: &Site, ctx: &Ctx, q: &str, kind: Option<Kind>) -> String {
    let mut b = String::new();
    let q = q.trim();
    let title = if q.is_empty() { "Search".to_string() } else { format!("Search: {q}") };
    let _ = writeln!(b, "<h1>{}</h1>", esc(&title));
    b.push_str(&search_form(ctx, "q", q, kind.map(|k| k.prefix())));
    if ctx.export {
        b.push_str("\n<h2 id=\"results-heading\">Results</h2>\n<nav class=\"facets\" aria-label=\"Filter by kind\" id=\"facets\"></nav>\n<p id=\"results-status\" role=\"status\">Type words above and press Search. (Search in this exported copy runs in your browser and needs JavaScript.)</p>\n<ol id=\"results\" class=\"results\"></ol>\n");
        return page(ctx, &title, &b);
    }
    if q.is_empty() {
        b.push_str("\n<p>Search titles, aliases, symptom texts and explanations: error messages, event reasons, component, loop, field and metric names all work.</p>\n");
        return page(ctx, &title, &b);
    }
    let (results, counts) = run_search(site, q, kind);
    let total: usize = counts.values().sum();
    b.push_str("\n<h2 id=\"results-heading\">Results</h2>\n<nav class=\"facets\" aria-label=\"Filter by kind\" id=\"facets\"><ul>");
    let all_cls = if kind.is_none() { " aria-current=\"page\"" } else { "" };
    let _ = write!(b, "<li><a href=\"{}\"{all_cls}>all <span class=\"count\">{total}</span></a></li>", esc(&ctx.page_q("search", &[("q", q)])));
    for (k, n) in &counts {
        let cur = if kind == Some(*k) { " aria-current=\"page\"" } else { "" };
        let _ = write!(b, "<li><a href=\"{}\"{cur}>{} <span class=\"count\">{n}</span></a></li>", esc(&ctx.page_q("search", &[("q", q), ("kind", k.prefix())])), esc(kind_label(*k)));
    }
    b.push_str("</ul></nav>\n");
    let shown = results.len();
    let of = kind.map(|k| counts.get(&k).copied().unwrap_or(0)).unwrap_or(total);
    let _ = writeln!(b, "<p id=\"results-status\" role=\"status\">{}</p>", if shown == 0 { "No entity matches these words.".to_string() } else if shown < of { format!("The best {shown} of {of} matches.") } else { format!("{shown} matches.") });
    b.push_str("<ol id=\"results\" class=\"results\">\n");
    for r in &results {
        let _ = writeln!(
            b,
            "<li><a class=\"result\" href=\"{}\">{}</a> <span class=\"badge k-{}\">{}</span> <code class=\"id\">{}</code><p class=\"snippet\">{}</p></li>",
            esc(&ctx.entity(&r.id)),
            esc(&r.title),
            r.kind.prefix(),
            r.kind.prefix(),
            esc(&r.id),
            r.snippet
        );
    }
    b.push_str("</ol>\n");
    page(ctx, &title, &b)
}

fn list_links(ctx: &Ctx, site: &Site, ids: &[String]) -> String {
    let kb = site.engine.knowledge();
    let items: Vec<String> = ids.iter().map(|id| maybe_link(ctx, site, id, kb.get(id).map(|e| e.title.as_str()).unwrap_or(id))).collect();
    items.join(", ")
}

/// A link when the entity is in the graph, else the text alone (a KEP may name a gate `n/a`).
fn maybe_link(ctx: &Ctx, site: &Site, id: &str, text: &str) -> String {
    if site.engine.knowledge().get(id).is_some() {
        entity_link(ctx, id, text)
    } else {
        esc(text)
    }
}

fn facts(site: &Site, ctx: &Ctx, e: &Entity) -> String {
    let mut rows: Vec<(&str, String)> = Vec::new();
    match &e.data {
        KindData::Component { part_of, talks_to } => {
            if let Some(p) = part_of {
                rows.push(("Part of", list_links(ctx, site, std::slice::from_ref(p))));
            }
            if !talks_to.is_empty() {
                rows.push(("Talks to", list_links(ctx, site, talks_to)));
            }
        }
        KindData::Loop { part_of, reads, writes, emits } => {
            rows.push(("Part of", list_links(ctx, site, std::slice::from_ref(part_of))));
            if !reads.is_empty() {
                rows.push(("Reads", list_links(ctx, site, reads)));
            }
            if !writes.is_empty() {
                rows.push(("Writes", list_links(ctx, site, writes)));
            }
            if !emits.is_empty() {
                rows.push(("Emits", list_links(ctx, site, emits)));
            }
        }
        KindData::Field { object, path, written_by } => {
            rows.push(("Object", format!("<code>{}</code>", esc(object))));
            rows.push(("Path", format!("<code>{}</code>", esc(path))));
            if !written_by.is_empty() {
                rows.push(("Written by", list_links(ctx, site, written_by)));
            }
        }
        KindData::Metric { name, component, metric_type, stability, labels, bad_value } => {
            rows.push(("Name", format!("<code>{}</code>", esc(name))));
            rows.push(("Type", esc(metric_type)));
            if let Some(s) = stability {
                rows.push(("Stability", esc(s)));
            }
            rows.push(("Exposed by", list_links(ctx, site, std::slice::from_ref(component))));
            if !labels.is_empty() {
                rows.push(("Labels", labels.iter().map(|l| format!("<code>{}</code>", esc(l))).collect::<Vec<_>>().join(" ")));
            }
            if let Some(b) = bad_value {
                rows.push(("A bad value", esc(b)));
            }
        }
        KindData::FailureMode(_) => {}
        KindData::Symptom(s) => {
            rows.push(("Signal", esc(s.signal.as_str())));
            if let Some(t) = &s.text {
                rows.push(("Text", format!("<code>{}</code>", esc(t))));
            }
            if let Some(r) = &s.reason {
                rows.push(("Reason", format!("<code>{}</code>", esc(r))));
            }
            if let Some(c) = s.code {
                rows.push(("Code", format!("<code>{c}</code>")));
            }
            if let Some(src) = &s.source {
                rows.push(("Emitted by", reference(ctx, src)));
            }
        }
        KindData::Check { command, look_for, probe, .. } => {
            if let Some(c) = command {
                rows.push(("Command", format!("<pre><code>{}</code></pre>", esc(c))));
            }
            rows.push(("Look for", esc(look_for)));
            if let Some(p) = probe {
                rows.push(("Live probe", format!("<code>{}</code>", esc(p))));
            }
        }
        KindData::Fix { action, command, risk } => {
            rows.push(("Action", esc(action)));
            if let Some(c) = command {
                rows.push(("Command", format!("<pre><code>{}</code></pre>", esc(c))));
            }
            rows.push(("Risk", esc(risk)));
        }
        KindData::Myth { correction, concerns } => {
            rows.push(("What is true", esc(correction)));
            if !concerns.is_empty() {
                rows.push(("Concerns", list_links(ctx, site, concerns)));
            }
        }
        KindData::Release(r) => {
            rows.push(("Released", esc(&r.date)));
            if !r.eol.is_empty() {
                rows.push(("End of life", esc(&r.eol)));
            }
            rows.push(("Source", reference(ctx, &r.source)));
        }
        KindData::Kep(k) => {
            rows.push(("SIG", esc(&k.sig)));
            rows.push(("Status", esc(&k.status)));
            rows.push(("Stage", esc(&k.stage)));
            rows.push(("Latest milestone", esc(&k.latest_milestone)));
            for (label, v) in [("Alpha", &k.alpha), ("Beta", &k.beta), ("Stable", &k.stable), ("Deprecated", &k.deprecated)] {
                if !v.is_empty() {
                    rows.push((label, esc(v)));
                }
            }
            if !k.feature_gates.is_empty() {
                let ids: Vec<String> = k.feature_gates.iter().map(|g| format!("feature-gate/{g}")).collect();
                rows.push(("Feature gates", list_links(ctx, site, &ids)));
            }
            if !k.path.is_empty() {
                let url = format!("https://github.com/kubernetes/enhancements/tree/master/{}", k.path.split('/').map(super::html::seg).collect::<Vec<_>>().join("/"));
                rows.push(("Proposal", format!("<a href=\"{}\">kubernetes/enhancements:{}</a>", esc(&url), esc(&k.path))));
            }
        }
        KindData::FeatureGate(g) => {
            rows.push(("In the current feature list", if g.in_feature_list { "yes".into() } else if g.source.starts_with("kubernetes/website:") { "no (lifecycle from the Kubernetes website's page for the gate)".into() } else { "no (known only from KEP milestones; removed or renamed since)".into() }));
            rows.push(("Source", reference(ctx, &g.source)));
        }
        KindData::Concept => {}
    }
    if let Some(fm) = e.failure_mode() {
        rows.push(("Area", esc(area_label(&fm.area))));
    }
    if e.applies.since.is_some() || e.applies.until.is_some() {
        rows.push(("Applies to", format!("Kubernetes {}", esc(&e.applies.describe()))));
    }
    if !e.aliases.is_empty() {
        rows.push(("Also called", e.aliases.iter().map(|a| esc(a)).collect::<Vec<_>>().join(" · ")));
    }
    if rows.is_empty() {
        return String::new();
    }
    let mut o = String::from("<dl class=\"facts\">\n");
    for (k, v) in rows {
        let _ = writeln!(o, "<dt>{k}</dt><dd>{v}</dd>");
    }
    o.push_str("</dl>\n");
    o
}

fn gate_lifecycle(g: &FeatureGate) -> String {
    let mut o = String::from("<table class=\"lifecycle\"><caption>Lifecycle</caption><thead><tr><th scope=\"col\">From</th><th scope=\"col\">Stage</th><th scope=\"col\">Default</th><th scope=\"col\">Locked</th></tr></thead><tbody>");
    for s in &g.step {
        let d = match s.default {
            Some(true) => "on",
            Some(false) => "off",
            None => "unknown",
        };
        let l = if s.locked == Some(true) { "yes" } else { "" };
        let _ = write!(o, "<tr><td>{}</td><td>{}</td><td>{d}</td><td>{l}</td></tr>", esc(&s.version), esc(&s.stage));
    }
    o.push_str("</tbody></table>\n");
    o
}

/// The causal chain of a failure mode: causes of causes, direct causes, it, what it leads to.
pub(crate) fn chain_svg(site: &Site, ctx: &Ctx, e: &Entity) -> String {
    let kb = site.engine.knowledge();
    let title = |id: &str| kb.get(id).map(|e| e.title.clone()).unwrap_or_else(|| id.to_string());
    let node = |id: &str| Node::entity(id, &title(id), "failure-mode", false);
    let direct: Vec<String> = site.causes.get(&e.id).map(|s| s.iter().cloned().collect()).unwrap_or_default();
    let effects: Vec<String> = site.effects.get(&e.id).map(|s| s.iter().cloned().collect()).unwrap_or_default();
    let mut second: Vec<String> = Vec::new();
    for d in direct.iter().take(MAX_COL) {
        for c in site.causes.get(d).into_iter().flatten() {
            if c != &e.id && !direct.contains(c) && !second.contains(c) {
                second.push(c.clone());
            }
        }
    }
    let capped = |ids: &[String]| -> Vec<Node> {
        let mut v: Vec<Node> = ids.iter().take(MAX_COL).map(|i| node(i)).collect();
        if ids.len() > MAX_COL {
            v.push(Node::note(format!("and {} more (see relations)", ids.len() - MAX_COL)));
        }
        v
    };
    let mut cols: Vec<Column> = Vec::new();
    let mut edges: Vec<Edge> = Vec::new();
    if !second.is_empty() {
        cols.push(("Causes of causes".into(), capped(&second)));
    }
    if !direct.is_empty() {
        cols.push(("Caused by".into(), capped(&direct)));
    }
    let this = cols.len();
    cols.push(("This failure mode".into(), vec![Node::entity(&e.id, &e.title, "failure-mode", true)]));
    if !effects.is_empty() {
        cols.push(("Leads to".into(), capped(&effects)));
    }
    if !second.is_empty() {
        for (si, s) in second.iter().take(MAX_COL).enumerate() {
            for (di, d) in direct.iter().take(MAX_COL).enumerate() {
                if site.causes.get(d).is_some_and(|c| c.contains(s)) {
                    edges.push(((0, si), (1, di)));
                }
            }
        }
    }
    if !direct.is_empty() {
        for i in 0..direct.len().min(MAX_COL) {
            edges.push(((this - 1, i), (this, 0)));
        }
    }
    for i in 0..effects.len().min(MAX_COL) {
        edges.push(((this, 0), (this + 1, i)));
    }
    let mut o = diagram(ctx, "chain", &format!("Causal chain of {}", e.title), &cols, &edges);
    if direct.is_empty() && effects.is_empty() {
        o.push_str("\n<p class=\"note\">The graph records no upstream cause and no consequence of this failure mode.</p>");
    }
    o
}

/// The mechanism path of a failure mode: its symptoms, it, the loops it happens in, their components.
pub(crate) fn mechanism_svg(site: &Site, ctx: &Ctx, e: &Entity) -> String {
    let kb = site.engine.knowledge();
    let Some(fm) = e.failure_mode() else { return String::new() };
    let node = |id: &str| {
        let (t, k) = kb.get(id).map(|x| (x.title.clone(), x.kind.prefix().to_string())).unwrap_or_else(|| (id.to_string(), id.split('/').next().unwrap_or("").to_string()));
        Node::entity(id, &t, &k, false)
    };
    let mut cols: Vec<Column> = Vec::new();
    let mut edges: Vec<Edge> = Vec::new();
    let syms: Vec<Node> = fm.symptoms.iter().take(5).map(|s| node(s)).collect();
    let has_syms = !syms.is_empty();
    if has_syms {
        let n = syms.len();
        let mut syms = syms;
        if fm.symptoms.len() > 5 {
            syms.push(Node::note(format!("and {} more symptoms", fm.symptoms.len() - 5)));
        }
        cols.push(("Symptom".into(), syms));
        for i in 0..n {
            edges.push(((0, i), (1, 0)));
        }
    }
    let fi = cols.len();
    cols.push(("Failure mode".into(), vec![Node::entity(&e.id, &e.title, "failure-mode", true)]));
    let loops: Vec<&String> = fm.loops.iter().take(MAX_COL).collect();
    let mut comps: Vec<String> = Vec::new();
    for l in &loops {
        if let Some(KindData::Loop { part_of, .. }) = kb.get(l).map(|x| &x.data) {
            if !comps.contains(part_of) {
                comps.push(part_of.clone());
            }
        }
    }
    for c in &fm.components {
        if !comps.contains(c) {
            comps.push(c.clone());
        }
    }
    comps.truncate(MAX_COL);
    if !loops.is_empty() {
        let li = cols.len();
        cols.push(("Control loop".into(), loops.iter().map(|l| node(l)).collect()));
        for i in 0..loops.len() {
            edges.push(((fi, 0), (li, i)));
        }
        if !comps.is_empty() {
            let ci = cols.len();
            for (i, l) in loops.iter().enumerate() {
                if let Some(KindData::Loop { part_of, .. }) = kb.get(l).map(|x| &x.data) {
                    if let Some(j) = comps.iter().position(|c| c == part_of) {
                        edges.push(((li, i), (ci, j)));
                    }
                }
            }
            let reached: Vec<usize> = edges.iter().filter(|(_, (c, _))| *c == ci).map(|(_, (_, j))| *j).collect();
            for j in 0..comps.len() {
                if !reached.contains(&j) {
                    edges.push(((fi, 0), (ci, j)));
                }
            }
        }
    } else {
        let ci = cols.len();
        for j in 0..comps.len() {
            edges.push(((fi, 0), (ci, j)));
        }
    }
    if !comps.is_empty() {
        cols.push(("Component".into(), comps.iter().map(|c| node(c)).collect()));
    }
    diagram(ctx, "mechanism", &format!("Mechanism path of {}", e.title), &cols, &edges)
}

/// An entity's page.
pub(crate) fn entity(site: &Site, ctx: &Ctx, e: &Entity) -> String {
    let kb = site.engine.knowledge();
    let mut b = String::new();
    let _ = writeln!(
        b,
        "<nav class=\"crumbs\" aria-label=\"Breadcrumb\"><a href=\"{}\">Home</a> › <a href=\"{}\">{}</a></nav>\n<h1>{}</h1>\n<p class=\"meta\"><span class=\"badge k-{k}\">{k}</span> <code class=\"id\">{}</code></p>",
        esc(&ctx.page("")),
        esc(&ctx.page(&format!("e/{}", e.kind.prefix()))),
        kind_label(e.kind),
        esc(&e.title),
        esc(&e.id),
        k = e.kind.prefix()
    );
    b.push_str(&facts(site, ctx, e));
    if let KindData::FeatureGate(g) = &e.data {
        b.push_str("<h2 id=\"lifecycle\">Lifecycle</h2>\n");
        if let Ok(a) = site.engine.gate(&g.name, None) {
            let _ = writeln!(b, "<p>{}</p>", esc(&a.statement));
        }
        b.push_str(&gate_lifecycle(g));
        let _ = writeln!(b, "<p><a href=\"{}\">All feature gates by version</a></p>", esc(&ctx.page_q("gates", &[("q", &g.name)])));
    }
    if e.kind == Kind::FailureMode {
        b.push_str("<h2 id=\"causal-chain\">Causal chain</h2>\n<p class=\"hint\">Upstream causes on the left, what this failure mode leads to on the right. Each box links to its page.</p>\n<div class=\"figure\">");
        b.push_str(&chain_svg(site, ctx, e));
        b.push_str("</div>\n<h2 id=\"mechanism\">Mechanism path</h2>\n<p class=\"hint\">How it shows (symptom), where it happens (control loop) and in which component.</p>\n<div class=\"figure\">");
        b.push_str(&mechanism_svg(site, ctx, e));
        b.push_str("</div>\n");
    }
    if !e.body.trim().is_empty() {
        b.push_str("<h2 id=\"explanation\">Explanation</h2>\n<div class=\"body\">\n");
        b.push_str(&markdown(&e.body));
        b.push_str("</div>\n");
    }
    if let Some(fm) = e.failure_mode() {
        if !fm.checks.is_empty() {
            b.push_str("<h2 id=\"checks\">Checks</h2>\n<ol class=\"steps\">\n");
            for id in &fm.checks {
                let Some(c) = kb.get(id) else { continue };
                let _ = write!(b, "<li>{}", entity_link(ctx, id, &c.title));
                if let KindData::Check { command, look_for, .. } = &c.data {
                    if let Some(cmd) = command {
                        let _ = write!(b, "<pre><code>{}</code></pre>", esc(cmd));
                    }
                    let _ = write!(b, "<p>Look for: {}</p>", esc(look_for));
                }
                b.push_str("</li>\n");
            }
            b.push_str("</ol>\n");
        }
        if !fm.fixes.is_empty() {
            b.push_str("<h2 id=\"fixes\">Fixes</h2>\n<ol class=\"steps\">\n");
            for id in &fm.fixes {
                let Some(f) = kb.get(id) else { continue };
                let _ = write!(b, "<li>{}", entity_link(ctx, id, &f.title));
                if let KindData::Fix { action, command, risk } = &f.data {
                    let _ = write!(b, " <span class=\"risk risk-{}\">risk {}</span><p>{}</p>", esc(risk), esc(risk), esc(action));
                    if let Some(cmd) = command {
                        let _ = write!(b, "<pre><code>{}</code></pre>", esc(cmd));
                    }
                }
                b.push_str("</li>\n");
            }
            b.push_str("</ol>\n");
        }
    }
    if let Ok(x) = site.engine.explain(&e.id) {
        if !x.loops.is_empty() {
            b.push_str("<h2 id=\"loops\">Control loops</h2>\n<table class=\"loops\"><thead><tr><th scope=\"col\">Loop</th><th scope=\"col\">Writes</th><th scope=\"col\">Emits</th><th scope=\"col\">Failure modes</th></tr></thead><tbody>\n");
            for l in &x.loops {
                let refs = |v: &[kubewhy_engine::diagnose::EntityRef]| v.iter().map(|r| entity_link(ctx, &r.id, &r.title)).collect::<Vec<_>>().join(", ");
                let _ = writeln!(b, "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>", entity_link(ctx, &l.loop_.id, &l.loop_.title), refs(&l.writes), refs(&l.emits), refs(&l.failure_modes));
            }
            b.push_str("</tbody></table>\n");
        }
        b.push_str("<h2 id=\"relations\">Relations</h2>\n<div class=\"relations\">\n");
        for (heading, cls, rels) in [("From this entity", "outgoing", &x.outgoing), ("To this entity", "incoming", &x.incoming)] {
            let _ = write!(b, "<section class=\"panel {cls}\" aria-labelledby=\"rel-{cls}\"><h3 id=\"rel-{cls}\">{heading}</h3>");
            if rels.is_empty() {
                b.push_str("<p class=\"note\">None.</p>");
            }
            let mut by: BTreeMap<&str, Vec<&kubewhy_engine::RelatedEntity>> = BTreeMap::new();
            for r in rels.iter() {
                by.entry(r.property.as_str()).or_default().push(r);
            }
            for (prop, list) in by {
                let label = if cls == "incoming" { inverse_label(prop) } else { property_label(prop) };
                let _ = write!(b, "<h4>{} <span class=\"count\">{}</span></h4><ul class=\"rel\" data-property=\"{}\">", esc(&label), list.len(), esc(prop));
                for r in list {
                    let known = kb.get(&r.id).is_some();
                    if known {
                        let _ = write!(b, "<li><a class=\"rel-link\" href=\"{}\">{}</a> <span class=\"badge k-{}\">{}</span></li>", esc(&ctx.entity(&r.id)), esc(&r.title), esc(&r.kind), esc(&r.kind));
                    } else {
                        let _ = write!(b, "<li>{} <span class=\"note\">(not in the graph)</span></li>", esc(&r.id));
                    }
                }
                b.push_str("</ul>");
            }
            b.push_str("</section>\n");
        }
        b.push_str("</div>\n");
    }
    let has_refs = !e.references.is_empty() || !e.keps.is_empty() || !e.feature_gates.is_empty();
    if has_refs {
        b.push_str("<h2 id=\"references\">References</h2>\n<ul class=\"refs\">\n");
        for n in &e.keps {
            let id = format!("kep/{n}");
            let t = kb.get(&id).map(|k| format!("KEP-{n}: {}", k.title)).unwrap_or_else(|| format!("KEP-{n}"));
            let _ = writeln!(b, "<li>{}</li>", if kb.get(&id).is_some() { entity_link(ctx, &id, &t) } else { esc(&t) });
        }
        for g in &e.feature_gates {
            let id = format!("feature-gate/{g}");
            let _ = writeln!(b, "<li>Feature gate {}</li>", if kb.get(&id).is_some() { entity_link(ctx, &id, g) } else { esc(g) });
        }
        for r in &e.references {
            let _ = writeln!(b, "<li>{}</li>", reference(ctx, r));
        }
        b.push_str("</ul>\n");
    }
    let _ = writeln!(b, "<p class=\"source\">Defined in <code>knowledge/{}</code>.</p>", esc(&e.location.to_string()));
    page(ctx, &format!("{} ({})", e.title, e.kind.prefix()), &b)
}

/// The listing of every entity of one kind.
pub(crate) fn kind_index(site: &Site, ctx: &Ctx, kind: Kind) -> String {
    let kb = site.engine.knowledge();
    let mut es: Vec<&Entity> = kb.of_kind(kind).collect();
    match kind {
        Kind::Kep => es.sort_by_key(|e| e.slug().parse::<u32>().unwrap_or(u32::MAX)),
        Kind::Release => es.sort_by_key(|e| Version::parse(e.slug()).ok()),
        _ => es.sort_by(|a, b| a.title.to_lowercase().cmp(&b.title.to_lowercase()).then(a.id.cmp(&b.id))),
    }
    let mut b = String::new();
    let _ = writeln!(b, "<nav class=\"crumbs\" aria-label=\"Breadcrumb\"><a href=\"{}\">Home</a></nav>\n<h1>{}</h1>\n<p>{} entities.</p>", esc(&ctx.page("")), kind_label(kind), es.len());
    if kind == Kind::FeatureGate {
        let _ = writeln!(b, "<p>See also the <a href=\"{}\">feature-gate table by version</a>.</p>", esc(&ctx.page("gates")));
    }
    b.push_str("<table class=\"listing\"><thead><tr><th scope=\"col\">Title</th><th scope=\"col\">Id</th><th scope=\"col\">Summary</th></tr></thead><tbody>\n");
    for e in es {
        let summary = match &e.data {
            KindData::Kep(k) => format!("{} · {} · {}", k.sig, k.status, k.stage),
            KindData::FeatureGate(g) => g.step.last().map(|s| format!("{} since {}", s.stage, s.version)).unwrap_or_default(),
            KindData::Metric { metric_type, .. } if e.body.is_empty() => metric_type.clone(),
            _ => e.summary(160),
        };
        let _ = writeln!(b, "<tr><td>{}</td><td><code>{}</code></td><td>{}</td></tr>", entity_link(ctx, &e.id, &e.title), esc(&e.id), esc(&summary));
    }
    b.push_str("</tbody></table>\n");
    page(ctx, kind_label(kind), &b)
}

/// Minor versions offered by the gate table: every release and every gate step, newest first.
pub(crate) fn gate_versions(site: &Site) -> Vec<Version> {
    let up = site.engine.knowledge().upstream();
    let mut v: Vec<Version> = up.releases.iter().filter_map(|r| Version::parse(&r.version).ok()).collect();
    for g in up.gates.values() {
        v.extend(g.step.iter().filter_map(|s| Version::parse(&s.version).ok()));
    }
    v.sort();
    v.dedup();
    v.reverse();
    v
}

/// The feature-gate table at `version` (the latest state without one), filtered by stage and name.
pub(crate) fn gates(site: &Site, ctx: &Ctx, version: Option<Version>, stage: &str, q: &str) -> String {
    let up = site.engine.knowledge().upstream();
    let versions = gate_versions(site);
    let stage_l = stage.trim().to_lowercase();
    let ql = q.trim().to_lowercase();
    let mut b = String::new();
    let title = match version {
        Some(v) => format!("Feature gates at Kubernetes {v}"),
        None => "Feature gates".to_string(),
    };
    let _ = writeln!(b, "<h1>{}</h1>\n<p>Every feature gate with its stage and default at the chosen release (without one: its latest state). Facts come from the imported upstream feature list and KEP milestones.</p>", esc(&title));
    let mut vopts = String::from("<option value=\"\">latest state</option>");
    for v in &versions {
        let sel = if Some(*v) == version { " selected" } else { "" };
        let _ = write!(vopts, "<option value=\"{v}\"{sel}>{v}</option>");
    }
    let mut sopts = String::from("<option value=\"\">any stage</option>");
    for s in ["alpha", "beta", "ga", "deprecated", "not yet"] {
        let sel = if stage_l == s { " selected" } else { "" };
        let _ = write!(sopts, "<option value=\"{s}\"{sel}>{s}</option>");
    }
    let _ = writeln!(
        b,
        "<form id=\"gate-filter\" class=\"filters\" action=\"{}\" method=\"get\">\n<label for=\"gate-version\">Kubernetes version</label> <select id=\"gate-version\" name=\"version\">{vopts}</select>\n<label for=\"gate-stage\">Stage</label> <select id=\"gate-stage\" name=\"stage\">{sopts}</select>\n<label for=\"gate-q\">Name contains</label> <input id=\"gate-q\" name=\"q\" type=\"search\" value=\"{}\">\n<button type=\"submit\">Filter</button>\n</form>",
        esc(&ctx.page("gates")),
        esc(q)
    );
    let mut rows = String::new();
    let mut shown = 0;
    for g in up.gates.values() {
        let step = match version {
            Some(v) => g.at(v),
            None => g.step.last(),
        };
        let st = step.map(|s| s.stage.to_lowercase()).unwrap_or_else(|| "not yet".into());
        let visible = (stage_l.is_empty() || st == stage_l) && (ql.is_empty() || g.name.to_lowercase().contains(&ql));
        let steps: Vec<String> = g
            .step
            .iter()
            .map(|s| format!("[\"{}\",\"{}\",{}]", esc(&s.version), esc(&s.stage), match s.default { Some(true) => "true", Some(false) => "false", None => "null" }))
            .collect();
        let default = match step.and_then(|s| s.default) {
            Some(true) => "on",
            Some(false) => "off",
            None if step.is_some() => "unknown",
            None => "",
        };
        let since = step.map(|s| s.version.as_str()).unwrap_or("");
        let life: Vec<String> = g.step.iter().map(|s| format!("{} {}", s.stage, s.version)).collect();
        let keps: Vec<String> = g.keps.iter().map(|n| maybe_link(ctx, site, &format!("kep/{n}"), &format!("KEP-{n}"))).collect();
        if visible {
            shown += 1;
        }
        let _ = writeln!(
            rows,
            "<tr data-name=\"{}\" data-steps=\"[{}]\"{}><td>{}</td><td class=\"stage\">{}</td><td class=\"default\">{default}</td><td class=\"since\">{}</td><td>{}</td><td>{}</td></tr>",
            esc(&g.name.to_lowercase()),
            steps.join(","),
            if visible { "" } else { " hidden" },
            entity_link(ctx, &format!("feature-gate/{}", g.name), &g.name),
            esc(step.map(|s| s.stage.as_str()).unwrap_or("not yet")),
            esc(since),
            esc(&life.join(" → ")),
            keps.join(", ")
        );
    }
    let _ = writeln!(b, "<p id=\"gate-count\" role=\"status\">{shown} of {} gates shown.</p>", up.gates.len());
    b.push_str("<table class=\"gates\" id=\"gates\"><thead><tr><th scope=\"col\">Gate</th><th scope=\"col\">Stage</th><th scope=\"col\">Default</th><th scope=\"col\">Since</th><th scope=\"col\">Lifecycle</th><th scope=\"col\">KEPs</th></tr></thead><tbody>\n");
    b.push_str(&rows);
    b.push_str("</tbody></table>\n");
    page(ctx, &title, &b)
}

fn diagnose_form(ctx: &Ctx, symptom: &str, version: &str, disabled: bool) -> String {
    let dis = if disabled { " disabled" } else { "" };
    format!(
        "<form class=\"diagnose\" action=\"{}\" method=\"post\">\n<label for=\"symptom\">Symptom: an error message, event lines, <code>kubectl describe</code> output, logs or a question</label>\n<textarea id=\"symptom\" name=\"symptom\" rows=\"8\" required{dis}>{}</textarea>\n<div class=\"row\"><label for=\"k8s-version\">Kubernetes version (optional)</label> <input id=\"k8s-version\" name=\"k8s_version\" value=\"{}\" placeholder=\"1.30\" size=\"8\"{dis}>\n<button type=\"submit\"{dis}>Diagnose</button></div>\n</form>",
        esc(&ctx.page("diagnose")),
        esc(symptom),
        esc(version)
    )
}

/// The diagnose page: the form, and the answer when there is one (`Err` is a message about the input).
pub(crate) fn diagnose(site: &Site, ctx: &Ctx, symptom: &str, version: &str, answer: Option<Result<Diagnosis, String>>) -> String {
    let kb = site.engine.knowledge();
    let mut b = String::from("<h1>Diagnose a symptom</h1>\n<p>The same answer as <code>kubewhy why</code>: ranked failure modes with the mechanism behind each, the checks that confirm it and tell the candidates apart, and fixes.</p>\n");
    if ctx.export {
        b.push_str("<p class=\"notice\" role=\"note\">This is an exported copy of the site: diagnosing needs the live server. Run <code>kubewhy serve</code> and open its <code>/diagnose</code> page, or run <code>kubewhy why \"&lt;symptom&gt;\"</code> in a terminal.</p>\n");
        b.push_str(&diagnose_form(ctx, "", "", true));
        return page(ctx, "Diagnose", &b);
    }
    b.push_str(&diagnose_form(ctx, symptom, version, false));
    match answer {
        None => {}
        Some(Err(msg)) => {
            let _ = writeln!(b, "<p class=\"error\" role=\"alert\">{}</p>", esc(&msg));
        }
        Some(Ok(d)) => {
            b.push_str("<h2 id=\"answer\">Diagnosis</h2>\n");
            let v = d.k8s_version.as_deref().map(|v| format!("Kubernetes {v}")).unwrap_or_else(|| "any Kubernetes version".into());
            let s = &d.signals;
            let mut sig: Vec<String> = Vec::new();
            if !s.event_reasons.is_empty() {
                sig.push(format!("event reasons {}", s.event_reasons.join(", ")));
            }
            if !s.status_reasons.is_empty() {
                sig.push(format!("status reasons {}", s.status_reasons.join(", ")));
            }
            if !s.exit_codes.is_empty() {
                sig.push(format!("exit codes {}", s.exit_codes.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(", ")));
            }
            if !s.http_codes.is_empty() {
                sig.push(format!("HTTP {}", s.http_codes.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(", ")));
            }
            if !s.templates.is_empty() {
                sig.push(format!("{} message template(s) matched", s.templates.len()));
            }
            let _ = writeln!(b, "<p class=\"meta\">{} bytes · {} · input style: {} · signals: {}</p>", d.input_bytes, esc(&v), esc(&s.input_style), esc(&if sig.is_empty() { "none recognised".into() } else { sig.join("; ") }));
            for n in &d.notices {
                let _ = writeln!(b, "<p class=\"notice\">{}</p>", esc(n));
            }
            if d.candidates.is_empty() {
                b.push_str("<p>No failure mode in the graph matches this input.</p>\n");
            }
            b.push_str("<ol class=\"candidates\">\n");
            for c in &d.candidates {
                let _ = write!(
                    b,
                    "<li class=\"candidate\"><h3>{} <span class=\"confidence\">confidence {:.2}</span></h3>\n<p class=\"meta\">area {} · loop {} · component {} · applies {}</p>\n",
                    entity_link(ctx, &c.id, &c.title),
                    c.confidence,
                    esc(area_label(&c.area)),
                    c.loop_.as_ref().map(|l| entity_link(ctx, &l.id, &l.title)).unwrap_or_else(|| "-".into()),
                    c.component.as_ref().map(|l| entity_link(ctx, &l.id, &l.title)).unwrap_or_else(|| "-".into()),
                    esc(&c.applies.description)
                );
                if !c.chain.is_empty() {
                    let cols: Vec<Column> = c
                        .chain
                        .iter()
                        .map(|st| (property_label(&st.relation), vec![Node::entity(&st.id, &st.title, &st.kind, st.id == c.id)]))
                        .collect();
                    let edges: Vec<Edge> = (1..cols.len()).map(|i| ((i - 1, 0), (i, 0))).collect();
                    let _ = writeln!(b, "<div class=\"figure\">{}</div>", compact_diagram(ctx, &format!("mech-{}", c.rank), &format!("Mechanism of {}", c.title), &cols, &edges));
                }
                for ev in c.evidence.iter().take(3) {
                    let _ = writeln!(b, "<p class=\"evidence\">Evidence: {} <code>{}</code></p>", esc(&ev.matched), esc(&ev.value));
                }
                if !c.summary.is_empty() {
                    b.push_str(&markdown(&c.summary));
                }
                if !c.checks.is_empty() {
                    b.push_str("<h4>Checks</h4><ul>");
                    for k in &c.checks {
                        let tag = if k.distinguishes.is_empty() { "" } else { " <span class=\"tag\">tells apart</span>" };
                        let _ = write!(b, "<li>{}{tag}", entity_link(ctx, &k.id, &k.title));
                        if let Some(cmd) = &k.command {
                            let _ = write!(b, "<pre><code>{}</code></pre>", esc(cmd));
                        }
                        let _ = write!(b, "<p>Look for: {}</p></li>", esc(&k.look_for));
                    }
                    b.push_str("</ul>\n");
                }
                if !c.fixes.is_empty() {
                    b.push_str("<h4>Fixes</h4><ul>");
                    for f in &c.fixes {
                        let _ = write!(b, "<li>{} <span class=\"risk risk-{}\">risk {}</span>", esc(&f.action), esc(&f.risk), esc(&f.risk));
                        if let Some(cmd) = &f.command {
                            let _ = write!(b, "<pre><code>{}</code></pre>", esc(cmd));
                        }
                        b.push_str("</li>");
                    }
                    b.push_str("</ul>\n");
                }
                if !c.references.is_empty() {
                    b.push_str("<h4>References</h4><ul class=\"refs\">");
                    for r in c.references.iter().take(6) {
                        let _ = write!(b, "<li>{}</li>", reference(ctx, r));
                    }
                    b.push_str("</ul>\n");
                }
                b.push_str("</li>\n");
            }
            b.push_str("</ol>\n");
            if !d.distinguishing_checks.is_empty() {
                b.push_str("<h2 id=\"distinguishing\">Checks that tell the candidates apart</h2>\n<ul>\n");
                for k in &d.distinguishing_checks {
                    let confirms = kb.get(&k.confirms).map(|e| e.title.as_str()).unwrap_or(&k.confirms);
                    let _ = write!(b, "<li>{}: confirms {} over {}", entity_link(ctx, &k.check, &k.title), entity_link(ctx, &k.confirms, confirms), list_links(ctx, site, &k.versus));
                    if let Some(cmd) = &k.command {
                        let _ = write!(b, "<pre><code>{}</code></pre>", esc(cmd));
                    }
                    let _ = writeln!(b, "<p>Look for: {}</p></li>", esc(&k.look_for));
                }
                b.push_str("</ul>\n");
            }
            if !d.excluded.is_empty() {
                b.push_str("<h2 id=\"excluded\">Left out at this version</h2>\n<ul>\n");
                for x in &d.excluded {
                    let _ = writeln!(b, "<li>{} (applies {})</li>", entity_link(ctx, &x.id, &x.title), esc(&x.applies));
                }
                b.push_str("</ul>\n");
            }
        }
    }
    page(ctx, "Diagnose", &b)
}

/// Example queries of the SPARQL page: (title, query).
pub(crate) const SPARQL_EXAMPLES: [(&str, &str); 4] = [
    ("Failure modes of the scheduler area", "SELECT ?fm ?title WHERE {\n  ?fm a kw:FailureMode ;\n      kw:area \"scheduler\" ;\n      rdfs:label ?title .\n} ORDER BY ?title"),
    ("What causes the etcd NOSPACE alarm, transitively", "SELECT ?cause ?title WHERE {\n  failure-mode:etcd-nospace-alarm kw:hasUpstreamCause ?cause .\n  ?cause rdfs:label ?title .\n}"),
    ("Loops of the kubelet and the metrics they emit", "SELECT ?loop ?metric WHERE {\n  ?loop kw:partOf component:kubelet .\n  OPTIONAL { ?loop kw:emits ?metric }\n} ORDER BY ?loop"),
    ("Failure modes per area", "SELECT ?area (COUNT(?fm) AS ?n) WHERE {\n  ?fm a kw:FailureMode ; kw:area ?area .\n} GROUP BY ?area ORDER BY DESC(?n)"),
];

/// The SPARQL query page: the form, examples, and (server only) a result table.
pub(crate) fn sparql(ctx: &Ctx, query: &str, result: Option<Result<String, String>>) -> String {
    let mut b = String::from("<h1>SPARQL</h1>\n");
    let _ = writeln!(
        b,
        "<p>Query the graph with SPARQL 1.1 (SELECT, ASK, CONSTRUCT, DESCRIBE; read-only, 10 s and 10,000 rows at most). The endpoint follows the SPARQL 1.1 Protocol: <code>GET /sparql?query=…</code>, <code>POST</code> form-encoded or with <code>Content-Type: application/sparql-query</code>; results as <code>application/sparql-results+json</code> or <code>text/csv</code> by <code>Accept</code> (or <code>format=json|csv</code>). Prefixes <code>kw:</code>, <code>id:</code>, <code>rdf:</code>, <code>rdfs:</code> and one per kind (<code>failure-mode:</code>, <code>component:</code>, …) are predeclared. The ontology: <a href=\"{}\">graph.ttl</a>.</p>",
        esc(&ctx.file("graph.ttl"))
    );
    if ctx.export {
        b.push_str("<p class=\"notice\" role=\"note\">This is an exported copy of the site: queries need the live server. Run <code>kubewhy serve</code> and use its <code>/sparql</code> endpoint, or <code>kubewhy sparql '&lt;query&gt;'</code> in a terminal. The whole graph is also here as <code>graph.ttl</code> for any SPARQL tool.</p>\n");
    }
    let dis = if ctx.export { " disabled" } else { "" };
    let q = if query.is_empty() { SPARQL_EXAMPLES[0].1 } else { query };
    let _ = writeln!(
        b,
        "<form class=\"sparql\" action=\"{}\" method=\"post\">\n<label for=\"query\">Query</label>\n<textarea id=\"query\" name=\"query\" rows=\"10\" spellcheck=\"false\"{dis}>{}</textarea>\n<div class=\"row\"><label for=\"format\">Results as</label> <select id=\"format\" name=\"format\"{dis}><option value=\"html\">a table</option><option value=\"json\">SPARQL JSON</option><option value=\"csv\">CSV</option></select>\n<button type=\"submit\"{dis}>Run</button></div>\n</form>",
        esc(&ctx.page("sparql")),
        esc(q)
    );
    match result {
        Some(Ok(table)) => {
            b.push_str("<h2 id=\"results\">Results</h2>\n");
            b.push_str(&table);
        }
        Some(Err(msg)) => {
            let _ = writeln!(b, "<h2 id=\"results\">Error</h2>\n<pre class=\"error\" role=\"alert\">{}</pre>", esc(&msg));
        }
        None => {}
    }
    b.push_str("<h2 id=\"examples\">Examples</h2>\n<ul class=\"examples\">\n");
    for (t, ex) in SPARQL_EXAMPLES {
        let link = if ctx.export { String::new() } else { format!(" <a href=\"{}\">run</a>", esc(&ctx.page_q("sparql", &[("query", ex), ("format", "html")]))) };
        let _ = writeln!(b, "<li><h3>{}</h3><pre><code class=\"example\">{}</code></pre>{link}</li>", esc(t), esc(ex));
    }
    b.push_str("</ul>\n");
    page(ctx, "SPARQL", &b)
}

/// The page for an unknown address.
pub(crate) fn not_found(ctx: &Ctx, what: &str) -> String {
    let b = format!("<h1>Not found</h1>\n<p>{}</p>\n<p><a href=\"{}\">Search the graph</a> or go <a href=\"{}\">home</a>.</p>", esc(what), esc(&ctx.page("search")), esc(&ctx.page("")));
    page(ctx, "Not found", &b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippet_marks_words_and_escapes() {
        let s = snippet("The node has <b>Insufficient</b> cpu for the pod", &["insufficient".into(), "cpu".into()]);
        assert!(s.contains("<mark>Insufficient</mark>"), "{s}");
        assert!(s.contains("<mark>cpu</mark>"), "{s}");
        assert!(s.contains("&lt;b&gt;"), "{s}");
    }
}
