//! Text and Markdown rendering of engine results. Text may carry ANSI styles; the caller
//! strips them when colour is off.

use crate::SparqlOutput;
use anstyle::{AnsiColor, Style};
use kubewhy_engine::diagnose::{Candidate, Diagnosis};
use kubewhy_engine::graph::QueryOutput;
use kubewhy_engine::model::KindData;
use kubewhy_engine::search::Hit;
use kubewhy_engine::{Engine, Explanation, Stats};
use std::fmt::Write as _;

fn paint(style: Style, text: &str) -> String {
    format!("{}{text}{}", style.render(), style.render_reset())
}

fn bold(t: &str) -> String {
    paint(Style::new().bold(), t)
}

fn dim(t: &str) -> String {
    paint(Style::new().dimmed(), t)
}

/// Failure modes listed under each loop by `explain` of a component in text output; the rest are
/// counted, with the `explain <loop>` command that lists them.
const EXPLAIN_FMS_PER_LOOP: usize = 8;

fn color(c: AnsiColor, t: &str) -> String {
    paint(Style::new().fg_color(Some(c.into())), t)
}

fn confidence_color(c: f64) -> AnsiColor {
    if c >= 0.6 {
        AnsiColor::Green
    } else if c >= 0.3 {
        AnsiColor::Yellow
    } else {
        AnsiColor::Red
    }
}

/// The distinct messages recognised in the input: several templates matching the same stretch
/// of text (a frame and its reason) are one message, shown by its longest match; at most 3.
fn known_messages(d: &Diagnosis) -> Vec<String> {
    let mut ms: Vec<&kubewhy_engine::signals::TemplateMatch> = d.signals.templates.iter().collect();
    ms.sort_by(|a, b| (b.span.1 - b.span.0).cmp(&(a.span.1 - a.span.0)).then_with(|| a.span.cmp(&b.span)));
    let mut kept: Vec<&kubewhy_engine::signals::TemplateMatch> = Vec::new();
    for m in ms {
        if !kept.iter().any(|k| m.span.0 < k.span.1 && k.span.0 < m.span.1) {
            kept.push(m);
        }
    }
    kept.sort_by_key(|m| m.span);
    kept.into_iter().take(3).map(|m| m.text.clone()).collect()
}

fn signals_line(d: &Diagnosis) -> String {
    let s = &d.signals;
    let mut parts = Vec::new();
    if !s.event_reasons.is_empty() {
        parts.push(format!("event reasons {}", s.event_reasons.join(", ")));
    }
    if !s.status_reasons.is_empty() {
        parts.push(format!("status reasons {}", s.status_reasons.join(", ")));
    }
    if !s.exit_codes.is_empty() {
        parts.push(format!("exit codes {}", s.exit_codes.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(", ")));
    }
    if !s.http_codes.is_empty() {
        parts.push(format!("HTTP {}", s.http_codes.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(", ")));
    }
    if !s.metrics.is_empty() {
        parts.push(format!("metrics {}", s.metrics.join(", ")));
    }
    if !s.versions.is_empty() {
        parts.push(format!("versions {}", s.versions.join(", ")));
    }
    let messages = known_messages(d);
    match messages.as_slice() {
        [] => {}
        [one] => parts.push(format!("known message \"{one}\"")),
        many => parts.push(format!("{} known messages: {}", many.len(), many.iter().map(|m| format!("\"{m}\"")).collect::<Vec<_>>().join(", "))),
    }
    if parts.is_empty() {
        "none recognised".to_string()
    } else {
        parts.join("; ")
    }
}

fn chain_line(c: &Candidate) -> String {
    let path: Vec<&str> = c.chain.iter().filter(|s| s.relation != "causedBy").map(|s| s.title.as_str()).collect();
    let causes: Vec<&str> = c.chain.iter().filter(|s| s.relation == "causedBy").map(|s| s.title.as_str()).collect();
    let mut line = path.join(" → ");
    if !causes.is_empty() {
        line.push_str(&format!("; upstream causes to rule out: {}", causes.join("; ")));
    }
    line
}

/// `text` cut at a word boundary to at most `max` characters, with `…` when cut.
fn short(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max).collect();
    let at = cut.rfind(' ').filter(|&i| i > max / 2).unwrap_or(cut.len());
    format!("{}…", &cut[..at])
}

/// One evidence line in words: `message "…"`, `context setting imagePullPolicy: IfNotPresent`,
/// `via hub <title>`, `ruled out by you: "…"`.
fn evidence_words(e: &kubewhy_engine::diagnose::Evidence) -> String {
    let value: String = if e.value.chars().count() > 80 { e.value.chars().take(77).collect::<String>() + "..." } else { e.value.clone() };
    match e.scorer.as_str() {
        "message" => format!("{} `{value}`", e.matched),
        "context" => format!("you said ({}) `{value}`", e.matched),
        "alias" => format!("named as `{value}`"),
        "hub" => format!("a cause of the matched `{}`", e.symptom.trim_start_matches("failure-mode/")),
        "upstream" => format!("can cause the matched `{}`", e.symptom.trim_start_matches("failure-mode/")),
        "version" => format!("version {value}"),
        "ruled-out" => format!("ruled out by you: `{value}`"),
        "setting-contradicted" => format!("against it: {value}"),
        "relevance" => format!("text relevance {value}"),
        other => format!("{other} {value}"),
    }
}

