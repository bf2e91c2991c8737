//! The SPARQL guard: limits on a query's text and shape, checked before it is evaluated
//! (issue 16: one hostile query must not crash or exhaust the process).
//!
//! - Before parsing ([`check_text`]): at most [`MAX_QUERY_BYTES`] bytes and brackets nested at
//!   most [`MAX_NESTING`] deep (`{`, `(`, `[` outside strings, IRIs and comments), so that the
//!   recursive parser cannot overflow the stack.
//! - After parsing ([`check_query`]): at most [`MAX_NODES`] algebra nodes, [`MAX_DEPTH`] levels,
//!   [`MAX_PATH_NODES`] property-path elements; no cartesian product (a join whose two sides
//!   share no variable); string functions whose result size is bounded statically by
//!   [`MAX_VALUE_BYTES`] (`REPLACE` needs a constant pattern that cannot match the empty string
//!   and a constant replacement; `CONCAT`, `UCASE`, `ENCODE_FOR_URI` ... multiply sizes).
//!
//! Each refusal is a [`Refusal`] naming the limit that was hit.

use spargebra::algebra::{AggregateExpression, Expression, Function, GraphPattern, OrderExpression, PropertyPathExpression};
use spargebra::term::{NamedNodePattern, TermPattern, TriplePattern};
use spargebra::Query;
use std::collections::BTreeMap;

/// Longest accepted query text, in bytes.
pub const MAX_QUERY_BYTES: usize = 16 * 1024;
/// Deepest accepted bracket nesting (`{`, `(`, `[`) in the query text.
pub const MAX_NESTING: usize = 64;
/// Most algebra nodes (patterns, expressions, path elements) in one query.
pub const MAX_NODES: usize = 4_000;
/// Deepest accepted algebra tree.
pub const MAX_DEPTH: usize = 200;
/// Most triple patterns in one group (a property path of n steps counts n).
pub const MAX_BGP_PATTERNS: usize = 64;
/// Most property-path elements in one query (runtime queries do not need long paths: the
/// causal closure is materialised as `kw:hasUpstreamCause`).
pub const MAX_PATH_NODES: usize = 32;
/// Largest string value an expression may build, in bytes (a static upper bound, computed from
/// the largest term in the graph and the constants of the query).
pub const MAX_VALUE_BYTES: u64 = 1024 * 1024;

/// Why a query was refused before evaluation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Refusal(pub String);

fn refuse<T>(msg: impl Into<String>) -> Result<T, Refusal> {
    Err(Refusal(msg.into()))
}

