//! The tools: each turns its parameter struct into an engine call, converts the engine's answer
//! into its wire type and renders a concise Markdown text of it.

use crate::wire::{self, Detail};
use kubewhy_engine::diagnose::{Candidate, CauseOut, CheckOut, DiagnoseOptions, Diagnosis, Evidence, FixOut};
use kubewhy_engine::graph::{QueryLimits, QueryOutput};
use kubewhy_engine::model::{Entity, Kind, Version};
use kubewhy_engine::Engine;
use std::fmt::Write as _;
use std::time::Duration;

/// What a tool produced: its structured output and its Markdown text.
pub(crate) struct ToolAnswer {
    pub(crate) structured: serde_json::Value,
    pub(crate) markdown: String,
}

/// A failure meant for the model (an `isError` tool result), with a message naming the argument.
pub(crate) type ToolResult = Result<ToolAnswer, String>;

/// Time limit of one `query_graph` query.
pub const QUERY_TIMEOUT: Duration = Duration::from_secs(10);
/// Row limit of one `query_graph` query.
pub const QUERY_MAX_ROWS: usize = 1000;

fn answer<T: serde::Serialize>(out: &T, markdown: String) -> ToolResult {
    serde_json::to_value(out).map(|structured| ToolAnswer { structured, markdown }).map_err(|e| format!("internal error: cannot serialise the answer: {e}"))
}

/// The resource URI of an entity id.
pub fn uri_of(id: &str) -> String {
    format!("kubewhy://{id}")
}


fn nonempty<'a>(field: &str, value: &'a str) -> Result<&'a str, String> {
    let v = value.trim();
    if v.is_empty() {
        Err(format!("argument `{field}` is empty: give {}", match field {
            "symptom" => "an error message, event lines or a question",
            "sparql" => "a SELECT, ASK, CONSTRUCT or DESCRIBE query",
            _ => "a non-empty string",
        }))
    } else {
        Ok(v)
    }
}

fn version_arg(field: &str, value: Option<&str>) -> Result<Option<Version>, String> {
    match value.map(str::trim).filter(|v| !v.is_empty()) {
        None => Ok(None),
        Some(v) => Version::parse(v).map(Some).map_err(|e| format!("argument `{field}`: {e}")),
    }
}

fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let s: String = text.chars().take(max.saturating_sub(1)).collect();
        format!("{}…", s.trim_end())
    }
}

/// `diagnose`.
pub(crate) fn diagnose(engine: &Engine, p: wire::DiagnoseParams) -> ToolResult {
    let symptom = nonempty("symptom", &p.symptom)?;
    let top = p.top.unwrap_or(3);
    if !(1..=10).contains(&top) {
        return Err(format!("argument `top` must be between 1 and 10, not {top}"));
    }
    let k8s_version = version_arg("k8s_version", p.k8s_version.as_deref())?;
    let detail = p.detail.unwrap_or_default();
    let d = engine.diagnose(symptom, DiagnoseOptions { k8s_version, top: top as usize }).map_err(|e| format!("argument `symptom`: {e}"))?;
    let out = diagnosis_output(&d, detail);
    let md = diagnosis_markdown(&out, detail);
    answer(&out, md)
}

