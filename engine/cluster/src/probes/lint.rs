//! The probe lint: the knowledge and the probes must name each other.
//!
//! [`lint`] reports, as knowledge [`Diagnostic`]s (errors, with `file:line` where the
//! knowledge has one):
//! - a check whose `probe = "…"` names no probe (with the closest probe ids);
//! - a check whose probe tests another failure mode than the one the check belongs to;
//! - a probe whose failure mode is not in the knowledge (or is not a failure mode);
//! - a probe whose failure mode names it in none of its checks.
//!
//! Probes live in code, so a problem with a probe itself is located at its area module
//! (`engine/cluster/src/probes/<area>.rs`, line 1).

use super::{Probe, AREAS};
use kubewhy_engine::knowledge::{strsim_distance, Diagnostic, KnowledgeBase, Severity};
use kubewhy_engine::model::{Kind, KindData, Location};
use std::collections::BTreeMap;

/// Checks the probe ids the knowledge names against [`super::all`] and the other way
/// round; returns every problem found (empty when all agree), in a stable order.
pub fn lint(kb: &KnowledgeBase) -> Vec<Diagnostic> {
    lint_with(kb, AREAS)
}

/// Only the knowledge side of [`lint`]: checks naming an unknown probe or one of another
/// failure mode. For knowledge that is not the whole graph (`kubewhy lint DIR`), where a
/// probe's failure mode may legitimately be absent.
pub fn lint_checks(kb: &KnowledgeBase) -> Vec<Diagnostic> {
    run_lint(kb, AREAS, false)
}

/// [`lint`] over a given probe set (tests use it with a broken one).
pub fn lint_with(kb: &KnowledgeBase, areas: &[(&str, &[Probe])]) -> Vec<Diagnostic> {
    run_lint(kb, areas, true)
}

