//! Times each stage of building the engine over the built-in knowledge (prints to stderr).
fn main() {
    let t = std::time::Instant::now();
    let files = kubewhy_cli::builtin_sources();
    eprintln!("embedded sources: {:?}", t.elapsed());
    let (gen, md): (Vec<_>, Vec<_>) = files.iter().cloned().partition(|f| f.path.ends_with(".toml"));
    let t = std::time::Instant::now();
    for f in &gen {
        let _ = kubewhy_engine::upstream::parse_generated(&f.text);
    }
    eprintln!("generated TOML parse only: {:?}", t.elapsed());
    let t = std::time::Instant::now();
    let (_kb, _) = kubewhy_engine::knowledge::load_sources(md);
    eprintln!("curated only (parse + validate): {:?}", t.elapsed());
    let t = std::time::Instant::now();
    let (kb, d) = kubewhy_engine::knowledge::load_sources(files);
    eprintln!("parse + validate: {:?} ({} problems)", t.elapsed(), d.len());
    let t = std::time::Instant::now();
    let g = kubewhy_engine::graph::Graph::build(&kb).expect("graph");
    eprintln!("graph: {:?} ({} triples)", t.elapsed(), g.len());
    let t = std::time::Instant::now();
    let _i = kubewhy_engine::search::SearchIndex::build(&kb).expect("index");
    eprintln!("index: {:?}", t.elapsed());
    let t = std::time::Instant::now();
    let _m = kubewhy_engine::diagnose::Matcher::new(&kb);
    eprintln!("matcher: {:?}", t.elapsed());
}
