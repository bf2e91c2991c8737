//! Synthetic knowledge for tests and benchmarks — never knowledge.
//!
//! [`triple`] makes a graph about three times the size of a real one, generated from the real
//! entities: every entity file is kept and copied twice under renamed ids, so the copies have
//! the same shape (kinds, relations, levels, cues, checks, fixes, bodies) as the originals and
//! load with no errors. The benchmark of `kubewhy why` uses it to see how cold start and
//! diagnosis grow with the graph (issue 13). Nothing here is embedded or shipped as knowledge.
//!
//! How a copy is made (tag `x2` or `x3`):
//! - every id defined by an entity file (its `id`, and the ids of its inline `[[symptom]]`,
//!   `[[check]]` and `[[fix]]` tables) is renamed with the tag as a slug prefix: `kind/slug` becomes
//!   `kind/x2-slug`, so an inline table's default id `kind/parent-N` becomes `kind/x2-parent-N`,
//!   what the loader derives from the renamed parent;
//! - every string value of the front matter equal to such an id (a reference from the copy to
//!   an id the copy renames) is renamed the same way; references to ids defined elsewhere
//!   (generated KEPs, feature gates, releases, imported metrics) are left as they are;
//! - the file is renamed after its new slug (`failure-modes/etcd/x.md` → `failure-modes/etcd/x2-x.md`),
//!   so locations are distinct;
//! - titles, aliases and symptom message templates get ` x2` appended, so each copy is a
//!   distinct part of the graph: a real message still matches only the original templates
//!   (the copies' templates share their words, so the matchers still try them);
//! - the body is kept as is.
//!
//! Files that are not entity files (`generated/*.toml`, `metrics-supplement.toml`,
//! `topics.toml`) are kept once.

use crate::knowledge::{is_knowledge_file, split_front_matter, SourceFile};
use std::collections::HashSet;
use toml::{Table, Value};

/// The tags of the two copies [`triple`] adds.
pub const TRIPLE_TAGS: [&str; 2] = ["x2", "x3"];