/// Renders a diagnosis for a terminal: short by default (the first candidate with its reasons,
/// mechanism, one check and one fix; a hub with its likely causes and the check that tells each
/// apart; one line each for the rest), everything with `verbose`.
pub(crate) fn diagnosis_text(d: &Diagnosis, verbose: bool) -> String {
    let mut o = String::new();
    let version = d.k8s_version.as_deref().map(|v| format!("Kubernetes {v}")).unwrap_or_else(|| "any Kubernetes version".into());
    let _ = writeln!(o, "{} {}  ({version}; input style: {})", bold("kubewhy why"), dim(&format!("{} bytes", d.input_bytes)), d.signals.input_style);
    let _ = writeln!(o, "{} {}", bold("Signals:"), signals_line(d));
    for n in &d.notices {
        let _ = writeln!(o, "{} {n}", color(AnsiColor::Yellow, "note:"));
    }
    if d.candidates.is_empty() {
        let _ = writeln!(o, "\nNo failure mode in the graph matches this input.");
        return o;
    }
    // A hub first lists its causes itself: the same causes are not repeated below it.
    let hub_first = d.candidates.first().filter(|c| !c.causes.is_empty()).map(|c| c.id.clone());
    for c in &d.candidates {
        if !verbose && c.rank > 1 && hub_first.is_some() && c.hub == hub_first {
            continue;
        }
        let full = verbose || c.rank == 1;
        let _ = writeln!(
            o,
            "\n{} {}  {}  {}",
            bold(&format!("{}.", c.rank)),
            bold(&c.title),
            color(confidence_color(c.confidence), &format!("confidence {:.2}", c.confidence)),
            dim(&c.id)
        );
        let why: Vec<String> = c.evidence.iter().filter(|e| e.scorer != "relevance" || c.evidence.len() == 1).take(if full { 3 } else { 1 }).map(evidence_words).collect();
        if !why.is_empty() {
            let _ = writeln!(o, "   {} {}", dim("why:"), why.join("; "));
        }
        if !full {
            continue;
        }
        if verbose {
            let comp = c.component.as_ref().map(|x| x.title.as_str()).unwrap_or("-");
            let lp = c.loop_.as_ref().map(|x| x.title.as_str()).unwrap_or("-");
            let _ = writeln!(o, "   area {} · {} · loop {} · component {} · applies {}", c.area, c.level, lp, comp, c.applies.description);
        }
        let _ = writeln!(o, "   {} {}", dim("mechanism:"), chain_line(c));
        if verbose && !c.summary.is_empty() {
            let _ = writeln!(o, "   {}", c.summary);
        }
        if !c.causes.is_empty() {
            let shown = if verbose { c.causes.len() } else { c.causes.len().min(4) };
            let _ = writeln!(o, "   {}", bold("Likely causes, and the check that tells each apart:"));
            for (n, k) in c.causes.iter().take(shown).enumerate() {
                let _ = writeln!(o, "     {}. {}  {}", n + 1, k.title, dim(&k.id));
                if let Some(ch) = &k.check {
                    match &ch.command {
                        Some(cmd) => {
                            let _ = writeln!(o, "        $ {}", color(AnsiColor::Cyan, &short(cmd, if verbose { usize::MAX } else { 110 })));
                            let _ = writeln!(o, "          {}", dim(&format!("look for: {}", short(&ch.look_for, if verbose { usize::MAX } else { 110 }))));
                        }
                        None => {
                            let _ = writeln!(o, "        {}", dim(&format!("look for: {}", short(&ch.look_for, if verbose { usize::MAX } else { 110 }))));
                        }
                    }
                }
            }
            if shown < c.causes.len() {
                let _ = writeln!(o, "     … {} more (--verbose)", c.causes.len() - shown);
            }
        }
        let checks: Vec<&kubewhy_engine::diagnose::CheckOut> = if verbose { c.checks.iter().collect() } else { c.checks.iter().take(if c.causes.is_empty() { 1 } else { 0 }).collect() };
        for k in checks {
            let tag = if k.distinguishes.is_empty() { String::new() } else { color(AnsiColor::Cyan, " [tells apart]") };
            let _ = writeln!(o, "   {} {}{tag}", bold("check:"), k.title);
            if let Some(cmd) = &k.command {
                let _ = writeln!(o, "     $ {}", color(AnsiColor::Cyan, cmd));
            }
            let _ = writeln!(o, "     look for: {}", k.look_for);
            if let Some(r) = &k.rules_out {
                let _ = writeln!(o, "     rules it out: {r}");
            }
        }
        for f in c.fixes.iter().take(if verbose { usize::MAX } else { 1 }) {
            let _ = writeln!(o, "   {} {} (risk {})", bold("fix:"), f.action, f.risk);
            if let Some(cmd) = &f.command {
                let _ = writeln!(o, "     $ {}", color(AnsiColor::Cyan, cmd));
            }
        }
        if verbose && !c.references.is_empty() {
            let refs: Vec<&str> = c.references.iter().take(4).map(String::as_str).collect();
            let _ = writeln!(o, "   {} {}", dim("references:"), refs.join(", "));
        }
    }
    if verbose && !d.distinguishing_checks.is_empty() {
        let _ = writeln!(o, "\n{}", bold("To tell the top candidates apart:"));
        for k in &d.distinguishing_checks {
            let cmd = k.command.as_deref().map(|c| format!(" — $ {c}")).unwrap_or_default();
            let _ = writeln!(o, "  • {}{cmd}\n    confirms {} if: {}", k.title, k.confirms, k.look_for);
        }
    }
    if !verbose {
        let _ = writeln!(o, "\n{}", dim("--verbose or -o markdown for every check, fix and reference"));
    }
    o
}

