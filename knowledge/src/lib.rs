//! The curated knowledge files (Markdown with TOML front matter) and the ontology,
//! embedded into the binary at build time so that `kubewhy` works with no files around it.

pub use include_dir::Dir;
use include_dir::include_dir;

/// Every file under `knowledge/` (entities in their kind folders, `ontology.ttl`, `README.md`).
/// Paths are relative to `knowledge/`, e.g. `failure-modes/scheduler/insufficient-resources.md`.
pub static KNOWLEDGE: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR");

/// The ontology in Turtle (`knowledge/ontology.ttl`).
pub const ONTOLOGY_TTL: &str = include_str!("../ontology.ttl");