/// Checks the query text before it is parsed: its length and bracket nesting.
///
/// # Errors
/// A [`Refusal`] naming the limit and where it was passed (byte offset).
pub fn check_text(query: &str) -> Result<(), Refusal> {
    if query.len() > MAX_QUERY_BYTES {
        return refuse(format!("the query is {} bytes long; at most {MAX_QUERY_BYTES} bytes are accepted", query.len()));
    }
    let b = query.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'{' | b'(' | b'[' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return refuse(format!("the query nests brackets more than {MAX_NESTING} deep (at byte {i})"));
                }
            }
            b'}' | b')' | b']' => depth = depth.saturating_sub(1),
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            q @ (b'"' | b'\'') => {
                let long = b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q);
                i += if long { 3 } else { 1 };
                while i < b.len() {
                    if b[i] == b'\\' {
                        i += 2;
                        continue;
                    }
                    if b[i] == q && (!long || (b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q))) {
                        i += if long { 2 } else { 0 };
                        break;
                    }
                    i += 1;
                }
            }
            b'<' => {
                // An IRI (`<...>` without spaces or brackets) or the less-than operator.
                let mut j = i + 1;
                while j < b.len() && !matches!(b[j], b'>' | b'<' | b'"' | b'{' | b'}' | b'|' | b'^' | b'`' | b'\\' | 0..=b' ') {
                    j += 1;
                }
                if b.get(j) == Some(&b'>') {
                    i = j;
                }
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// Checks a parsed query's shape; `max_term_bytes` is the size of the largest term a pattern can
/// bind (the graph's largest literal or IRI).
///
/// # Errors
/// A [`Refusal`] naming the limit that was passed.
pub fn check_query(query: &Query, max_term_bytes: u64) -> Result<(), Refusal> {
    let pattern = match query {
        Query::Select { pattern, .. } | Query::Construct { pattern, .. } | Query::Describe { pattern, .. } | Query::Ask { pattern, .. } => pattern,
    };
    let mut w = Walker { nodes: 0, path_nodes: 0, term: max_term_bytes.max(1), sizes: BTreeMap::new() };
    w.pattern(pattern, 0)?;
    Ok(())
}

struct Walker {
    nodes: usize,
    path_nodes: usize,
    term: u64,
    /// Size bounds of variables bound by `BIND` / aggregates.
    sizes: BTreeMap<String, u64>,
}

impl Walker {
    fn enter(&mut self, depth: usize) -> Result<(), Refusal> {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return refuse(format!("the query has more than {MAX_NODES} parts"));
        }
        if depth > MAX_DEPTH {
            return refuse(format!("the query nests more than {MAX_DEPTH} levels deep"));
        }
        Ok(())
    }

    fn pattern(&mut self, p: &GraphPattern, d: usize) -> Result<(), Refusal> {
        self.enter(d)?;
        match p {
            GraphPattern::Bgp { patterns } => check_bgp(patterns),
            GraphPattern::Path { path, .. } => self.path(path, d + 1),
            GraphPattern::Join { left, right } | GraphPattern::LeftJoin { left, right, expression: None } => {
                self.pattern(left, d + 1)?;
                self.pattern(right, d + 1)?;
                check_join(left, right)
            }
            GraphPattern::LeftJoin { left, right, expression: Some(e) } => {
                self.pattern(left, d + 1)?;
                self.pattern(right, d + 1)?;
                check_join(left, right)?;
                self.expr(e, d + 1).map(|_| ())
            }
            GraphPattern::Union { left, right } | GraphPattern::Minus { left, right } => {
                self.pattern(left, d + 1)?;
                self.pattern(right, d + 1)
            }
            GraphPattern::Filter { expr, inner } => {
                self.pattern(inner, d + 1)?;
                self.expr(expr, d + 1).map(|_| ())
            }
            GraphPattern::Graph { inner, .. }
            | GraphPattern::Project { inner, .. }
            | GraphPattern::Distinct { inner }
            | GraphPattern::Reduced { inner }
            | GraphPattern::Slice { inner, .. } => self.pattern(inner, d + 1),
            GraphPattern::Extend { inner, variable, expression } => {
                self.pattern(inner, d + 1)?;
                let size = self.expr(expression, d + 1)?;
                self.sizes.insert(variable.as_str().to_string(), size);
                Ok(())
            }
            GraphPattern::Values { bindings, .. } => {
                self.nodes += bindings.len();
                if self.nodes > MAX_NODES {
                    return refuse(format!("the query has more than {MAX_NODES} parts"));
                }
                Ok(())
            }
            GraphPattern::OrderBy { inner, expression } => {
                self.pattern(inner, d + 1)?;
                for o in expression {
                    let (OrderExpression::Asc(e) | OrderExpression::Desc(e)) = o;
                    self.expr(e, d + 1)?;
                }
                Ok(())
            }
            GraphPattern::Group { inner, aggregates, .. } => {
                self.pattern(inner, d + 1)?;
                for (v, a) in aggregates {
                    let size = match a {
                        AggregateExpression::CountSolutions { .. } => 32,
                        AggregateExpression::FunctionCall { expr, name, .. } => {
                            let s = self.expr(expr, d + 1)?;
                            match name {
                                // GROUP_CONCAT joins one value per solution: its size depends on the
                                // solutions, so it may not feed a string function.
                                spargebra::algebra::AggregateFunction::GroupConcat { .. } => MAX_VALUE_BYTES,
                                _ => s,
                            }
                        }
                    };
                    self.sizes.insert(v.as_str().to_string(), size);
                }
                Ok(())
            }
            GraphPattern::Service { .. } => refuse("SERVICE (federated queries) is not supported"),
            #[allow(unreachable_patterns)]
            _ => refuse("this kind of graph pattern is not supported"),
        }
    }

    fn path(&mut self, p: &PropertyPathExpression, d: usize) -> Result<(), Refusal> {
        self.enter(d)?;
        self.path_nodes += 1;
        if self.path_nodes > MAX_PATH_NODES {
            return refuse(format!("the query's property paths have more than {MAX_PATH_NODES} elements (the causal closure is materialised as kw:hasUpstreamCause)"));
        }
        match p {
            PropertyPathExpression::NamedNode(_) | PropertyPathExpression::NegatedPropertySet(_) => Ok(()),
            PropertyPathExpression::Reverse(a) | PropertyPathExpression::ZeroOrMore(a) | PropertyPathExpression::OneOrMore(a) | PropertyPathExpression::ZeroOrOne(a) => self.path(a, d + 1),
            PropertyPathExpression::Sequence(a, b) | PropertyPathExpression::Alternative(a, b) => {
                self.path(a, d + 1)?;
                self.path(b, d + 1)
            }
        }
    }

    /// Walks an expression and returns an upper bound of the size of its value, in bytes.
    fn expr(&mut self, e: &Expression, d: usize) -> Result<u64, Refusal> {
        self.enter(d)?;
        let size = match e {
            Expression::NamedNode(n) => n.as_str().len() as u64,
            Expression::Literal(l) => l.value().len() as u64 + 64,
            Expression::Variable(v) => self.sizes.get(v.as_str()).copied().unwrap_or(self.term),
            Expression::Bound(_) => 8,
            Expression::Exists(p) => {
                self.pattern(p, d + 1)?;
                8
            }
            Expression::Or(a, b)
            | Expression::And(a, b)
            | Expression::Equal(a, b)
            | Expression::SameTerm(a, b)
            | Expression::Greater(a, b)
            | Expression::GreaterOrEqual(a, b)
            | Expression::Less(a, b)
            | Expression::LessOrEqual(a, b)
            | Expression::Add(a, b)
            | Expression::Subtract(a, b)
            | Expression::Multiply(a, b)
            | Expression::Divide(a, b) => {
                self.expr(a, d + 1)?;
                self.expr(b, d + 1)?;
                64
            }
            Expression::UnaryPlus(a) | Expression::UnaryMinus(a) | Expression::Not(a) => {
                self.expr(a, d + 1)?;
                64
            }
            Expression::In(a, list) => {
                self.expr(a, d + 1)?;
                for x in list {
                    self.expr(x, d + 1)?;
                }
                8
            }
            Expression::If(c, a, b) => {
                self.expr(c, d + 1)?;
                self.expr(a, d + 1)?.max(self.expr(b, d + 1)?)
            }
            Expression::Coalesce(list) => {
                let mut m = 0;
                for x in list {
                    m = m.max(self.expr(x, d + 1)?);
                }
                m
            }
            Expression::FunctionCall(f, args) => {
                let mut sizes = Vec::with_capacity(args.len());
                for x in args {
                    sizes.push(self.expr(x, d + 1)?);
                }
                let first = sizes.first().copied().unwrap_or(0);
                match f {
                    Function::Concat => sizes.iter().fold(0u64, |a, s| a.saturating_add(*s)),
                    Function::Replace => replace_bound(args, first)?,
                    Function::UCase | Function::LCase | Function::EncodeForUri => first.saturating_mul(3),
                    Function::Str
                    | Function::Iri
                    | Function::SubStr
                    | Function::StrBefore
                    | Function::StrAfter
                    | Function::StrLang
                    | Function::StrDt
                    | Function::Lang
                    | Function::Datatype => first.saturating_add(sizes.get(1).copied().unwrap_or(0)),
                    Function::Custom(n) => return refuse(format!("the function <{}> is not supported", n.as_str())),
                    _ => 64,
                }
            }
        };
        if size > MAX_VALUE_BYTES {
            return refuse(format!(
                "an expression of the query can build a string of up to {size} bytes; at most {MAX_VALUE_BYTES} bytes are allowed (nested REPLACE, CONCAT or GROUP_CONCAT)"
            ));
        }
        Ok(size)
    }
}