/// Renders a diagnosis as Markdown.
pub(crate) fn diagnosis_markdown(d: &Diagnosis) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "# kubewhy diagnosis\n");
    let _ = writeln!(o, "- Kubernetes version: {}", d.k8s_version.as_deref().unwrap_or("any"));
    let _ = writeln!(o, "- Signals: {}", signals_line(d));
    for n in &d.notices {
        let _ = writeln!(o, "- Note: {n}");
    }
    if d.candidates.is_empty() {
        let _ = writeln!(o, "\nNo failure mode in the graph matches this input.");
    }
    for c in &d.candidates {
        let _ = writeln!(o, "\n## {}. {} (confidence {:.2})\n", c.rank, c.title, c.confidence);
        let _ = writeln!(o, "`{}` · area {} · applies {}\n", c.id, c.area, c.applies.description);
        let _ = writeln!(o, "**Mechanism:** {}\n", chain_line(c));
        if !c.evidence.is_empty() {
            let _ = writeln!(o, "**Why:** {}\n", c.evidence.iter().map(evidence_words).collect::<Vec<_>>().join("; "));
        }
        if !c.summary.is_empty() {
            let _ = writeln!(o, "{}\n", c.summary);
        }
        if !c.causes.is_empty() {
            let _ = writeln!(o, "**Likely causes, and the check that tells each apart**\n");
            for (n, k) in c.causes.iter().enumerate() {
                let check = k.check.as_ref().map(|ch| match &ch.command {
                    Some(cmd) => format!(": `{cmd}` — look for: {}", ch.look_for),
                    None => format!(": look for: {}", ch.look_for),
                }).unwrap_or_default();
                let _ = writeln!(o, "{}. {} (`{}`){check}", n + 1, k.title, k.id);
            }
            o.push('\n');
        }
        if !c.checks.is_empty() {
            let _ = writeln!(o, "**Checks**\n");
            for k in &c.checks {
                let cmd = k.command.as_deref().map(|c| format!(": `{c}`")).unwrap_or_default();
                let rules = k.rules_out.as_deref().map(|r| format!("; rules it out: {r}")).unwrap_or_default();
                let _ = writeln!(o, "- {}{cmd} — look for: {}{rules}", k.title, k.look_for);
            }
            o.push('\n');
        }
        if !c.fixes.is_empty() {
            let _ = writeln!(o, "**Fixes**\n");
            for f in &c.fixes {
                let cmd = f.command.as_deref().map(|c| format!(" (`{c}`)")).unwrap_or_default();
                let _ = writeln!(o, "- {}{cmd} — risk {}", f.action, f.risk);
            }
            o.push('\n');
        }
        if !c.references.is_empty() {
            let _ = writeln!(o, "**References:** {}", c.references.join(", "));
        }
    }
    o
}

fn kind_details(x: &Explanation) -> Vec<(String, String)> {
    let e = &x.entity;
    let mut v = Vec::new();
    match &e.data {
        KindData::Metric { name, metric_type, stability, labels, bad_value, .. } => {
            v.push(("metric".into(), format!("{name} ({metric_type}{})", stability.as_deref().map(|s| format!(", {s}")).unwrap_or_default())));
            if !labels.is_empty() {
                v.push(("labels".into(), labels.join(", ")));
            }
            if let Some(b) = bad_value {
                v.push(("bad value".into(), b.clone()));
            }
        }
        KindData::Field { object, path, .. } => v.push(("field".into(), format!("{object}.{path}"))),
        KindData::Symptom(s) => {
            v.push(("signal".into(), s.signal.as_str().into()));
            if let Some(t) = &s.text {
                v.push(("text".into(), t.clone()));
            }
            if let Some(r) = &s.reason {
                v.push(("reason".into(), r.clone()));
            }
            if let Some(c) = s.code {
                v.push(("code".into(), c.to_string()));
            }
            if let Some(src) = &s.source {
                v.push(("emitted by".into(), src.clone()));
            }
        }
        KindData::Check { command, look_for, .. } => {
            if let Some(c) = command {
                v.push(("command".into(), c.clone()));
            }
            v.push(("look for".into(), look_for.clone()));
        }
        KindData::Fix { action, command, risk } => {
            v.push(("action".into(), action.clone()));
            if let Some(c) = command {
                v.push(("command".into(), c.clone()));
            }
            v.push(("risk".into(), risk.clone()));
        }
        KindData::Myth { correction, .. } => v.push(("correction".into(), correction.clone())),
        KindData::FailureMode(fm) => v.push(("area".into(), fm.area.clone())),
        _ => {}
    }
    if e.applies.since.is_some() || e.applies.until.is_some() {
        v.push(("applies".into(), e.applies.describe()));
    }
    if !e.aliases.is_empty() {
        v.push(("aliases".into(), e.aliases.join(", ")));
    }
    if !e.keps.is_empty() {
        v.push(("KEPs".into(), e.keps.iter().map(|k| format!("KEP-{k}")).collect::<Vec<_>>().join(", ")));
    }
    if !e.feature_gates.is_empty() {
        v.push(("feature gates".into(), e.feature_gates.join(", ")));
    }
    v
}

