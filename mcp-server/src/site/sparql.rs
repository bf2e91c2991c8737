//! The SPARQL 1.1 Protocol endpoint at `/sparql`.
//!
//! - query operation by `GET ?query=`, `POST` form-encoded (`query=`) and `POST` with
//!   `Content-Type: application/sparql-query` (the body is the query);
//! - results by `Accept` (or `format=json|csv|html|ntriples`): SELECT and ASK as
//!   `application/sparql-results+json`, SELECT as `text/csv` (SPARQL 1.1 CSV), CONSTRUCT and
//!   DESCRIBE as `application/n-triples`; a browser (`text/html` first) gets an HTML table;
//! - read-only (updates are refused), with the engine's time and row limits
//!   ([`QueryLimits::default`]); `default-graph-uri` and `named-graph-uri` are refused, since
//!   the graph has one dataset;
//! - 400 with the parser's message for a bad query, 503 for a query over its time limit.

use super::html::{esc, Ctx};
use super::pages;
use kubewhy_engine::graph::{GraphError, QueryLimits, QueryOutput, RdfTerm};
use kubewhy_engine::Engine;
use serde_json::{json, Map, Value};
use std::fmt::Write as _;

/// A result format the endpoint can write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// `application/sparql-results+json`.
    Json,
    /// `text/csv`.
    Csv,
    /// `text/html` (a page with a table).
    Html,
    /// `application/n-triples` (graph results).
    NTriples,
}

impl Format {
    fn from_param(p: &str) -> Option<Format> {
        Some(match p.to_ascii_lowercase().as_str() {
            "json" | "srj" | "application/sparql-results+json" | "application/json" => Format::Json,
            "csv" | "text/csv" => Format::Csv,
            "html" | "text/html" => Format::Html,
            "nt" | "ntriples" | "n-triples" | "application/n-triples" => Format::NTriples,
            _ => return None,
        })
    }
}

/// Picks the format from a `format` parameter, else from `Accept` (q-values honoured), for a
/// result that is a graph (`graph`) or solutions/boolean. `None` when nothing acceptable exists.
pub(crate) fn negotiate(format: Option<&str>, accept: Option<&str>, graph: bool) -> Result<Format, String> {
    if let Some(f) = format.filter(|f| !f.is_empty()) {
        return Format::from_param(f).ok_or_else(|| format!("unknown format `{f}` (json, csv, html, ntriples)"));
    }
    let offered: &[(&str, Format)] = if graph {
        &[("application/n-triples", Format::NTriples), ("text/plain", Format::NTriples), ("text/html", Format::Html)]
    } else {
        &[("application/sparql-results+json", Format::Json), ("application/json", Format::Json), ("text/csv", Format::Csv), ("text/html", Format::Html)]
    };
    let Some(accept) = accept.filter(|a| !a.trim().is_empty()) else { return Ok(offered[0].1) };
    let mut best: Option<(f32, usize, Format)> = None;
    for part in accept.split(',') {
        let mut it = part.split(';');
        let mime = it.next().unwrap_or("").trim().to_ascii_lowercase();
        let q = it.filter_map(|p| p.trim().strip_prefix("q=")).find_map(|v| v.trim().parse::<f32>().ok()).unwrap_or(1.0);
        if q <= 0.0 {
            continue;
        }
        for (i, (m, f)) in offered.iter().enumerate() {
            let hit = mime == *m || mime == "*/*" || (mime.ends_with("/*") && m.starts_with(mime.trim_end_matches('*')));
            // Exact types beat wildcards at equal q; the server's order breaks ties.
            let rank = if mime == *m { i } else { i + 100 };
            if hit && best.is_none_or(|(bq, br, _)| q > bq || (q == bq && rank < br)) {
                best = Some((q, rank, *f));
            }
        }
    }
    best.map(|(_, _, f)| f).ok_or_else(|| format!("none of the accepted types ({accept}) can be produced; offered: {}", offered.iter().map(|(m, _)| *m).collect::<Vec<_>>().join(", ")))
}

/// A response the router turns into HTTP: status, content type, body.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) content_type: &'static str,
    pub(crate) body: String,
    pub(crate) truncated: bool,
}

fn text(status: u16, msg: impl Into<String>) -> Reply {
    let mut body = msg.into();
    body.push('\n');
    Reply { status, content_type: "text/plain; charset=utf-8", body, truncated: false }
}