/// `REPLACE(text, pattern, replacement[, flags])`: the pattern and replacement must be constants
/// and the pattern must not match the empty string; each match (at least one character) becomes
/// at most the replacement plus copies of the match.
fn replace_bound(args: &[Expression], text: u64) -> Result<u64, Refusal> {
    let constant = |i: usize| match args.get(i) {
        Some(Expression::Literal(l)) => Some(l.value().to_string()),
        None => Some(String::new()),
        _ => None,
    };
    let (Some(pattern), Some(replacement), Some(flags)) = (constant(1), constant(2), constant(3)) else {
        return refuse("REPLACE needs a constant pattern, replacement and flags");
    };
    let re = regex::RegexBuilder::new(&pattern)
        .case_insensitive(flags.contains('i'))
        .size_limit(1 << 20)
        .build()
        .map_err(|e| Refusal(format!("REPLACE pattern `{pattern}` is not accepted: {e}")))?;
    if re.is_match("") {
        return refuse(format!("REPLACE pattern `{pattern}` matches the empty string"));
    }
    let refs = replacement.matches('$').count() as u64;
    Ok(text.saturating_mul(replacement.len() as u64 + refs.saturating_mul(1) + 1).saturating_add(text.saturating_mul(refs)))
}

/// The variable (or blank node, which joins like one: a path `p1/p2` becomes two patterns
/// joined by a blank node) of a term.
fn term_var(t: &TermPattern) -> Option<&str> {
    match t {
        TermPattern::Variable(v) => Some(v.as_str()),
        TermPattern::BlankNode(b) => Some(b.as_str()),
        _ => None,
    }
}