/// Human label for a relation seen from the entity.
fn relation_label(property: &str, incoming: bool) -> String {
    let s = match (property, incoming) {
        ("partOf", false) => "part of",
        ("partOf", true) => "has parts",
        ("talksTo", false) => "talks to",
        ("talksTo", true) => "talked to by",
        ("reads", false) => "reads",
        ("reads", true) => "read by",
        ("writes", false) => "writes",
        ("writes", true) => "written by",
        ("emits", false) => "emits",
        ("emits", true) => "emitted by",
        ("exposedBy", false) => "exposed by",
        ("exposedBy", true) => "exposes metrics",
        ("involves", false) => "involves",
        ("involves", true) => "failure modes involving it",
        ("inLoop", false) => "in loop",
        ("inLoop", true) => "failure modes in this loop",
        ("concernsField", false) => "concerns field",
        ("concernsField", true) => "failure modes concerning it",
        ("observableVia", false) => "observable via",
        ("observableVia", true) => "reveals failure modes",
        ("manifestsAs", false) => "manifests as",
        ("manifestsAs", true) => "symptom of",
        ("diagnosedBy", false) => "diagnosed by",
        ("diagnosedBy", true) => "diagnoses",
        ("fixedBy", false) => "fixed by",
        ("fixedBy", true) => "fixes",
        ("causedBy", false) => "caused by",
        ("causedBy", true) => "causes",
        ("leadsTo", false) => "leads to",
        ("leadsTo", true) => "follows from",
        ("hasUpstreamCause", false) => "upstream causes (all hops)",
        ("hasUpstreamCause", true) => "downstream effects (all hops)",
        ("describedIn", false) => "described in",
        ("gatedBy", false) => "gated by",
        ("concerns", false) => "concerns",
        ("concerns", true) => "myths about it",
        ("seeAlso", _) => "see also",
        (p, true) => return format!("{p} (incoming)"),
        (p, false) => return p.to_string(),
    };
    s.to_string()
}

/// Relations grouped by label: each item as (id, "title (id)").
fn grouped(x: &Explanation, incoming: bool) -> Vec<(String, Vec<(String, String)>)> {
    let rels = if incoming { &x.incoming } else { &x.outgoing };
    let mut groups: Vec<(String, Vec<(String, String)>)> = Vec::new();
    for r in rels {
        let label = relation_label(&r.property, incoming);
        let item = (r.id.clone(), format!("{} ({})", r.title, r.id));
        match groups.iter_mut().find(|(l, _)| *l == label) {
            Some((_, v)) => v.push(item),
            None => groups.push((label, vec![item])),
        }
    }
    groups
}