/// Runs one query operation: parameters already decoded (`query`, `format`, dataset URIs).
pub(crate) fn run(engine: &Engine, ctx: &Ctx, params: &[(String, String)], body_query: Option<String>, accept: Option<&str>) -> Reply {
    let get = |k: &str| params.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    if params.iter().any(|(k, _)| k == "default-graph-uri" || k == "named-graph-uri" || k == "using-graph-uri" || k == "using-named-graph-uri") {
        return text(400, "default-graph-uri and named-graph-uri are not supported: the graph is one dataset (its default graph)");
    }
    if params.iter().any(|(k, _)| k == "update") {
        return text(400, "the graph is read-only: SPARQL Update is not accepted");
    }
    let queries = params.iter().filter(|(k, _)| k == "query").count();
    if queries > 1 {
        return text(400, "give exactly one `query` parameter");
    }
    let query = match body_query.or_else(|| get("query").map(str::to_string)) {
        Some(q) if !q.trim().is_empty() => q,
        _ => return text(400, "missing `query`: send GET /sparql?query=..., POST form-encoded query=..., or POST with Content-Type: application/sparql-query"),
    };
    let format = get("format");
    let html_wanted = matches!(format, Some(f) if f.eq_ignore_ascii_case("html"));
    let result = engine.sparql_terms(&query, QueryLimits::default());
    let out = match result {
        Ok(o) => o,
        Err(e) => {
            let status = match e {
                GraphError::Syntax(_) | GraphError::UpdateRefused | GraphError::Refused(_) => 400,
                GraphError::Timeout(_) | GraphError::Busy(_) => 503,
                _ => 500,
            };
            let wants_html = html_wanted || (format.is_none() && negotiate(None, accept, false).ok() == Some(Format::Html));
            if wants_html {
                return Reply { status, content_type: "text/html; charset=utf-8", body: pages::sparql(ctx, &query, Some(Err(e.to_string()))), truncated: false };
            }
            return text(status, e.to_string());
        }
    };
    let graph = matches!(out, QueryOutput::Graph { .. });
    let fmt = match negotiate(format, accept, graph) {
        Ok(f) => f,
        Err(msg) => return text(406, msg),
    };
    let truncated = match &out {
        QueryOutput::Solutions { truncated, .. } | QueryOutput::Graph { truncated, .. } => *truncated,
        QueryOutput::Boolean { .. } => false,
    };
    let (content_type, body) = match (fmt, &out) {
        (Format::Html, _) => ("text/html; charset=utf-8", pages::sparql(ctx, &query, Some(Ok(html_table(ctx, &out))))),
        (Format::Json, QueryOutput::Solutions { .. } | QueryOutput::Boolean { .. }) => ("application/sparql-results+json", results_json(&out).to_string()),
        (Format::Csv, QueryOutput::Solutions { variables, rows, .. }) => ("text/csv; charset=utf-8", results_csv(variables, rows)),
        (Format::Csv, QueryOutput::Boolean { .. }) => return text(406, "an ASK result has no CSV form; ask for application/sparql-results+json"),
        (_, QueryOutput::Graph { ntriples, .. }) => ("application/n-triples", ntriples.clone()),
        (Format::NTriples, _) => return text(406, "a SELECT or ASK result has no N-Triples form; ask for application/sparql-results+json or text/csv"),
    };
    Reply { status: 200, content_type, body, truncated }
}

fn term_json(t: &RdfTerm) -> Value {
    match t {
        RdfTerm::Iri { value } => json!({"type": "uri", "value": value}),
        RdfTerm::Blank { value } => json!({"type": "bnode", "value": value}),
        RdfTerm::Literal { value, datatype, language } => {
            let mut m = Map::new();
            m.insert("type".into(), "literal".into());
            m.insert("value".into(), value.clone().into());
            if let Some(l) = language {
                m.insert("xml:lang".into(), l.clone().into());
            }
            if let Some(d) = datatype {
                m.insert("datatype".into(), d.clone().into());
            }
            Value::Object(m)
        }
    }
}

