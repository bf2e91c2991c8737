//! The front-matter splitter and the whole loader on one arbitrary knowledge file: no panic.
#![no_main]
use kubewhy_engine::knowledge::{load_sources, split_front_matter, SourceFile};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = split_front_matter(text);
        let _ = load_sources([SourceFile { path: "component/fuzz.md".into(), text: text.to_string() }]);
    }
});
