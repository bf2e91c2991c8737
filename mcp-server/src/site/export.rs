//! The static export: the whole site as files that any static host serves.
//!
//! Layout: `index.html`, `search/index.html`, `gates/index.html`, `diagnose/index.html`,
//! `sparql/index.html`, `e/<kind>/index.html`, `e/<kind>/<slug>/index.html`, `404.html`,
//! `assets/site.css`, `assets/site.js`, `search-index.json` (the prebuilt index the search page's
//! script ranks in the browser) and `graph.ttl`. Links are relative to each page unless a base
//! path is given, so the tree works from any directory of any host (`python3 -m http.server`).
//! The diagnose and SPARQL pages say that they need `kubewhy serve`.

use super::html::Ctx;
use super::{pages, Site, SITE_CSS, SITE_JS};
use kubewhy_engine::model::{Kind, KindData};
use kubewhy_engine::Engine;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Options of [`export`].
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    /// Absolute path the site will be served under (`/kubewhy/`); `None` writes relative links.
    pub base_path: Option<String>,
}

/// What [`export`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExportReport {
    /// Files written.
    pub files: usize,
    /// Bytes written.
    pub bytes: u64,
    /// Entity pages among the files.
    pub entity_pages: usize,
}

/// Errors of [`export`].
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// A file or directory could not be written.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// An entity's slug cannot be a directory name (it holds `/`, `\` or is `.`/`..`).
    #[error("entity `{0}` has a slug that cannot be a directory name")]
    UnsafeSlug(String),
    /// The base path is not absolute (`/docs/`).
    #[error("base path `{0}` must start with `/`")]
    BasePath(String),
    /// The Turtle export of the graph failed.
    #[error("exporting the graph as Turtle failed: {0}")]
    Graph(String),
}

struct Writer {
    dir: PathBuf,
    files: usize,
    bytes: u64,
}

impl Writer {
    fn write(&mut self, rel: &str, data: &[u8]) -> Result<(), ExportError> {
        let path = self.dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| ExportError::Io { path: parent.to_path_buf(), source })?;
        }
        std::fs::write(&path, data).map_err(|source| ExportError::Io { path: path.clone(), source })?;
        self.files += 1;
        self.bytes += data.len() as u64;
        Ok(())
    }
}

fn safe_slug(slug: &str) -> bool {
    !slug.is_empty() && slug != "." && slug != ".." && !slug.contains(['/', '\\', '\0'])
}

/// The prebuilt search index: `{"kinds": {prefix: label} (in listing order), "docs": [{"id",
/// "k" (kind), "t" (title), "a" (aliases), "x" (symptom text, check command, the start of the
/// body), "s" (a summary)}]}`, docs in id order.
pub(crate) fn search_index(site: &Site) -> Value {
    let mut docs: Vec<Value> = Vec::new();
    let mut es: Vec<_> = site.engine.knowledge().entities().iter().collect();
    es.sort_by(|a, b| a.id.cmp(&b.id));
    for e in es {
        let text = pages::searchable_text(e);
        let x: String = text.chars().take(360).collect();
        let s = match &e.data {
            KindData::Kep(k) => format!("{} · {} · {}", k.sig, k.status, k.stage),
            KindData::FeatureGate(g) => g.step.last().map(|s| format!("{} since {}", s.stage, s.version)).unwrap_or_default(),
            _ => e.summary(200),
        };
        docs.push(json!({"id": e.id, "k": e.kind.prefix(), "t": e.title, "a": e.aliases, "x": x, "s": s}));
    }
    let kinds: serde_json::Map<String, Value> = Kind::ALL.iter().map(|k| (k.prefix().to_string(), Value::String(pages::kind_label(*k).to_string()))).collect();
    json!({"kinds": kinds, "docs": docs})
}

/// Writes the whole site into `dir` (created if missing; files already there are overwritten).
///
/// # Errors
/// [`ExportError`] naming the path that could not be written, an unusable slug or base path.
pub fn export(engine: Arc<Engine>, dir: &Path, opts: &ExportOptions) -> Result<ExportReport, ExportError> {
    let base = match &opts.base_path {
        Some(b) if !b.starts_with('/') => return Err(ExportError::BasePath(b.clone())),
        Some(b) => Some(format!("{}/", b.trim_end_matches('/'))),
        None => None,
    };
    let site = Site::new(engine);
    let ctx = |depth: usize| Ctx::export(depth, base.as_deref());
    let mut w = Writer { dir: dir.to_path_buf(), files: 0, bytes: 0 };
    w.write("index.html", pages::home(&site, &ctx(0)).as_bytes())?;
    w.write("search/index.html", pages::search(&site, &ctx(1), "", None).as_bytes())?;
    w.write("gates/index.html", pages::gates(&site, &ctx(1), None, "", "").as_bytes())?;
    w.write("diagnose/index.html", pages::diagnose(&site, &ctx(1), "", "", None).as_bytes())?;
    w.write("sparql/index.html", pages::sparql(&ctx(1), "", None).as_bytes())?;
    w.write("404.html", pages::not_found(&ctx(0), "This page is not part of the exported site.").as_bytes())?;
    w.write("assets/site.css", SITE_CSS.as_bytes())?;
    w.write("assets/site.js", SITE_JS.as_bytes())?;
    w.write("search-index.json", search_index(&site).to_string().as_bytes())?;
    let ttl = site.engine.graph().export("turtle").map_err(|e| ExportError::Graph(e.to_string()))?;
    w.write("graph.ttl", ttl.as_bytes())?;
    for k in Kind::ALL {
        w.write(&format!("e/{}/index.html", k.prefix()), pages::kind_index(&site, &ctx(2), k).as_bytes())?;
    }
    let mut entity_pages = 0;
    let c3 = ctx(3);
    for e in site.engine.knowledge().entities() {
        if !safe_slug(e.slug()) {
            return Err(ExportError::UnsafeSlug(e.id.clone()));
        }
        // The directory follows the id (as links do), whatever the entity's kind.
        let prefix = e.id.split_once('/').map(|(p, _)| p).unwrap_or("entity");
        let rel = format!("e/{prefix}/{}/index.html", e.slug());
        w.write(&rel, pages::entity(&site, &c3, e).as_bytes())?;
        entity_pages += 1;
    }
    tracing::info!(files = w.files, bytes = w.bytes, dir = %dir.display(), "exported the site");
    Ok(ExportReport { files: w.files, bytes: w.bytes, entity_pages })
}