/// The `diagnose` answer for `d`: the engine's candidates, with lists and texts cut to the
/// `detail` (brief: the top candidate's three evidence lines, three checks, two fixes and two
/// references; one evidence-line pair and one check for the others; a hub's causes are always
/// listed whole, each with its check, since they are the answer when nothing separates them).
pub(crate) fn diagnosis_output(d: &Diagnosis, detail: Detail) -> wire::DiagnoseOutput {
    let full = detail == Detail::Full;
    let take = |n: usize| if full { usize::MAX } else { n };
    let short = |t: &str, n: usize| if full { t.to_string() } else { cut(t, n) };
    let round = |x: f64| (x * 1000.0).round() / 1000.0;
    let brief_check = |k: &CheckOut| CheckOut {
        command: k.command.as_deref().map(|t| short(t, 240)),
        look_for: short(&k.look_for, 240),
        rules_out: k.rules_out.as_deref().map(|t| short(t, 240)),
        ..k.clone()
    };
    wire::DiagnoseOutput {
        k8s_version: d.k8s_version.clone(),
        k8s_version_source: d.k8s_version_source.clone(),
        input_style: d.signals.input_style.clone(),
        names: d.names.clone(),
        candidates: d
            .candidates
            .iter()
            .map(|c| {
                let top = c.rank == 1;
                let mut causes_seen = 0;
                let candidate = Candidate {
                    confidence: round(c.confidence),
                    score: round(c.score),
                    // Brief: the direct path and at most two upstream causes.
                    chain: c
                        .chain
                        .iter()
                        .filter(|s| {
                            causes_seen += usize::from(s.relation == "causedBy");
                            full || s.relation != "causedBy" || causes_seen <= 2
                        })
                        .cloned()
                        .collect(),
                    evidence: c
                        .evidence
                        .iter()
                        .take(take(if top { 3 } else { 2 }))
                        .map(|e| Evidence { value: cut(&e.value, if full { 2000 } else { 200 }), score: round(e.score), ..e.clone() })
                        .collect(),
                    summary: if full { c.summary.clone() } else { cut(&c.summary, if top { 400 } else { 200 }) },
                    causes: c
                        .causes
                        .iter()
                        .map(|x| CauseOut { score: round(x.score), check: x.check.as_ref().map(brief_check), ..x.clone() })
                        .collect(),
                    checks: c.checks.iter().take(take(if top { 3 } else { 1 })).map(brief_check).collect(),
                    fixes: c
                        .fixes
                        .iter()
                        .take(take(if top { 2 } else { 0 }))
                        .map(|f| FixOut { action: short(&f.action, 300), command: f.command.as_deref().map(|t| short(t, 240)), ..f.clone() })
                        .collect(),
                    references: c.references.iter().take(take(if top { 2 } else { 0 })).cloned().collect(),
                    ..c.clone()
                };
                wire::Candidate { uri: uri_of(&c.id), url: None, candidate }
            })
            .collect(),
        distinguishing_checks: d.distinguishing_checks.iter().take(take(2)).cloned().collect(),
        excluded: d.excluded.clone(),
        notices: d.notices.clone(),
    }
}

