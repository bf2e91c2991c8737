//! The SPARQL guard and parser on arbitrary text: no panic, no stack overflow.
#![no_main]
use kubewhy_engine::graph::guard;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(q) = std::str::from_utf8(data) {
        if guard::check_text(q).is_ok() {
            if let Ok(parsed) = spargebra::SparqlParser::new().parse_query(q) {
                let _ = guard::check_query(&parsed, 20_000);
            }
        }
    }
});
