//! Compiles the built-in knowledge (issue 13): parses and validates every file under
//! knowledge/ with the engine's own loader, builds the full-text index, and writes the
//! compiled form (`kubewhy_engine::compiled`) to `$OUT_DIR/knowledge.bin` for `src/lib.rs` to
//! embed. Cargo re-runs this script whenever the engine or the knowledge crate changes (they
//! are its build dependencies; the knowledge crate is rebuilt when any of its files changes).
//!
//! When the knowledge has errors the build does not fail: it writes an empty file and a cargo
//! warning, and the binary then parses the knowledge at run time and reports the errors with
//! their file:line, as `kubewhy lint knowledge` does.

/// Names a compiled knowledge file to embed instead of compiling knowledge/: the benchmark
/// builds a binary with a synthetic graph three times the size this way, to time the embedded
/// path (`cli/benches/why.rs`). The file must pass [`kubewhy_engine::compiled::verify`].
const EMBED_ENV: &str = "KUBEWHY_EMBED_COMPILED";

fn main() {
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR for build scripts")).join("knowledge.bin");
    println!("cargo:rerun-if-env-changed={EMBED_ENV}");
    println!("cargo:rerun-if-changed=build.rs");
    let bytes = match std::env::var_os(EMBED_ENV).filter(|p| !p.is_empty()) {
        Some(path) => embedded_file(std::path::Path::new(&path)),
        None => compiled_knowledge(),
    };
    std::fs::write(&out, &bytes).unwrap_or_else(|e| panic!("cannot write {}: {e}", out.display()));
}

/// The file [`EMBED_ENV`] names, checked with `verify`; a file that cannot be read or is not
/// compiled knowledge of this engine fails the build with the path and the reason.
fn embedded_file(path: &std::path::Path) -> Vec<u8> {
    println!("cargo:rerun-if-changed={}", path.display());
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{EMBED_ENV}: cannot read {}: {e}", path.display()));
    if let Err(e) = kubewhy_engine::compiled::verify(bytes.clone()) {
        panic!("{EMBED_ENV}: {} is not compiled knowledge this engine can embed: {e}", path.display());
    }
    bytes
}

/// knowledge/ parsed, validated, compiled and verified; empty (with a cargo warning) when the
/// knowledge has errors, so that the binary parses it at run time and reports them.
fn compiled_knowledge() -> Vec<u8> {
    let files = kubewhy_engine::knowledge::sources_from(kubewhy_knowledge::files());
    match kubewhy_engine::Engine::from_sources(files) {
        // What a binary decodes on demand is checked here once: every entity decodes.
        Ok((engine, _warnings)) => match engine.compile().and_then(|b| kubewhy_engine::compiled::verify(b.clone()).map(|()| b).map_err(Into::into)) {
            Ok(b) => b,
            Err(e) => {
                println!("cargo:warning=the built-in knowledge could not be compiled ({e}); kubewhy will parse it at run time");
                Vec::new()
            }
        },
        Err(e) => {
            println!("cargo:warning=the built-in knowledge is not valid ({e}); kubewhy will parse it at run time and report every error (run `kubewhy lint knowledge`)");
            Vec::new()
        }
    }
}