/// Renders an explanation for a terminal.
pub(crate) fn explanation_text(x: &Explanation) -> String {
    let e = &x.entity;
    let mut o = String::new();
    let _ = writeln!(o, "{}  {}  {}", bold(&e.title), dim(&e.id), dim(&format!("[{}]", e.location)));
    for (k, v) in kind_details(x) {
        let _ = writeln!(o, "  {} {v}", dim(&format!("{k}:")));
    }
    if !e.body.is_empty() {
        let _ = writeln!(o, "\n{}\n", e.body.trim());
    }
    // What a reader needs first: for a component, each loop with its failure modes (what it
    // writes, reads and emits counted on one line); then the other relations, grouped and
    // capped, leaving out what the loops and the metrics line already show.
    let mut shown: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
    let slugs = |v: &[kubewhy_engine::diagnose::EntityRef], n: usize| {
        let mut s = v.iter().take(n).map(|r| r.id.split_once('/').map(|(_, s)| s).unwrap_or(&r.id).to_string()).collect::<Vec<_>>().join(", ");
        if v.len() > n {
            s.push_str(&format!(", … {} more", v.len() - n));
        }
        s
    };
    if !x.loops.is_empty() {
        let _ = writeln!(o, "{}", bold(&format!("Loops ({}):", x.loops.len())));
    }
    for l in &x.loops {
        shown.insert(&l.loop_.id);
        let _ = writeln!(o, "  {} {}", bold(&l.loop_.title), dim(&format!("({})", l.loop_.id)));
        // At most EXPLAIN_FMS_PER_LOOP failure modes per loop (the graph holds dozens for the
        // kubelet's loops); the rest are counted with the command that lists them all, and ones
        // already listed under an earlier loop are counted, not repeated.
        let mut listed = 0;
        let mut above = 0;
        let mut more = 0;
        for f in &l.failure_modes {
            if !shown.insert(&f.id) {
                above += 1;
            } else if listed < EXPLAIN_FMS_PER_LOOP {
                listed += 1;
                let _ = writeln!(o, "    failure mode: {} {}", f.title, dim(&format!("({})", f.id)));
            } else {
                more += 1;
            }
        }
        if more > 0 || above > 0 {
            let mut parts = Vec::new();
            if more > 0 {
                parts.push(format!("{more} more failure mode(s): kubewhy explain {} -o json", l.loop_.id));
            }
            if above > 0 {
                parts.push(format!("{above} listed above"));
            }
            let _ = writeln!(o, "    {}", dim(&format!("… {}", parts.join("; "))));
        }
        let mut io = Vec::new();
        if !l.writes.is_empty() {
            io.push(format!("writes {}", slugs(&l.writes, 4)));
        }
        if !l.reads.is_empty() {
            io.push(format!("reads {}", slugs(&l.reads, 4)));
        }
        if !l.emits.is_empty() {
            io.push(format!("emits {} metric(s)", l.emits.len()));
        }
        if !io.is_empty() {
            let _ = writeln!(o, "    {}", dim(&io.join("; ")));
        }
    }
    for m in &x.metrics {
        shown.insert(&m.id);
    }
    for incoming in [false, true] {
        for (label, items) in grouped(x, incoming) {
            let rest: Vec<&(String, String)> = items.iter().filter(|(id, _)| !shown.contains(id.as_str())).collect();
            let hidden = items.len() - rest.len();
            if rest.is_empty() {
                continue;
            }
            let also = if hidden > 0 { format!(", {hidden} shown above") } else { String::new() };
            let _ = writeln!(o, "{}", bold(&format!("{label} ({}{also}):", rest.len())));
            for (_, i) in rest.iter().take(8) {
                let _ = writeln!(o, "  • {i}");
            }
            if rest.len() > 8 {
                let _ = writeln!(o, "  • … and {} more (kubewhy explain {} -o json)", rest.len() - 8, e.id);
            }
        }
    }
    if !x.metrics.is_empty() {
        let names: Vec<&str> = x.metrics.iter().take(12).map(|m| m.title.as_str()).collect();
        let more = x.metrics.len().saturating_sub(names.len());
        let _ = writeln!(o, "{} {}{}", bold(&format!("metrics exposed ({}):", x.metrics.len())), names.join(", "), if more > 0 { format!(", … and {more} more (kubewhy explain {} -o json)", e.id) } else { String::new() });
    }
    if !e.references.is_empty() {
        let _ = writeln!(o, "{}", bold("references:"));
        for r in &e.references {
            let _ = writeln!(o, "  • {r}");
        }
    }
    o
}

/// Renders an explanation as Markdown.
pub(crate) fn explanation_markdown(x: &Explanation, _engine: &Engine) -> String {
    let e = &x.entity;
    let mut o = String::new();
    let _ = writeln!(o, "# {}\n\n`{}`\n", e.title, e.id);
    for (k, v) in kind_details(x) {
        let _ = writeln!(o, "- **{k}:** {v}");
    }
    if !e.body.is_empty() {
        let _ = writeln!(o, "\n{}\n", e.body.trim());
    }
    for incoming in [false, true] {
        for (label, items) in grouped(x, incoming) {
            let _ = writeln!(o, "\n## {label} ({})\n", items.len());
            for (_, i) in items.iter().take(20) {
                let _ = writeln!(o, "- {i}");
            }
            if items.len() > 20 {
                let _ = writeln!(o, "- … and {} more", items.len() - 20);
            }
        }
    }
    if !e.references.is_empty() {
        let _ = writeln!(o, "\n## References\n");
        for r in &e.references {
            let _ = writeln!(o, "- {r}");
        }
    }
    o
}

/// Renders search hits.
pub(crate) fn search_text(hits: &[Hit], engine: &Engine, markdown: bool) -> String {
    let mut o = String::new();
    for (i, h) in hits.iter().enumerate() {
        let Some(e) = engine.knowledge().get(&h.id) else { continue };
        if markdown {
            let _ = writeln!(o, "{}. **{}** (`{}`) — {}", i + 1, e.title, e.id, e.summary(160));
        } else {
            let _ = writeln!(o, "{:>2}. {}  {}  {}", i + 1, bold(&e.title), dim(&e.id), dim(&format!("{:.2}", h.score)));
            let s = e.summary(160);
            if !s.is_empty() {
                let _ = writeln!(o, "    {s}");
            }
        }
    }
    o
}