fn diagnosis_markdown(d: &wire::DiagnoseOutput, detail: Detail) -> String {
    let full = detail == Detail::Full;
    let mut s = String::new();
    let version = match &d.k8s_version {
        Some(v) => format!(", Kubernetes {v} ({})", d.k8s_version_source),
        None => String::new(),
    };
    let _ = writeln!(s, "## kubewhy diagnosis (input read as {}{version})", d.input_style);
    if d.candidates.is_empty() {
        s.push_str("\nNo failure mode matched. Rephrase with the exact error text, or use `search`.\n");
    }
    // Brief: a cause already listed under a higher-ranked hub gets its heading only.
    let mut listed: Vec<&str> = Vec::new();
    for wc in &d.candidates {
        let c = &wc.candidate;
        if !full && listed.contains(&c.id.as_str()) {
            let _ = writeln!(s, "\n### {}. {} — confidence {:.2}\n`{}`: a cause listed above, with its check", c.rank, cut(&c.title, 160), c.confidence, c.id);
            continue;
        }
        listed.extend(c.causes.iter().map(|x| x.id.as_str()));
        let strength = if c.confidence < 0.3 { " (weak)" } else { "" };
        let _ = writeln!(s, "\n### {}. {} — confidence {:.2}{strength}", c.rank, c.title, c.confidence);
        let level = match (&c.hub, c.level.as_str()) {
            (Some(hub), _) => format!(" · cause, reached through `{hub}`"),
            (None, "symptom") => " · symptom (a hub: its causes follow)".to_string(),
            _ => String::new(),
        };
        let _ = writeln!(s, "`{}` · area {} · applies {}{level}", c.id, c.area, c.applies.description);
        if !c.chain.is_empty() && (full || c.rank == 1) {
            let chain: Vec<String> = c
                .chain
                .iter()
                .filter(|st| st.relation != "causedBy")
                .map(|st| if st.relation == "observed" { format!("“{}”", cut(&st.title, 80)) } else if full { format!("{} {}", st.relation, st.title) } else { format!("{} `{}`", st.relation, st.id) })
                .collect();
            let _ = writeln!(s, "**Mechanism:** {}", chain.join(" → "));
            let causes: Vec<String> = c.chain.iter().filter(|st| st.relation == "causedBy").map(|st| if full { format!("{} (`{}`)", st.title, st.id) } else { format!("`{}`", st.id) }).collect();
            if !causes.is_empty() {
                let _ = writeln!(s, "**Upstream causes:** {}", causes.join(", "));
            }
        }
        if !c.evidence.is_empty() {
            let ev: Vec<String> = c.evidence.iter().map(|e| format!("{} `{}`", e.matched, cut(&e.value, 100))).collect();
            let _ = writeln!(s, "**Evidence:** {}", ev.join("; "));
        }
        if !c.summary.is_empty() {
            let _ = writeln!(s, "{}", if full || c.rank == 1 { c.summary.clone() } else { cut(&c.summary, 200) });
        }
        let n = if full { usize::MAX } else if c.rank == 1 { 200 } else { 140 };
        if !c.causes.is_empty() {
            // Brief: the top candidate's causes with a short check each; the others' causes by id.
            if full || c.rank == 1 {
                let m = if full { usize::MAX } else { 110 };
                let _ = writeln!(s, "**Causes, most likely first:**");
                for x in &c.causes {
                    let mark = if x.separated { " (the input points here)" } else { "" };
                    let how = x.check.as_ref().map(|k| match &k.command {
                        Some(cmd) => format!(" — check `{}`: {}", cut(cmd, m), cut(&k.look_for, m)),
                        None => format!(" — check: {}", cut(&k.look_for, m)),
                    });
                    let _ = writeln!(s, "- `{}` {}{mark}{}", x.id, cut(&x.title, m), how.unwrap_or_default());
                }
            } else {
                let ids: Vec<String> = c.causes.iter().map(|x| format!("`{}`", x.id)).collect();
                let _ = writeln!(s, "**Causes:** {}", ids.join(", "));
            }
        }
        for k in &c.checks {
            match &k.command {
                Some(cmd) => {
                    let _ = writeln!(s, "- Check: `{}` — look for {}", cut(cmd, n), cut(&k.look_for, n));
                }
                None => {
                    let _ = writeln!(s, "- Check: {} — look for {}", k.title, cut(&k.look_for, n));
                }
            }
        }
        for f in &c.fixes {
            let cmd = f.command.as_ref().map(|c| format!(" (`{}`)", cut(c, n))).unwrap_or_default();
            let _ = writeln!(s, "- Fix ({} risk): {}{cmd}", f.risk, cut(&f.action, n));
        }
        if !c.references.is_empty() {
            let _ = writeln!(s, "- References: {}", c.references.join(", "));
        }
    }
    if full && !d.distinguishing_checks.is_empty() {
        s.push_str("\n**Tell them apart:**\n");
        for k in &d.distinguishing_checks {
            let how = k.command.as_ref().map(|c| format!("`{c}`")).unwrap_or_else(|| k.title.clone());
            let _ = writeln!(s, "- {how}: {} → `{}`", k.look_for, k.confirms);
        }
    }
    for n in &d.notices {
        let _ = writeln!(s, "\n_Note: {n}_");
    }
    if !full {
        s.push_str("\n_More: `detail: \"full\"`, `explain` an id, or read its `kubewhy://` resource._\n");
    }
    s
}