fn run_lint(kb: &KnowledgeBase, areas: &[(&str, &[Probe])], probe_side: bool) -> Vec<Diagnostic> {
    let probes: Vec<(&str, &Probe)> = areas.iter().flat_map(|(a, ps)| ps.iter().map(move |p| (*a, p))).collect();
    let by_id: BTreeMap<&str, &Probe> = probes.iter().map(|(_, p)| (p.id, *p)).collect();
    let mut diags = Vec::new();

    // Which failure mode each check belongs to (a shared check may belong to several).
    let mut owners: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for fm in kb.of_kind(Kind::FailureMode) {
        if let Some(data) = fm.failure_mode() {
            for c in &data.checks {
                owners.entry(c.as_str()).or_default().push(fm.id.as_str());
            }
        }
    }

    for check in kb.of_kind(Kind::Check) {
        let KindData::Check { probe: Some(pid), .. } = &check.data else { continue };
        let location = kb.key_location(&check.id, "probe").unwrap_or_else(|| check.location.clone());
        match by_id.get(pid.as_str()) {
            None => {
                let mut close: Vec<(usize, &str)> = by_id.keys().map(|k| (strsim_distance(k, pid), *k)).collect();
                close.sort();
                let hint: Vec<&str> = close.iter().take(3).filter(|(d, _)| *d <= pid.len() / 2 + 2).map(|(_, k)| *k).collect();
                let message = if hint.is_empty() {
                    format!("`{pid}` is not a probe kubewhy has")
                } else {
                    format!("`{pid}` is not a probe kubewhy has (closest: {})", hint.join(", "))
                };
                diags.push(Diagnostic { severity: Severity::Error, location, key: Some(format!("{}.probe", check.id)), message });
            }
            Some(p) => {
                let fms = owners.get(check.id.as_str()).cloned().unwrap_or_default();
                if !fms.is_empty() && !fms.contains(&p.failure_mode) {
                    diags.push(Diagnostic {
                        severity: Severity::Error,
                        location,
                        key: Some(format!("{}.probe", check.id)),
                        message: format!("probe `{pid}` tests {}, not {}", p.failure_mode, fms.join(", ")),
                    });
                }
            }
        }
    }

    for (area, p) in probes.iter().filter(|_| probe_side) {
        let code = Location { file: format!("engine/cluster/src/probes/{area}.rs"), line: 1 };
        let Some(fm) = kb.get(p.failure_mode).filter(|e| e.kind == Kind::FailureMode) else {
            diags.push(Diagnostic {
                severity: Severity::Error,
                location: code,
                key: Some(format!("probe {}", p.id)),
                message: format!("probe `{}` tests `{}`, which is not a failure mode in the knowledge", p.id, p.failure_mode),
            });
            continue;
        };
        let named = fm.failure_mode().is_some_and(|d| {
            d.checks.iter().any(|c| {
                matches!(kb.get(c).map(|e| &e.data), Some(KindData::Check { probe: Some(x), .. }) if x == p.id)
            })
        });
        if !named {
            diags.push(Diagnostic {
                severity: Severity::Error,
                location: fm.location.clone(),
                key: Some("check.probe".into()),
                message: format!("no check of {} names its probe: add `probe = \"{}\"` to the [[check]] it automates", fm.id, p.id),
            });
        }
    }
    diags.sort_by(|a, b| (&a.location.file, a.location.line, &a.message).cmp(&(&b.location.file, b.location.line, &b.message)));
    diags
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::ClusterState;
    use kubewhy_engine::knowledge::{load_sources, sources_from};

    fn builtin() -> KnowledgeBase {
        let (kb, diags) = load_sources(sources_from(kubewhy_knowledge::files()));
        assert!(diags.iter().all(|d| d.severity != Severity::Error), "the built-in knowledge loads");
        kb
    }

    #[test]
    fn the_builtin_knowledge_and_the_probes_agree() {
        let problems = lint(&builtin());
        assert!(problems.is_empty(), "{}", problems.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n"));
    }

    fn nothing(_: &ClusterState) -> Vec<super::super::Finding> {
        Vec::new()
    }

    #[test]
    fn a_check_naming_an_unknown_probe_is_reported_with_its_line() {
        let mut files = sources_from(kubewhy_knowledge::files());
        let f = files.iter_mut().find(|f| f.path.ends_with("scheduler/insufficient-resources.md")).expect("file");
        f.text = f.text.replacen("probe = \"insufficient-resources\"", "probe = \"insuficient-resources\"", 1);
        let line = f.text.lines().position(|l| l.contains("insuficient-resources")).expect("line") + 1;
        let (kb, _) = load_sources(files);
        let problems = lint(&kb);
        let bad: Vec<&Diagnostic> = problems.iter().filter(|d| d.message.contains("`insuficient-resources` is not a probe")).collect();
        assert_eq!(bad.len(), 1, "{problems:?}");
        assert!(bad[0].message.contains("closest: insufficient-resources"), "{}", bad[0].message);
        assert_eq!(bad[0].location.file, "failure-modes/scheduler/insufficient-resources.md");
        assert_eq!(bad[0].location.line, line);
        // And the probe is now named by no check of its failure mode.
        assert!(problems.iter().any(|d| d.message.contains("add `probe = \"insufficient-resources\"`")), "{problems:?}");
    }

    #[test]
    fn a_probe_of_a_missing_failure_mode_is_reported() {
        static BROKEN: &[Probe] = &[Probe {
            id: "no-such-thing",
            failure_mode: "failure-mode/no-such-thing",
            title: "nothing",
            needs: &[],
            subjects: &[],
            check: nothing,
            decided_by_status: None,
        }];
        let areas: Vec<(&str, &[Probe])> = AREAS.iter().copied().chain([("scheduler", BROKEN)]).collect();
        let problems = lint_with(&builtin(), &areas);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].message.contains("`failure-mode/no-such-thing`, which is not a failure mode"));
        assert_eq!(problems[0].location.file, "engine/cluster/src/probes/scheduler.rs");
    }

    #[test]
    fn a_probe_named_under_the_wrong_failure_mode_is_reported() {
        let mut files = sources_from(kubewhy_knowledge::files());
        let f = files.iter_mut().find(|f| f.path.ends_with("scheduler/untolerated-taint.md")).expect("file");
        f.text = f.text.replacen("probe = \"untolerated-taint\"", "probe = \"insufficient-resources\"", 1);
        let (kb, _) = load_sources(files);
        let problems = lint(&kb);
        assert!(problems.iter().any(|d| d.message == "probe `insufficient-resources` tests failure-mode/insufficient-resources, not failure-mode/untolerated-taint"), "{problems:?}");
    }
}