fn csv_cell(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Renders SPARQL results.
pub(crate) fn sparql(out: &QueryOutput, fmt: SparqlOutput) -> anyhow::Result<String> {
    if fmt == SparqlOutput::Json {
        return Ok(serde_json::to_string_pretty(out)? + "\n");
    }
    let mut o = String::new();
    match out {
        QueryOutput::Boolean { value } => {
            let _ = writeln!(o, "{value}");
        }
        QueryOutput::Graph { ntriples, truncated, .. } => {
            if fmt == SparqlOutput::Csv {
                anyhow::bail!("CSV output is for SELECT queries; CONSTRUCT and DESCRIBE print N-Triples with --output table");
            }
            o.push_str(ntriples);
            if *truncated {
                let _ = writeln!(o, "# truncated at the row limit");
            }
        }
        QueryOutput::Solutions { variables, rows, truncated } => {
            let cell = |c: &Option<String>| c.clone().unwrap_or_default();
            if fmt == SparqlOutput::Csv {
                let _ = writeln!(o, "{}", variables.iter().map(|v| csv_cell(v)).collect::<Vec<_>>().join(","));
                for r in rows {
                    let _ = writeln!(o, "{}", r.iter().map(|c| csv_cell(&cell(c))).collect::<Vec<_>>().join(","));
                }
            } else {
                let mut widths: Vec<usize> = variables.iter().map(|v| v.len() + 1).collect();
                for r in rows {
                    for (i, c) in r.iter().enumerate() {
                        widths[i] = widths[i].max(cell(c).chars().count().min(80));
                    }
                }
                let head: Vec<String> = variables.iter().enumerate().map(|(i, v)| format!("{:<w$}", format!("?{v}"), w = widths[i])).collect();
                let _ = writeln!(o, "{}", head.join("  ").trim_end());
                for r in rows {
                    let line: Vec<String> = r.iter().enumerate().map(|(i, c)| format!("{:<w$}", cell(c), w = widths[i])).collect();
                    let _ = writeln!(o, "{}", line.join("  ").trim_end());
                }
                let _ = writeln!(o, "({} row{}{})", rows.len(), if rows.len() == 1 { "" } else { "s" }, if *truncated { ", truncated at the row limit" } else { "" });
            }
        }
    }
    Ok(o)
}

/// Renders statistics.
pub(crate) fn stats_text(s: &Stats) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "entities: {}  (triples: {}, symptom templates: {}, causal links: {})", s.entities, s.triples, s.symptom_templates, s.causal_links);
    let _ = writeln!(o, "by kind:");
    for (k, n) in &s.by_kind {
        let _ = writeln!(o, "  {k:<14} {n:>5}");
    }
    let _ = writeln!(o, "failure modes by area:");
    for (a, n) in &s.failure_modes_by_area {
        let _ = writeln!(o, "  {a:<14} {n:>5}");
    }
    let _ = writeln!(
        o,
        "failure modes by level: {} hubs (symptom level), {} causes ({} of them causes of a hub)",
        s.failure_modes_by_level.get("symptom").copied().unwrap_or(0),
        s.failure_modes_by_level.get("cause").copied().unwrap_or(0),
        s.causes_of_hubs
    );
    let b = &s.breadth;
    let fm = s.by_kind.get("failure-mode").copied().unwrap_or(0).max(1);
    let _ = writeln!(o, "breadth:");
    let _ = writeln!(o, "  fields with their writer                 {:>5}", b.fields_with_writer);
    let _ = writeln!(o, "  curated metrics (bad value, linked)      {:>5}", b.curated_metrics_linked_with_bad_value);
    let _ = writeln!(o, "  failure modes linking a field or metric  {:>5} ({:.0}%)", b.failure_modes_with_field_or_metric, 100.0 * b.failure_modes_with_field_or_metric as f64 / fm as f64);
    let _ = writeln!(o, "  failure modes with a check and a fix     {:>5}", b.failure_modes_with_check_and_fix);
    let _ = writeln!(o, "  coverage topics covered                  {:>5} of {}", b.topics_covered, b.topics);
    o
}

/// Renders a feature gate.
pub(crate) fn gate_text(a: &kubewhy_engine::lookup::GateAnswer) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "{}", bold(&a.statement));
    let _ = writeln!(o, "lifecycle:");
    for s in &a.gate.step {
        let d = s.default.map(|d| if d { " default on" } else { " default off" }).unwrap_or("");
        let l = if s.locked == Some(true) { ", locked" } else { "" };
        let _ = writeln!(o, "  {:>5}  {}{d}{l}", s.version, s.stage);
    }
    for k in &a.keps {
        let _ = writeln!(o, "KEP: {}", k.title);
    }
    if !a.gated.is_empty() {
        let _ = writeln!(o, "in the graph:");
        for g in &a.gated {
            let _ = writeln!(o, "  • {} ({})", g.title, g.id);
        }
    }
    let _ = writeln!(o, "{}", dim(&format!("source: {}", a.gate.source)));
    o
}

