//! Signal extraction on arbitrary text: no panic, at most one event per line.
#![no_main]
use kubewhy_engine::signals::{extract, normalize, Vocabulary};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(input) = std::str::from_utf8(data) {
        let s = extract(input, &normalize(input), &Vocabulary::default(), &[]);
        assert!(s.events.len() <= input.lines().count() + 1);
    }
});
