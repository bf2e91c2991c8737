//! kubewhy's built-in knowledge in compiled form (issue 13): the entities, upstream facts,
//! topic map, full-text index and matcher that the build script produced from knowledge/ (and
//! checked to decode whole, `kubewhy_engine::compiled::verify`), ready for
//! `kubewhy_engine::Engine::from_compiled`. Loading it decodes the matcher and opens the index
//! in place; entities are decoded when first used.

/// The compiled knowledge (`kubewhy_engine::compiled` format); empty when the built-in
/// knowledge had errors at build time (then parse `kubewhy_knowledge` instead, which reports
/// them).
pub static KNOWLEDGE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/knowledge.bin"));