/// Renders KEPs.
pub(crate) fn kep_text(list: &[kubewhy_engine::lookup::KepAnswer]) -> String {
    let mut o = String::new();
    for a in list {
        let k = &a.kep;
        let _ = writeln!(o, "{}  {}", bold(&format!("KEP-{}", k.number)), bold(&k.title));
        for t in &k.other_titles {
            let _ = writeln!(o, "  also numbered {}: {t}", k.number);
        }
        let _ = writeln!(o, "  {} · status {} · stage {}", k.sig, k.status, if k.stage.is_empty() { "-" } else { &k.stage });
        let ms: Vec<String> = [("alpha", &k.alpha), ("beta", &k.beta), ("stable", &k.stable), ("deprecated", &k.deprecated)]
            .iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(n, v)| format!("{n} {v}"))
            .collect();
        if !ms.is_empty() {
            let _ = writeln!(o, "  milestones: {}", ms.join(", "));
        }
        if !k.feature_gates.is_empty() {
            let _ = writeln!(o, "  feature gates: {}", k.feature_gates.join(", "));
        }
        for c in &a.cited_by {
            let _ = writeln!(o, "  cited by {} ({})", c.title, c.id);
        }
        let _ = writeln!(o, "  {}", dim(&format!("https://github.com/kubernetes/enhancements/tree/master/{}", k.path)));
    }
    o
}

/// Renders a metric.
pub(crate) fn metric_text(a: &kubewhy_engine::lookup::MetricAnswer) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "{}  {} {}", bold(&a.name), a.metric_type, a.stability.as_deref().unwrap_or(""));
    let _ = writeln!(o, "  component: {} ({})", a.component.title, a.component.id);
    if !a.labels.is_empty() {
        let _ = writeln!(o, "  labels: {}", a.labels.join(", "));
    }
    if let Some(m) = &a.meaning {
        let _ = writeln!(o, "  {m}");
    }
    if let Some(b) = &a.bad_value {
        let _ = writeln!(o, "  {} {b}", bold("bad value:"));
    }
    for f in &a.failure_modes {
        let _ = writeln!(o, "  reveals: {} ({})", f.title, f.id);
    }
    for l in &a.loops {
        let _ = writeln!(o, "  emitted by loop: {} ({})", l.title, l.id);
    }
    if !a.curated {
        let _ = writeln!(o, "  {}", dim("not curated yet: only the upstream facts are known"));
    }
    if let Some(s) = &a.source {
        let _ = writeln!(o, "  {}", dim(&format!("source: {s}")));
    }
    o
}

/// A slice's rows by input style then by area, indented under its summary line.
fn slice_rows(o: &mut String, slice: &kubewhy_evals::Slice) {
    for (k, s) in slice.by_style.iter().chain(&slice.by_area) {
        let _ = writeln!(o, "  {k:<12} {:>4} cases  top-1 {:.3}  top-3 {:.3}", s.cases, s.top1, s.top3);
    }
}