/// Relations listed by `explain` each way.
const MAX_RELATIONS: usize = 40;

/// `explain`.
pub(crate) fn explain(engine: &Engine, p: wire::ExplainParams) -> ToolResult {
    let q = nonempty("id_or_name", &p.id_or_name)?;
    let x = engine.explain(q).map_err(|e| format!("argument `id_or_name`: {e}"))?;
    let related = |v: &[kubewhy_engine::RelatedEntity]| -> Vec<wire::Related> {
        v.iter().map(|r| wire::Related { property: r.property.clone(), id: r.id.clone(), kind: r.kind.clone(), title: r.title.clone() }).collect()
    };
    let out = wire::ExplainOutput {
        resolved_by: serde_json::to_value(&x.resolved_by).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default(),
        id: x.entity.id.clone(),
        kind: x.entity.kind.prefix().to_string(),
        title: x.entity.title.clone(),
        aliases: x.entity.aliases.clone(),
        applies: x.entity.applies.describe(),
        facts: facts(&x.entity),
        body: x.entity.body.clone(),
        references: x.entity.references.clone(),
        outgoing: related(&x.outgoing[..x.outgoing.len().min(MAX_RELATIONS)]),
        outgoing_total: x.outgoing.len(),
        incoming: related(&x.incoming[..x.incoming.len().min(MAX_RELATIONS)]),
        incoming_total: x.incoming.len(),
        loops: x
            .loops
            .iter()
            .map(|l| wire::LoopDetail {
                loop_: l.loop_.clone(),
                writes: l.writes.iter().take(10).map(|r| r.id.clone()).collect(),
                emits: l.emits.iter().take(10).map(|r| r.id.clone()).collect(),
                failure_modes: l.failure_modes.iter().take(10).map(|r| r.id.clone()).collect(),
            })
            .collect(),
        metrics: x.metrics.iter().take(30).cloned().collect(),
        metrics_total: x.metrics.len(),
        uri: uri_of(&x.entity.id),
        url: None,
    };
    let md = entity_markdown(&x.entity, &related(&x.outgoing), &related(&x.incoming), Some(&out.loops));
    answer(&out, md)
}

/// The kind-specific data of an entity as a JSON object.
pub(crate) fn facts(e: &Entity) -> serde_json::Value {
    serde_json::to_value(&e.data).unwrap_or(serde_json::Value::Null)
}

fn fact_lines(e: &Entity) -> Vec<String> {
    let mut out = Vec::new();
    if let serde_json::Value::Object(m) = facts(e) {
        for (k, v) in m {
            if k == "kind_data" {
                continue;
            }
            let text = match &v {
                serde_json::Value::Null => continue,
                serde_json::Value::String(s) if s.is_empty() => continue,
                serde_json::Value::Array(a) if a.is_empty() => continue,
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Array(a) => a.iter().map(|x| x.as_str().map(str::to_string).unwrap_or_else(|| x.to_string())).collect::<Vec<_>>().join(", "),
                other => other.to_string(),
            };
            out.push(format!("- {}: {}", k.replace('_', " "), cut(&text, 600)));
        }
    }
    out
}