/// The original files plus two renamed copies of every entity file (tags `x2` and `x3`, see
/// the module documentation), sorted by path like [`crate::knowledge::read_dir`] sorts.
///
/// Input: knowledge files as from [`crate::knowledge::sources_from`] or
/// [`crate::knowledge::read_dir`]. Output: about three times the entities, symptoms, templates,
/// aliases and relations of the entity files; the generated upstream files, the metrics
/// supplement and the topic map once. When the input loads with no errors, so does the output.
/// An entity file whose front matter cannot be read is kept once and not copied (its problem
/// is reported once, by the loader).
pub fn triple(files: &[SourceFile]) -> Vec<SourceFile> {
    let mut out = files.to_vec();
    for tag in TRIPLE_TAGS {
        out.extend(renamed_copies(files, tag));
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// One renamed copy of every entity file of `files` (only the copies, unsorted).
///
/// Input: knowledge files; `tag`: a slug-safe tag (letters, digits, `-`, `_`, `.`), e.g. `x2`,
/// put before the slug of every id and file name of the copy (`kind/x2-slug`) and after every
/// title, alias and symptom template (`... x2`). Entity files whose front matter cannot be read
/// are skipped; other files are not copied.
pub fn renamed_copies(files: &[SourceFile], tag: &str) -> Vec<SourceFile> {
    let parsed: Vec<(&SourceFile, Table, String)> = files
        .iter()
        .filter(|f| is_entity_file(&f.path))
        .filter_map(|f| {
            let (fm, _, body) = split_front_matter(&f.text).ok()?;
            let table = fm.parse::<Table>().ok()?;
            table.get("id").and_then(Value::as_str)?.split_once('/')?;
            Some((f, table, body))
        })
        .collect();
    let mut renames: HashSet<String> = HashSet::new();
    for (_, table, _) in &parsed {
        defined_ids(table, &mut renames);
    }
    parsed
        .into_iter()
        .filter_map(|(file, mut table, body)| {
            let slug = table.get("id").and_then(Value::as_str)?.split_once('/')?.1.to_string();
            for (_, value) in table.iter_mut() {
                rename_refs(value, &renames, tag);
            }
            vary_names(&mut table, tag);
            if table.get("id").and_then(Value::as_str).is_some_and(|id| id.starts_with("symptom/")) {
                append(table.get_mut("text"), tag);
            }
            for key in ["symptom", "check", "fix"] {
                if let Some(Value::Array(items)) = table.get_mut(key) {
                    for item in items.iter_mut().filter_map(Value::as_table_mut) {
                        vary_names(item, tag);
                        if key == "symptom" {
                            append(item.get_mut("text"), tag);
                        }
                    }
                }
            }
            let front = toml::to_string(&table).ok()?;
            let dir = file.path.rsplit_once('/').map(|(d, _)| format!("{d}/")).unwrap_or_default();
            let newline = if front.ends_with('\n') { "" } else { "\n" };
            Some(SourceFile { path: format!("{dir}{tag}-{slug}.md"), text: format!("+++\n{front}{newline}+++\n{body}") })
        })
        .collect()
}

/// Whether a path is an entity file (Markdown with front matter), the files [`triple`] copies.
fn is_entity_file(path: &str) -> bool {
    is_knowledge_file(path) && path.ends_with(".md") && !path.starts_with("generated/")
}

/// The copy's name of an id: `kind/slug` becomes `kind/{tag}-slug`.
///
/// A prefix, not a suffix, keeps every relation between slugs that the loader relies on: an
/// inline table's default id `kind/parent-N` becomes `kind/{tag}-parent-N`, which is what the
/// loader derives from the renamed parent, and a symptom or check named after its failure mode
/// (`symptom/parent-...`, "of its own" in the level rules) is still named after the renamed one.
fn renamed(id: &str, tag: &str) -> String {
    match id.split_once('/') {
        Some((kind, slug)) => format!("{kind}/{tag}-{slug}"),
        None => id.to_string(),
    }
}

/// Records the ids one entity file defines: its own, and those of its inline tables (explicit,
/// or the default `kind/parent-N` the loader derives).
fn defined_ids(table: &Table, out: &mut HashSet<String>) {
    let Some(id) = table.get("id").and_then(Value::as_str) else { return };
    let Some((_, slug)) = id.split_once('/') else { return };
    out.insert(id.to_string());
    for key in ["symptom", "check", "fix"] {
        let Some(Value::Array(items)) = table.get(key) else { continue };
        for (n, item) in items.iter().enumerate() {
            match item.get("id").and_then(Value::as_str) {
                Some(explicit) => out.insert(explicit.to_string()),
                None => out.insert(format!("{key}/{slug}-{}", n + 1)),
            };
        }
    }
}

/// Renames every string (at any depth) that is a renamed id.
fn rename_refs(value: &mut Value, renames: &HashSet<String>, tag: &str) {
    match value {
        Value::String(s) => {
            if renames.contains(s.as_str()) {
                *s = renamed(s, tag);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| rename_refs(v, renames, tag)),
        Value::Table(t) => t.iter_mut().for_each(|(_, v)| rename_refs(v, renames, tag)),
        _ => {}
    }
}

/// Appends the tag to a table's `title` and to each of its `aliases`.
fn vary_names(table: &mut Table, tag: &str) {
    append(table.get_mut("title"), tag);
    if let Some(Value::Array(aliases)) = table.get_mut("aliases") {
        for a in aliases.iter_mut() {
            append(Some(a), tag);
        }
    }
}

/// Appends ` {tag}` to a string value (other values are left alone).
fn append(value: Option<&mut Value>, tag: &str) {
    if let Some(Value::String(s)) = value {
        s.push(' ');
        s.push_str(tag);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::DiagnoseOptions;
    use crate::knowledge::{load_sources, sources_from, Severity};
    use crate::model::Kind;
    use crate::Engine;

    fn real() -> Vec<SourceFile> {
        sources_from(kubewhy_knowledge::files())
    }

    /// Entities written in entity files (not the generated upstream ones, which are kept once).
    fn curated(kb: &crate::knowledge::KnowledgeBase) -> (usize, usize, usize) {
        let curated: Vec<_> = kb
            .entities()
            .iter()
            .filter(|e| !e.location.file.starts_with("generated/") && !e.location.file.ends_with(crate::knowledge::SUPPLEMENT))
            .collect();
        let fms = curated.iter().filter(|e| e.kind == Kind::FailureMode).count();
        let templates = curated.iter().filter(|e| e.symptom().is_some_and(|s| s.text.is_some())).count();
        (curated.len(), fms, templates)
    }

    #[test]
    fn synthetic_tripled_graph_loads_without_errors_at_three_times_the_size() {
        let files = real();
        let (kb1, d1) = load_sources(files.clone());
        assert!(d1.iter().all(|d| d.severity != Severity::Error), "the real knowledge has errors");
        let tripled = triple(&files);
        let entity_files = files.iter().filter(|f| is_entity_file(&f.path)).count();
        assert_eq!(tripled.len(), files.len() + 2 * entity_files, "every entity file copied twice");
        let (kb3, d3) = load_sources(tripled);
        let errors: Vec<String> = d3.iter().filter(|d| d.severity == Severity::Error).take(20).map(|d| d.to_string()).collect();
        assert!(errors.is_empty(), "the tripled graph has errors:\n{}", errors.join("\n"));
        let (e1, f1, t1) = curated(&kb1);
        let (e3, f3, t3) = curated(&kb3);
        for (what, a, b) in [("curated entities", e1, e3), ("failure modes", f1, f3), ("symptom templates", t1, t3)] {
            let ratio = b as f64 / a as f64;
            assert!((2.9..=3.1).contains(&ratio), "{what}: {a} -> {b} (x{ratio:.3})");
        }
        let ratio = kb3.of_kind(Kind::FailureMode).count() as f64 / kb1.of_kind(Kind::FailureMode).count() as f64;
        assert!((2.9..=3.1).contains(&ratio), "failure modes x{ratio:.3}");
        // A copy's relations point into the same copy.
        let copy = kb3.get("failure-mode/x2-insufficient-resources").expect("the copy of a real failure mode");
        let fm = copy.failure_mode().expect("a failure mode");
        assert!(fm.components.iter().all(|c| c.contains("/x2-")), "{:?}", fm.components);
        assert!(fm.symptoms.iter().all(|s| s.contains("/x2-")), "{:?}", fm.symptoms);
        assert_eq!(copy.location.file, "failure-modes/scheduler/x2-insufficient-resources.md");
    }

    #[test]
    fn synthetic_tripled_graph_still_diagnoses_a_real_message() {
        let files = real();
        let message = "0/3 nodes are available: 3 Insufficient cpu.";
        let (e1, _) = Engine::from_sources(files.clone()).expect("the real knowledge loads");
        let (e3, _) = Engine::from_sources(triple(&files)).expect("the tripled knowledge loads");
        assert!(e3.knowledge().len() > e1.knowledge().len() * 3 / 2);
        let d1 = e1.diagnose(message, DiagnoseOptions::default()).expect("diagnosis");
        let d3 = e3.diagnose(message, DiagnoseOptions::default()).expect("diagnosis");
        let top1 = &d1.candidates.first().expect("a candidate on the real graph").id;
        let top3 = &d3.candidates.first().expect("a candidate on the tripled graph").id;
        // The copies' templates carry a tag the real message lacks: the original still answers.
        assert_eq!(top3, top1);
    }

    #[test]
    fn synthetic_unreadable_files_are_kept_once() {
        let files = vec![
            SourceFile { path: "concepts/broken.md".into(), text: "no front matter".into() },
            SourceFile { path: "topics.toml".into(), text: String::new() },
        ];
        let out = triple(&files);
        assert_eq!(out.len(), 2);
    }
}