/// Renders an eval report summary.
pub(crate) fn eval_text(r: &kubewhy_evals::Report, baseline: Option<&kubewhy_evals::Report>, gates: &[String], regressions: &[String]) -> String {
    let mut o = String::new();
    let d = |now: f64, then: Option<f64>| match then {
        Some(t) if (now - t).abs() >= 0.0005 => format!(" ({:+.3})", now - t),
        _ => String::new(),
    };
    let b = baseline.map(|b| b.overall);
    let _ = writeln!(
        o,
        "{} {} cases: top-1 {:.3}{}  top-3 {:.3}{}  MRR {:.3}{}  latency p50 {:.2} ms p99 {:.2} ms",
        bold("gold set:"),
        r.overall.cases,
        r.overall.top1,
        d(r.overall.top1, b.map(|x| x.top1)),
        r.overall.top3,
        d(r.overall.top3, b.map(|x| x.top3)),
        r.overall.mrr,
        d(r.overall.mrr, b.map(|x| x.mrr)),
        r.latency_p50_ms,
        r.latency_p99_ms
    );
    if let Some(rw) = &r.realworld {
        let _ = writeln!(o, "{} {} cases: top-1 {:.3}  top-3 {:.3}  MRR {:.3}", bold("realworld slice:"), rw.cases, rw.top1, rw.top3, rw.mrr);
    }
    if let Some(l) = &r.ledger {
        let _ = writeln!(o, "{} {} cases: top-1 {:.3}  top-3 {:.3}  MRR {:.3}", bold("ledger slice:"), l.overall.cases, l.overall.top1, l.overall.top3, l.overall.mrr);
        for b in &r.ledger_before {
            let _ = writeln!(o, "  batch {:<3} {:>4} reports  before: top-1 {:.3}  top-3 {:.3}", b.batch, b.lines, b.before_top1, b.before_top3);
        }
        slice_rows(&mut o, l);
    }
    if let Some(c) = &r.causes {
        let then = baseline.and_then(|b| b.causes.as_ref()).map(|t| t.overall);
        let _ = writeln!(
            o,
            "{} {} cases: top-1 {:.3}{}  top-3 {:.3}{}  MRR {:.3}",
            bold("cause slice:"),
            c.overall.cases,
            c.overall.top1,
            d(c.overall.top1, then.map(|x| x.top1)),
            c.overall.top3,
            d(c.overall.top3, then.map(|x| x.top3)),
            c.overall.mrr
        );
        slice_rows(&mut o, c);
    }
    for (title, groups) in [("area", &r.by_area), ("difficulty", &r.by_difficulty), ("style", &r.by_style)] {
        let _ = writeln!(o, "by {title}:");
        for (k, s) in groups {
            let _ = writeln!(o, "  {k:<12} {:>4} cases  top-1 {:.3}  top-3 {:.3}  MRR {:.3}", s.cases, s.top1, s.top3, s.mrr);
        }
    }
    let misses: Vec<&kubewhy_evals::CaseResult> = r.results.iter().filter(|x| x.rank.is_none_or(|k| k > 3)).collect();
    if !misses.is_empty() {
        let _ = writeln!(o, "not in the top 3 ({}):", misses.len());
        for m in misses {
            let _ = writeln!(o, "  {}: expected {} (rank {}), first was {}", m.id, m.expected.join(" | "), m.rank.map(|k| k.to_string()).unwrap_or_else(|| "-".into()), m.top.as_deref().unwrap_or("nothing"));
        }
    }
    for g in gates {
        let _ = writeln!(o, "{} {g}", color(AnsiColor::Red, "gate failed:"));
    }
    for g in regressions {
        let _ = writeln!(o, "{} {g}", color(AnsiColor::Red, "regression:"));
    }
    if gates.is_empty() && regressions.is_empty() {
        let passed = format!(
            "gates passed (top-3 >= {:.2}, top-1 >= {:.2}, every area top-3 >= {:.2}, no drop > 2 points)",
            kubewhy_evals::GOLD_TOP3_GATE,
            kubewhy_evals::GOLD_TOP1_GATE,
            kubewhy_evals::GOLD_AREA_TOP3_GATE
        );
        let _ = writeln!(o, "{}", color(AnsiColor::Green, &passed));
    }
    o
}

/// Counts over graded answers.
pub(crate) fn grade_summary(g: &[kubewhy_evals::Grade]) -> serde_json::Value {
    let count = |v: &str| g.iter().filter(|x| x.verdict == v).count();
    let mech = if g.is_empty() { 0.0 } else { g.iter().map(|x| x.mechanism_score).sum::<f64>() / g.len() as f64 };
    serde_json::json!({
        "answers": g.len(),
        "correct": count("correct"), "partial": count("partial"), "wrong": count("wrong"), "fabricated": count("fabricated"),
        "mechanism_score": (mech * 1000.0).round() / 1000.0,
        "claims_supported": g.iter().map(|x| x.supported).sum::<usize>(),
        "claims_contradicted": g.iter().map(|x| x.contradicted).sum::<usize>(),
        "claims_unknown": g.iter().map(|x| x.unknown).sum::<usize>(),
    })
}

/// Renders grades.
pub(crate) fn grades_text(g: &[kubewhy_evals::Grade]) -> String {
    let mut o = String::new();
    for x in g {
        let c = match x.verdict.as_str() {
            "correct" => AnsiColor::Green,
            "partial" => AnsiColor::Yellow,
            _ => AnsiColor::Red,
        };
        let _ = writeln!(
            o,
            "{}  {}  mechanism {:.1} (failure mode {}, component {}, loop {})  claims: {} supported, {} contradicted, {} unknown",
            bold(&x.id),
            color(c, &x.verdict),
            x.mechanism_score,
            yes(x.names_failure_mode),
            yes(x.names_component),
            yes(x.names_loop),
            x.supported,
            x.contradicted,
            x.unknown
        );
        for cl in x.claims.iter().filter(|c| c.verdict != kubewhy_engine::claims::Verdict::Supported) {
            let _ = writeln!(o, "    {:?} {}: {} — {}", cl.verdict, cl.kind, cl.subject, cl.fact);
        }
    }
    let s = grade_summary(g);
    let _ = writeln!(o, "{} {}", bold("overall:"), s);
    o
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// Renders checked claims.
pub(crate) fn claims_text(claims: &[kubewhy_engine::claims::Claim]) -> String {
    use kubewhy_engine::claims::Verdict;
    let mut o = String::new();
    if claims.is_empty() {
        let _ = writeln!(o, "no checkable claim found (feature gates, KEPs, metrics, removal/GA versions)");
    }
    for c in claims {
        let (label, col) = match c.verdict {
            Verdict::Supported => ("supported", AnsiColor::Green),
            Verdict::Contradicted => ("contradicted", AnsiColor::Red),
            Verdict::Unknown => ("unknown", AnsiColor::Yellow),
        };
        let _ = writeln!(o, "{} {} {}: {}\n    claim: {}\n    graph: {}", color(col, label), c.kind, bold(&c.subject), c.entity.as_deref().unwrap_or("-"), c.text, c.fact);
    }
    o
}