/// Markdown of one entity: title, facts, relations, body, references.
pub(crate) fn entity_markdown(e: &Entity, outgoing: &[wire::Related], incoming: &[wire::Related], loops: Option<&[wire::LoopDetail]>) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# {}\n", e.title);
    let _ = writeln!(s, "`{}` · {} · applies {}", e.id, e.kind, e.applies.describe());
    if !e.aliases.is_empty() {
        let _ = writeln!(s, "Also called: {}", e.aliases.join(", "));
    }
    let lines = fact_lines(e);
    if !lines.is_empty() || !e.keps.is_empty() || !e.feature_gates.is_empty() {
        s.push_str("\n## Facts\n");
        for l in lines {
            let _ = writeln!(s, "{l}");
        }
        if !e.keps.is_empty() {
            let _ = writeln!(s, "- KEPs: {}", e.keps.iter().map(|k| format!("KEP-{k}")).collect::<Vec<_>>().join(", "));
        }
        if !e.feature_gates.is_empty() {
            let _ = writeln!(s, "- feature gates: {}", e.feature_gates.join(", "));
        }
    }
    // What it is first, then its loops, then the relations grouped by property and counted.
    if !e.body.trim().is_empty() {
        let _ = writeln!(s, "\n{}", e.body.trim());
    }
    if let Some(loops) = loops.filter(|l| !l.is_empty()) {
        s.push_str("\n## Loops\n");
        for l in loops {
            let fms: Vec<&str> = l.failure_modes.iter().take(6).map(String::as_str).collect();
            let _ = writeln!(s, "- {} (`{}`){}", l.loop_.title, l.loop_.id, if fms.is_empty() { String::new() } else { format!(": {}", fms.join(", ")) });
        }
    }
    if !outgoing.is_empty() || !incoming.is_empty() {
        let _ = writeln!(s, "\n## Relations ({})", outgoing.len() + incoming.len());
        for (arrow, rels) in [("→", outgoing), ("←", incoming)] {
            let mut groups: Vec<(&str, Vec<&wire::Related>)> = Vec::new();
            for r in rels {
                match groups.iter_mut().find(|(p, _)| *p == r.property) {
                    Some((_, v)) => v.push(r),
                    None => groups.push((r.property.as_str(), vec![r])),
                }
            }
            for (p, v) in groups {
                let shown: Vec<String> = v.iter().take(6).map(|r| format!("`{}`", r.id)).collect();
                let more = if v.len() > 6 { format!(", … and {} more", v.len() - 6) } else { String::new() };
                let _ = writeln!(s, "- {arrow} {p} ({}): {}{more}", v.len(), shown.join(", "));
            }
        }
    }
    if !e.references.is_empty() {
        s.push_str("\n## References\n");
        for r in &e.references {
            let _ = writeln!(s, "- {r}");
        }
    }
    s
}

/// `search`.
pub(crate) fn search(engine: &Engine, p: wire::SearchParams) -> ToolResult {
    let text = nonempty("text", &p.text)?;
    let kind = match p.kind.as_deref().map(str::trim).filter(|k| !k.is_empty()) {
        None => None,
        Some(k) => Some(Kind::from_prefix(k).ok_or_else(|| {
            format!("argument `kind`: unknown kind `{k}`; use one of {}", Kind::ALL.iter().map(|k| k.prefix()).collect::<Vec<_>>().join(", "))
        })?),
    };
    let limit = p.limit.unwrap_or(10);
    if !(1..=50).contains(&limit) {
        return Err(format!("argument `limit` must be between 1 and 50, not {limit}"));
    }
    let kinds = kind.map(|k| vec![k]);
    let hits = engine.search(text, kinds.as_deref(), limit as usize);
    let kb = engine.knowledge();
    let out = wire::SearchOutput {
        hits: hits
            .iter()
            .filter_map(|h| kb.get(&h.id).map(|e| (h, e)))
            .map(|(h, e)| wire::SearchHit { id: e.id.clone(), kind: e.kind.prefix().to_string(), title: e.title.clone(), score: (h.score * 1000.0).round() / 1000.0, summary: e.summary(160), uri: uri_of(&e.id), url: None })
            .collect(),
    };
    let mut md = format!("## Search: {}\n\n", cut(text, 100));
    if out.hits.is_empty() {
        md.push_str("No entity matches. Try other words, or no `kind`.\n");
    }
    for h in &out.hits {
        let _ = writeln!(md, "- **{}** `{}` — {}", h.title, h.id, h.summary);
    }
    answer(&out, md)
}

