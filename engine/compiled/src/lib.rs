//! kubewhy's built-in knowledge in compiled form (issue 13): the entities, upstream facts,
//! topic map and full-text index that the build script produced from knowledge/, ready for
//! `kubewhy_engine::Engine::from_compiled`. Loading it costs a decode instead of parsing and
//! validating every Markdown and TOML file and rebuilding the index.

/// The compiled knowledge (`kubewhy_engine::compiled` format); empty when the built-in
/// knowledge had errors at build time (then parse `kubewhy_knowledge` instead, which reports
/// them).
pub static KNOWLEDGE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/knowledge.bin"));