/// SPARQL 1.1 Query Results JSON for a SELECT or ASK result.
pub(crate) fn results_json(out: &QueryOutput<RdfTerm>) -> Value {
    match out {
        QueryOutput::Boolean { value } => json!({"head": {}, "boolean": value}),
        QueryOutput::Solutions { variables, rows, .. } => {
            let bindings: Vec<Value> = rows
                .iter()
                .map(|r| {
                    let mut m = Map::new();
                    for (v, cell) in variables.iter().zip(r) {
                        if let Some(t) = cell {
                            m.insert(v.clone(), term_json(t));
                        }
                    }
                    Value::Object(m)
                })
                .collect();
            json!({"head": {"vars": variables}, "results": {"bindings": bindings}})
        }
        QueryOutput::Graph { .. } => json!({"head": {}}),
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn term_plain(t: &RdfTerm) -> String {
    match t {
        RdfTerm::Iri { value } | RdfTerm::Literal { value, .. } => value.clone(),
        RdfTerm::Blank { value } => format!("_:{value}"),
    }
}

/// SPARQL 1.1 Query Results CSV: a header of variable names, one line per row, CRLF endings.
pub(crate) fn results_csv(variables: &[String], rows: &[Vec<Option<RdfTerm>>]) -> String {
    let mut o = variables.iter().map(|v| csv_field(v)).collect::<Vec<_>>().join(",");
    o.push_str("\r\n");
    for r in rows {
        o.push_str(&r.iter().map(|c| c.as_ref().map(|t| csv_field(&term_plain(t))).unwrap_or_default()).collect::<Vec<_>>().join(","));
        o.push_str("\r\n");
    }
    o
}

fn html_table(ctx: &Ctx, out: &QueryOutput<RdfTerm>) -> String {
    let mut b = String::new();
    match out {
        QueryOutput::Boolean { value } => {
            let _ = writeln!(b, "<p class=\"boolean\">{value}</p>");
        }
        QueryOutput::Graph { ntriples, triples, truncated } => {
            let _ = writeln!(b, "<p>{triples} triple(s){}.</p><pre>{}</pre>", if *truncated { ", cut at the row limit" } else { "" }, esc(ntriples));
        }
        QueryOutput::Solutions { variables, rows, truncated } => {
            let _ = writeln!(b, "<p role=\"status\">{} row(s){}.</p>", rows.len(), if *truncated { ", cut at the row limit" } else { "" });
            b.push_str("<table class=\"solutions\"><thead><tr>");
            for v in variables {
                let _ = write!(b, "<th scope=\"col\">?{}</th>", esc(v));
            }
            b.push_str("</tr></thead><tbody>\n");
            for r in rows {
                b.push_str("<tr>");
                for c in r {
                    let cell = match c {
                        None => String::new(),
                        Some(RdfTerm::Iri { value }) => match kubewhy_engine::ontology::id_of_iri(value) {
                            Some(id) => format!("<a href=\"{}\">{}</a>", esc(&ctx.entity(id)), esc(id)),
                            None => format!("&lt;{}&gt;", esc(value)),
                        },
                        Some(t) => esc(&term_plain(t)),
                    };
                    let _ = write!(b, "<td>{cell}</td>");
                }
                b.push_str("</tr>\n");
            }
            b.push_str("</tbody></table>\n");
        }
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_header_negotiation() {
        assert_eq!(negotiate(None, None, false), Ok(Format::Json));
        assert_eq!(negotiate(None, Some("text/csv"), false), Ok(Format::Csv));
        assert_eq!(negotiate(None, Some("text/html,application/xhtml+xml,*/*;q=0.8"), false), Ok(Format::Html));
        assert_eq!(negotiate(None, Some("text/csv;q=0.5, application/sparql-results+json"), false), Ok(Format::Json));
        assert_eq!(negotiate(None, Some("*/*"), true), Ok(Format::NTriples));
        assert_eq!(negotiate(Some("csv"), Some("application/json"), false), Ok(Format::Csv));
        assert!(negotiate(None, Some("image/png"), false).is_err());
    }

    #[test]
    fn csv_quotes_fields() {
        let rows = vec![vec![Some(RdfTerm::Literal { value: "a, \"b\"".into(), datatype: None, language: None }), None]];
        assert_eq!(results_csv(&["x".into(), "y".into()], &rows), "x,y\r\n\"a, \"\"b\"\"\",\r\n");
    }
}
