//! Server-rendered SVG diagrams: a failure mode's causal chain (upstream causes → it → what it
//! leads to) and its mechanism path (symptom → failure mode → loop → component).
//!
//! The layout is columns of boxes joined by arrows; each box links to its entity's page. Sizes are
//! in CSS pixels; text is wrapped at a fixed number of characters.

use super::html::{esc, Ctx};

/// One box of a diagram.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    /// Entity id (the box links to its page), or `None` for a note such as "3 more".
    pub(crate) id: Option<String>,
    /// Text shown in the box.
    pub(crate) label: String,
    /// Kind prefix, for the box's colour (`failure-mode`).
    pub(crate) kind: String,
    /// Whether the box is the page's own entity (drawn emphasised).
    pub(crate) current: bool,
}

impl Node {
    pub(crate) fn entity(id: &str, label: &str, kind: &str, current: bool) -> Node {
        Node { id: Some(id.to_string()), label: label.to_string(), kind: kind.to_string(), current }
    }

    pub(crate) fn note(label: String) -> Node {
        Node { id: None, label, kind: "note".to_string(), current: false }
    }
}

/// A column: its heading and boxes.
pub(crate) type Column = (String, Vec<Node>);

/// An arrow from box `(column, index)` to box `(column, index)`.
pub(crate) type Edge = ((usize, usize), (usize, usize));

/// Box width and column gap: normal, and compact (for long chains of single boxes).
const COL_W: f64 = 210.0;
const GAP_X: f64 = 60.0;
const COMPACT_W: f64 = 160.0;
const COMPACT_GAP: f64 = 34.0;
const GAP_Y: f64 = 14.0;
const LINE_H: f64 = 16.0;
const PAD: f64 = 10.0;
const HEAD_H: f64 = 26.0;
#[cfg(test)]
const WRAP: usize = 27;
const MAX_LINES: usize = 3;

fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for w in text.split_whitespace() {
        if !cur.is_empty() && cur.chars().count() + 1 + w.chars().count() > width {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(w);
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    let mut lines: Vec<String> = lines
        .into_iter()
        .map(|l| if l.chars().count() > width + 2 { format!("{}…", l.chars().take(width).collect::<String>()) } else { l })
        .collect();
    if lines.len() > MAX_LINES {
        lines.truncate(MAX_LINES);
        if let Some(last) = lines.last_mut() {
            let cut: String = last.chars().take(width.saturating_sub(1)).collect();
            *last = format!("{cut}…");
        }
    }
    if lines.is_empty() {
        lines.push(String::new());
    }
    lines
}

/// Renders columns of boxes with arrows as an inline `<svg>`; `title` names the picture for
/// assistive technology and `css_class` distinguishes diagrams (`chain`, `mechanism`).
pub(crate) fn diagram(ctx: &Ctx, css_class: &str, title: &str, cols: &[Column], edges: &[Edge]) -> String {
    draw(ctx, css_class, title, cols, edges, COL_W, GAP_X)
}

/// [`diagram`] with narrower boxes, for a chain of many single steps.
pub(crate) fn compact_diagram(ctx: &Ctx, css_class: &str, title: &str, cols: &[Column], edges: &[Edge]) -> String {
    draw(ctx, css_class, title, cols, edges, COMPACT_W, COMPACT_GAP)
}

fn draw(ctx: &Ctx, css_class: &str, title: &str, cols: &[Column], edges: &[Edge], col_w: f64, gap_x: f64) -> String {
    let width_chars = ((col_w - 2.0 * PAD) / 7.0) as usize;
    let wrapped: Vec<Vec<Vec<String>>> = cols
        .iter()
        .map(|(_, nodes)| nodes.iter().map(|n| wrap(&n.label, if n.current { width_chars.saturating_sub(3) } else { width_chars })).collect())
        .collect();
    let heights: Vec<Vec<f64>> = wrapped.iter().map(|c| c.iter().map(|l| l.len() as f64 * LINE_H + 2.0 * PAD).collect()).collect();
    let col_h: Vec<f64> = heights.iter().map(|c| c.iter().sum::<f64>() + GAP_Y * c.len().saturating_sub(1) as f64).collect();
    let inner_h = col_h.iter().cloned().fold(0.0, f64::max).max(40.0);
    let height = inner_h + HEAD_H + 12.0;
    let width = cols.len() as f64 * col_w + cols.len().saturating_sub(1) as f64 * gap_x + 16.0;
    // Box positions: (x, y, h) per node, each column centred vertically.
    let mut pos: Vec<Vec<(f64, f64, f64)>> = Vec::new();
    for (ci, hs) in heights.iter().enumerate() {
        let x = 8.0 + ci as f64 * (col_w + gap_x);
        let mut y = HEAD_H + (inner_h - col_h[ci]) / 2.0;
        let mut v = Vec::new();
        for h in hs {
            v.push((x, y, *h));
            y += h + GAP_Y;
        }
        pos.push(v);
    }
    let id = format!("{css_class}-title");
    let mut o = format!(
        "<svg class=\"diagram {css_class}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\" role=\"img\" aria-labelledby=\"{id}\">\n<title id=\"{id}\">{}</title>\n<defs><marker id=\"{css_class}-arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#555\"/></marker></defs>\n",
        esc(title)
    );
    for (ci, (head, _)) in cols.iter().enumerate() {
        let x = 8.0 + ci as f64 * (col_w + gap_x) + col_w / 2.0;
        o.push_str(&format!("<text class=\"col-head\" x=\"{x:.0}\" y=\"16\" text-anchor=\"middle\" font-size=\"12\" font-weight=\"bold\" fill=\"#444\">{}</text>\n", esc(head)));
    }
    for ((a, i), (b, j)) in edges {
        let (Some(&(x1, y1, h1)), Some(&(x2, y2, h2))) = (pos.get(*a).and_then(|c| c.get(*i)), pos.get(*b).and_then(|c| c.get(*j))) else { continue };
        let (sx, sy, ex, ey) = (x1 + col_w, y1 + h1 / 2.0, x2 - 2.0, y2 + h2 / 2.0);
        let mx = (sx + ex) / 2.0;
        o.push_str(&format!(
            "<path class=\"edge\" d=\"M{sx:.1},{sy:.1} C{mx:.1},{sy:.1} {mx:.1},{ey:.1} {ex:.1},{ey:.1}\" fill=\"none\" stroke=\"#555\" stroke-width=\"1.4\" marker-end=\"url(#{css_class}-arrow)\"/>\n"
        ));
    }
    for (ci, (_, nodes)) in cols.iter().enumerate() {
        for (ni, n) in nodes.iter().enumerate() {
            let (x, y, h) = pos[ci][ni];
            let (fill, stroke) = colours(&n.kind, n.current);
            let mut g = format!(
                "<g class=\"node k-{}{}\"><rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{col_w:.0}\" height=\"{h:.0}\" rx=\"6\" fill=\"{fill}\" stroke=\"{stroke}\" stroke-width=\"{}\"/>",
                esc(&n.kind),
                if n.current { " current" } else { "" },
                if n.current { 2.5 } else { 1.2 }
            );
            for (li, line) in wrapped[ci][ni].iter().enumerate() {
                let ty = y + PAD + LINE_H * (li as f64 + 0.8);
                g.push_str(&format!(
                    "<text x=\"{:.1}\" y=\"{ty:.1}\" font-size=\"12.5\" fill=\"#111\"{}>{}</text>",
                    x + PAD,
                    if n.current { " font-weight=\"bold\"" } else { "" },
                    esc(line)
                ));
            }
            g.push_str("</g>");
            match &n.id {
                Some(eid) => o.push_str(&format!("<a href=\"{}\" data-id=\"{}\"><title>{}</title>{g}</a>\n", esc(&ctx.entity(eid)), esc(eid), esc(&format!("{} ({eid})", n.label)))),
                None => o.push_str(&format!("{g}\n")),
            }
        }
    }
    o.push_str("</svg>");
    o
}

fn colours(kind: &str, current: bool) -> (&'static str, &'static str) {
    let fill = match kind {
        "failure-mode" => "#fde2e1",
        "symptom" => "#fff4cc",
        "loop" => "#e1effd",
        "component" => "#e3f6e8",
        "note" => "#f2f2f2",
        _ => "#efe8fb",
    };
    (fill, if current { "#b3261e" } else { "#777" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_cuts_long_titles_to_three_lines() {
        let l = wrap("Pod Pending: no node has enough free allocatable CPU, memory or other resource for its requests", WRAP);
        assert_eq!(l.len(), 3);
        assert!(l[2].ends_with('…'));
        assert!(l.iter().all(|x| x.chars().count() <= WRAP + 3));
    }

    #[test]
    fn diagram_has_boxes_links_and_arrows() {
        let ctx = Ctx::server("/");
        let cols = vec![
            ("Caused by".to_string(), vec![Node::entity("failure-mode/a", "A <x>", "failure-mode", false)]),
            ("This".to_string(), vec![Node::entity("failure-mode/b", "B", "failure-mode", true)]),
        ];
        let s = diagram(&ctx, "chain", "t", &cols, &[((0, 0), (1, 0))]);
        assert!(s.starts_with("<svg"));
        assert!(s.contains("href=\"/e/failure-mode/a\""));
        assert!(s.contains("A &lt;x&gt;"));
        assert_eq!(s.matches("class=\"edge\"").count(), 1);
    }
}