fn triple_vars(t: &TriplePattern) -> Vec<&str> {
    let mut v: Vec<&str> = Vec::new();
    v.extend(term_var(&t.subject));
    if let NamedNodePattern::Variable(p) = &t.predicate {
        v.push(p.as_str());
    }
    v.extend(term_var(&t.object));
    v
}

/// A basic graph pattern whose patterns fall into two or more groups that share no variable is a
/// cartesian product.
fn check_bgp(patterns: &[TriplePattern]) -> Result<(), Refusal> {
    if patterns.len() > MAX_BGP_PATTERNS {
        return refuse(format!(
            "the query has {} triple patterns in one group; at most {MAX_BGP_PATTERNS} are accepted (a property path of n steps counts n; the causal closure is materialised as kw:hasUpstreamCause)",
            patterns.len()
        ));
    }
    let sets: Vec<Vec<&str>> = patterns.iter().map(triple_vars).filter(|v| !v.is_empty()).collect();
    if sets.len() < 2 {
        return Ok(());
    }
    // Union-find over the patterns, joined when they share a variable.
    let mut parent: Vec<usize> = (0..sets.len()).collect();
    fn find(p: &mut [usize], mut i: usize) -> usize {
        while p[i] != i {
            p[i] = p[p[i]];
            i = p[i];
        }
        i
    }
    let mut owner: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, vars) in sets.iter().enumerate() {
        for v in vars {
            if let Some(&j) = owner.get(v) {
                let (a, b) = (find(&mut parent, i), find(&mut parent, j));
                parent[a] = b;
            } else {
                owner.insert(*v, i);
            }
        }
    }
    let roots = (0..sets.len()).filter(|&i| find(&mut parent, i) == i).count();
    if roots > 1 {
        return refuse("the query joins patterns that share no variable (a cartesian product): connect them through a variable");
    }
    Ok(())
}

/// Variables a pattern can bind (in scope after it).
fn pattern_vars(p: &GraphPattern, out: &mut Vec<String>) {
    match p {
        GraphPattern::Bgp { patterns } => out.extend(patterns.iter().flat_map(triple_vars).map(str::to_string)),
        GraphPattern::Path { subject, object, .. } => out.extend([term_var(subject), term_var(object)].into_iter().flatten().map(str::to_string)),
        GraphPattern::Join { left, right } | GraphPattern::LeftJoin { left, right, .. } | GraphPattern::Union { left, right } => {
            pattern_vars(left, out);
            pattern_vars(right, out);
        }
        GraphPattern::Minus { left, .. } => pattern_vars(left, out),
        GraphPattern::Extend { inner, variable, .. } => {
            pattern_vars(inner, out);
            out.push(variable.as_str().to_string());
        }
        GraphPattern::Values { variables, .. } => out.extend(variables.iter().map(|v| v.as_str().to_string())),
        GraphPattern::Project { variables, .. } => out.extend(variables.iter().map(|v| v.as_str().to_string())),
        GraphPattern::Group { variables, aggregates, .. } => {
            out.extend(variables.iter().map(|v| v.as_str().to_string()));
            out.extend(aggregates.iter().map(|(v, _)| v.as_str().to_string()));
        }
        GraphPattern::Filter { inner, .. }
        | GraphPattern::Graph { inner, .. }
        | GraphPattern::OrderBy { inner, .. }
        | GraphPattern::Distinct { inner }
        | GraphPattern::Reduced { inner }
        | GraphPattern::Slice { inner, .. }
        | GraphPattern::Service { inner, .. } => pattern_vars(inner, out),
        #[allow(unreachable_patterns)]
        _ => {}
    }
}

/// Whether a pattern is only an inline table (`VALUES`) or constant bindings: joining it is a
/// bounded product.
fn is_small_table(p: &GraphPattern) -> bool {
    match p {
        GraphPattern::Values { .. } => true,
        GraphPattern::Bgp { patterns } => patterns.is_empty(),
        GraphPattern::Extend { inner, .. } => is_small_table(inner),
        _ => false,
    }
}

