//! The curated knowledge files (Markdown with TOML front matter) and the ontology,
//! embedded into the binary at build time so that `kubewhy` works with no files around it.

pub use include_dir::Dir;
use include_dir::include_dir;

/// Every file under `knowledge/` (entities in their kind folders, `ontology.ttl`, `README.md`).
/// Paths are relative to `knowledge/`, e.g. `failure-modes/scheduler/insufficient-resources.md`.
pub static KNOWLEDGE: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR");

/// The ontology in Turtle (`knowledge/ontology.ttl`).
pub const ONTOLOGY_TTL: &str = include_str!("../ontology.ttl");

/// Every embedded text file as `(path relative to knowledge/, text)`, in directory order.
/// Which of them are knowledge files is the engine's call (`kubewhy_engine::knowledge::sources_from`).
pub fn files() -> Vec<(String, &'static str)> {
    fn walk(dir: &'static Dir<'static>, out: &mut Vec<(String, &'static str)>) {
        for f in dir.files() {
            if let Some(text) = f.contents_utf8() {
                out.push((f.path().to_string_lossy().replace('\\', "/"), text));
            }
        }
        for d in dir.dirs() {
            walk(d, out);
        }
    }
    let mut out = Vec::new();
    walk(&KNOWLEDGE, &mut out);
    out
}