/// `query_graph`.
pub(crate) fn query_graph(engine: &Engine, p: wire::QueryGraphParams) -> ToolResult {
    let q = nonempty("sparql", &p.sparql)?;
    let r = engine.sparql(q, QueryLimits { timeout: QUERY_TIMEOUT, max_rows: QUERY_MAX_ROWS }).map_err(|e| format!("argument `sparql`: {e}"))?;
    let mut md = String::new();
    let out = match r {
        QueryOutput::Solutions { variables, rows, truncated } => {
            let _ = writeln!(md, "{} row(s){}\n", rows.len(), if truncated { " (cut at 1,000)" } else { "" });
            if !variables.is_empty() {
                let _ = writeln!(md, "| {} |", variables.join(" | "));
                let _ = writeln!(md, "|{}", "---|".repeat(variables.len()));
                for row in rows.iter().take(50) {
                    let cells: Vec<String> = row.iter().map(|c| c.as_deref().unwrap_or("").replace('|', "\\|")).collect();
                    let _ = writeln!(md, "| {} |", cells.join(" | "));
                }
                if rows.len() > 50 {
                    let _ = writeln!(md, "\n… {} more rows in the structured result", rows.len() - 50);
                }
            }
            wire::QueryGraphOutput { result_type: "solutions".into(), variables, rows, boolean: None, ntriples: None, truncated }
        }
        QueryOutput::Boolean { value } => {
            let _ = writeln!(md, "{value}");
            wire::QueryGraphOutput { result_type: "boolean".into(), variables: vec![], rows: vec![], boolean: Some(value), ntriples: None, truncated: false }
        }
        QueryOutput::Graph { ntriples, triples, truncated } => {
            let _ = writeln!(md, "{triples} triple(s){}\n\n```\n{}\n```", if truncated { " (cut at 1,000)" } else { "" }, cut(&ntriples, 4000));
            wire::QueryGraphOutput { result_type: "graph".into(), variables: vec![], rows: vec![], boolean: None, ntriples: Some(ntriples), truncated }
        }
    };
    answer(&out, md)
}


/// `feature_gate`.
pub(crate) fn feature_gate(engine: &Engine, p: wire::FeatureGateParams) -> ToolResult {
    let name = nonempty("name", &p.name)?;
    let version = version_arg("version", p.version.as_deref())?;
    let g = engine.gate(name, version).map_err(|e| format!("argument `name`: {e}"))?;
    let out = wire::FeatureGateOutput {
        name: g.gate.name.clone(),
        version: g.version.clone(),
        at_version: g.at_version.as_ref().cloned(),
        statement: g.statement.clone(),
        lifecycle: g.gate.step.iter().cloned().collect(),
        keps: g.gate.keps.clone(),
        gated: g.gated.iter().cloned().collect(),
        source: g.gate.source.clone(),
    };
    let mut md = format!("## Feature gate {}\n\n{}\n\n", out.name, out.statement);
    for s in &out.lifecycle {
        let d = match s.default {
            Some(true) => ", on by default",
            Some(false) => ", off by default",
            None => "",
        };
        let l = if s.locked == Some(true) { ", locked" } else { "" };
        let _ = writeln!(md, "- {}: {}{d}{l}", s.version, s.stage);
    }
    if !out.keps.is_empty() {
        let _ = writeln!(md, "\nKEPs: {}", out.keps.iter().map(|k| format!("KEP-{k}")).collect::<Vec<_>>().join(", "));
    }
    if !out.gated.is_empty() {
        let _ = writeln!(md, "Gates: {}", out.gated.iter().map(|r| format!("`{}`", r.id)).collect::<Vec<_>>().join(", "));
    }
    answer(&out, md)
}

