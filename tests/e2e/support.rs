//! Shared helpers: one engine per test binary, and `check`-style assertions.

use kubewhy_engine::diagnose::{DiagnoseOptions, Diagnosis};
use kubewhy_engine::model::Version;
use kubewhy_engine::Engine;
use std::sync::OnceLock;

/// The engine over the built-in knowledge, loaded once.
pub(crate) fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| kubewhy_cli::load_engine(None).expect("built-in knowledge loads").0)
}

/// Diagnoses `input` at an optional version with the default top 5.
pub(crate) fn why(input: &str, version: Option<&str>) -> Diagnosis {
    let opts = DiagnoseOptions { k8s_version: version.map(|v| Version::parse(v).expect("version")), top: 5 };
    engine().diagnose(input, opts).expect("diagnosis succeeds")
}

/// Ids of the ranked candidates.
pub(crate) fn ids(d: &Diagnosis) -> Vec<&str> {
    d.candidates.iter().map(|c| c.id.as_str()).collect()
}

/// Asserts that the top-ranked candidate for `input` is `expected`.
pub(crate) fn check_top(input: &str, version: Option<&str>, expected: &str) -> Diagnosis {
    let d = why(input, version);
    assert_eq!(
        d.candidates.first().map(|c| c.id.as_str()),
        Some(expected),
        "input {input:?} at {version:?}: ranked {:?}",
        ids(&d)
    );
    d
}

/// Reads a fixture from tests/fixtures.
pub(crate) fn fixture(name: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("fixture {}: {e}", p.display()))
}
