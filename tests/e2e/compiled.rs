//! Issue 13: the knowledge compiled at build time answers exactly like the knowledge parsed
//! from its files. Every gold case (and every real-world report of the ledger) is diagnosed
//! by both engines, with and without a cluster version, and the answers compared as JSON.

use kubewhy_engine::diagnose::DiagnoseOptions;
use kubewhy_engine::model::Version;
use kubewhy_engine::Engine;
use std::path::Path;

fn inputs() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files: Vec<_> = std::fs::read_dir(root.join("evals/cases")).expect("evals/cases").map(|e| e.expect("entry").path()).collect();
    files.sort();
    files.push(root.join("evals/realworld/cases.jsonl"));
    files.push(root.join("evals/realworld/ledger.jsonl"));
    let mut out = Vec::new();
    for f in files {
        for line in std::fs::read_to_string(&f).expect("cases read").lines().filter(|l| !l.trim().is_empty()) {
            let v: serde_json::Value = serde_json::from_str(line).expect("case is JSON");
            if let Some(s) = v["input"].as_str().or_else(|| v["symptom"].as_str()) {
                out.push(s.to_string());
            }
        }
    }
    out
}

#[test]
fn compiled_and_parsed_knowledge_give_byte_identical_answers() {
    let compiled = kubewhy_cli::compiled_builtin().expect("compiled knowledge");
    assert!(!compiled.is_empty(), "the build embedded no compiled knowledge (did the built-in knowledge have errors?)");
    let fast = Engine::from_compiled(compiled).expect("compiled knowledge loads");
    let (slow, _) = Engine::from_sources(kubewhy_cli::builtin_sources()).expect("built-in knowledge parses");
    let inputs = inputs();
    assert!(inputs.len() > 1000, "only {} inputs", inputs.len());
    let v130 = Version::parse("1.30").expect("version");
    let mut compared = 0;
    for input in &inputs {
        for k8s_version in [None, Some(v130)] {
            let opts = DiagnoseOptions { k8s_version, top: 5 };
            let a = fast.diagnose(input, opts).map(|d| serde_json::to_string(&d).expect("json")).map_err(|e| e.to_string());
            let b = slow.diagnose(input, opts).map(|d| serde_json::to_string(&d).expect("json")).map_err(|e| e.to_string());
            assert_eq!(a, b, "answers differ for {input:?} at {k8s_version:?}");
            compared += 1;
        }
    }
    assert_eq!(compared, inputs.len() * 2);
    // The compiled engine decoded entities one by one so far (what a one-shot `why` does).
    let (decoded, total, all) = fast.knowledge().decoded().expect("compiled knowledge decodes lazily");
    assert!(!all && decoded < total, "{decoded} of {total} decoded one by one, all: {all}");
    assert_eq!(fast.knowledge().entities(), slow.knowledge().entities());
    // Search and explain read the same index and names.
    for q in ["insufficient cpu", "CrashLoopBackOff", "etcd defrag", "why is kubectl slow"] {
        assert_eq!(fast.search(q, None, 10), slow.search(q, None, 10), "{q}");
    }
}