fn check_join(left: &GraphPattern, right: &GraphPattern) -> Result<(), Refusal> {
    if is_small_table(left) || is_small_table(right) {
        return Ok(());
    }
    let (mut l, mut r) = (Vec::new(), Vec::new());
    pattern_vars(left, &mut l);
    pattern_vars(right, &mut r);
    if l.is_empty() || r.is_empty() || l.iter().any(|v| r.contains(v)) {
        return Ok(());
    }
    refuse("the query joins patterns that share no variable (a cartesian product): connect them through a variable")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(q: &str) -> Result<(), Refusal> {
        check_text(q)?;
        let parsed = spargebra::SparqlParser::new().with_prefix("kw", "http://example.org/kw#").map_err(|e| Refusal(e.to_string()))?.parse_query(q).map_err(|e| Refusal(e.to_string()))?;
        check_query(&parsed, 20_000)
    }

    #[test]
    fn deep_brackets_are_refused_before_parsing() {
        let q = format!("SELECT * WHERE {}?s ?p ?o{}", "{".repeat(1000), "}".repeat(1000));
        let e = check_text(&q).expect_err("refused");
        assert!(e.0.contains("nests brackets"), "{e}");
        let ok = format!("SELECT * WHERE {}?s ?p ?o{}", "{".repeat(20), "}".repeat(20));
        check(&ok).expect("20 levels are fine");
        // Brackets inside strings, IRIs and comments do not count.
        let s = format!("SELECT * WHERE {{ ?s ?p \"{}\" }} # {}\n", "{".repeat(100), "(".repeat(100));
        check(&s).expect("strings and comments are not nesting");
        check("SELECT * WHERE { ?s ?p ?o FILTER(?o < 3 && ?o > <http://x/{y}>) }").expect_err("a bad IRI is a syntax error, not a crash");
        assert!(check_text(&"a".repeat(MAX_QUERY_BYTES + 1)).is_err());
    }

    #[test]
    fn replace_bombs_are_refused() {
        let mut e = "?o".to_string();
        for _ in 0..8 {
            e = format!("REPLACE({e}, \"\", \"xx\")");
        }
        let q = format!("SELECT (STRLEN({e}) AS ?n) WHERE {{ ?s ?p ?o }}");
        assert!(check(&q).expect_err("refused").0.contains("empty string"));
        let mut e = "?o".to_string();
        for _ in 0..8 {
            e = format!("REPLACE({e}, \".\", \"xxxxxxxxxxxxxxxx\")");
        }
        let q = format!("SELECT (STRLEN({e}) AS ?n) WHERE {{ ?s ?p ?o }}");
        assert!(check(&q).expect_err("refused").0.contains("bytes"));
        let mut q = "SELECT ?v0 WHERE { ?s ?p ?v0 ".to_string();
        for i in 1..40 {
            q.push_str(&format!("BIND(CONCAT(?v{}, ?v{}) AS ?v{i}) ", i - 1, i - 1));
        }
        q.push('}');
        assert!(check(&q).is_err(), "doubling through BIND chains is refused");
        check("SELECT (REPLACE(?o, \"a\", \"b\") AS ?r) (CONCAT(?o, \"x\") AS ?c) WHERE { ?s ?p ?o }").expect("ordinary string functions are fine");
    }

    #[test]
    fn products_and_long_paths_are_refused() {
        assert!(check("SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }").is_err());
        assert!(check("SELECT * WHERE { { ?a ?b ?c } { ?d ?e ?f } } ORDER BY ?a").is_err());
        check("SELECT * WHERE { ?a ?b ?c . ?c ?e ?f } ORDER BY ?a").expect("a connected join is fine");
        check("SELECT * WHERE { VALUES ?x { 1 2 } ?a ?b ?c }").expect("VALUES tables are fine");
        let path = vec!["kw:causedBy"; 800].join("/");
        let q = format!("SELECT * WHERE {{ ?a {path} ?b }}");
        assert!(check(&q).expect_err("refused").0.contains("triple patterns"));
        let path = vec!["(kw:causedBy|kw:x)"; 40].join("/");
        let q = format!("SELECT * WHERE {{ ?a {path} ?b }}");
        assert!(check(&q).expect_err("refused").0.contains("property paths"));
        check("SELECT * WHERE { ?a kw:causedBy+ ?b }").expect("a short path is fine");
        check("SELECT * WHERE { ?a kw:causedBy/kw:causedBy ?b }").expect("a sequence path is one connected group");
    }
}