/// `kep`.
pub(crate) fn kep(engine: &Engine, p: wire::KepParams) -> ToolResult {
    let q = nonempty("query", &p.query)?;
    let keps = engine.kep(q).map_err(|e| format!("argument `query`: {e}"))?;
    let out = wire::KepOutput {
        keps: keps
            .iter()
            .take(10)
            .map(|k| wire::Kep {
                number: k.kep.number,
                title: k.kep.title.clone(),
                sig: k.kep.sig.clone(),
                status: k.kep.status.clone(),
                stage: k.kep.stage.clone(),
                latest_milestone: k.kep.latest_milestone.clone(),
                alpha: k.kep.alpha.clone(),
                beta: k.kep.beta.clone(),
                stable: k.kep.stable.clone(),
                cited_by: k.cited_by.iter().cloned().collect(),
            })
            .collect(),
    };
    let mut md = String::new();
    for k in &out.keps {
        let _ = writeln!(md, "## KEP-{}: {}\n", k.number, k.title);
        let _ = writeln!(md, "{} · status {} · stage {} · latest milestone {}", k.sig, k.status, k.stage, k.latest_milestone);
        let stages: Vec<String> = [("alpha", &k.alpha), ("beta", &k.beta), ("stable", &k.stable)].iter().filter(|(_, v)| !v.is_empty()).map(|(n, v)| format!("{n} {v}")).collect();
        if !stages.is_empty() {
            let _ = writeln!(md, "{}", stages.join(", "));
        }
        if !k.cited_by.is_empty() {
            let _ = writeln!(md, "Cited by: {}", k.cited_by.iter().map(|r| format!("`{}`", r.id)).collect::<Vec<_>>().join(", "));
        }
        md.push('\n');
    }
    answer(&out, md)
}

/// `metric`.
pub(crate) fn metric(engine: &Engine, p: wire::MetricParams) -> ToolResult {
    let name = nonempty("name", &p.name)?;
    let m = engine.metric(name).map_err(|e| format!("argument `name`: {e}"))?;
    let out: wire::MetricOutput = m;
    let mut md = format!("## Metric `{}`\n\n{} · {} · exposed by {}\n", out.name, out.metric_type, out.stability.as_deref().unwrap_or("stability unknown"), out.component.title);
    if !out.labels.is_empty() {
        let _ = writeln!(md, "Labels: {}", out.labels.join(", "));
    }
    if let Some(m) = &out.meaning {
        let _ = writeln!(md, "\n{m}");
    }
    if let Some(b) = &out.bad_value {
        let _ = writeln!(md, "\n**Bad value:** {b}");
    }
    if !out.failure_modes.is_empty() {
        let _ = writeln!(md, "\nReveals: {}", out.failure_modes.iter().map(|r| format!("`{}`", r.id)).collect::<Vec<_>>().join(", "));
    }
    if let Some(s) = &out.source {
        let _ = writeln!(md, "Source: {s}");
    }
    answer(&out, md)
}

/// `check_claims`.
pub(crate) fn check_claims(engine: &Engine, p: wire::CheckClaimsParams) -> ToolResult {
    let text = nonempty("text", &p.text)?;
    let claims = engine.check_claims(text);
    let count = |v: wire::Verdict| claims.iter().filter(|c| c.verdict == v).count();
    let out = wire::CheckClaimsOutput { supported: count(wire::Verdict::Supported), contradicted: count(wire::Verdict::Contradicted), unknown: count(wire::Verdict::Unknown), claims };
    let mut md = format!("## Claims: {} supported, {} contradicted, {} unknown\n\n", out.supported, out.contradicted, out.unknown);
    if out.claims.is_empty() {
        md.push_str("No checkable claim (feature gates, KEPs, metrics, removal or GA versions) found.\n");
    }
    for c in &out.claims {
        let _ = writeln!(md, "- **{}** {} `{}`: “{}” — {}", c.verdict, c.kind, c.subject, cut(&c.text, 160), c.fact);
    }
    answer(&out, md)
}
