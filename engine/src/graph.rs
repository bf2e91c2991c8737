//! The RDF graph: every entity and relation in an in-memory oxigraph [`Store`],
//! queried with read-only SPARQL 1.1 (SELECT, ASK, CONSTRUCT, DESCRIBE).
//!
//! This module is the only place that writes triples or runs SPARQL. The
//! transitive closure of `kw:causedBy` is materialised as `kw:hasUpstreamCause`
//! when the graph is built, so runtime queries never need property paths.

use crate::knowledge::KnowledgeBase;
use crate::model::{Entity, Kind, KindData};
use crate::ontology::{self, entity_iri, kw};
use oxigraph::io::{RdfFormat, RdfSerializer};
use oxigraph::model::{GraphNameRef, Literal, NamedNode, NamedNodeRef, Quad, Term};
use oxigraph::sparql::{CancellationToken, QueryResults, SparqlEvaluator};
use oxigraph::store::Store;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

pub mod guard;

/// Errors of graph building and querying.
#[derive(Debug, thiserror::Error)]
pub enum GraphError {
    /// The in-memory store failed (should not happen for an in-memory store).
    #[error("graph store error: {0}")]
    Store(String),
    /// The query is not valid SPARQL 1.1.
    #[error("invalid SPARQL query: {0}")]
    Syntax(String),
    /// The query is an update (INSERT, DELETE, LOAD, CLEAR, ...), which the graph refuses.
    #[error("the graph is read-only: only SELECT, ASK, CONSTRUCT and DESCRIBE queries are accepted")]
    UpdateRefused,
    /// The query ran longer than its time limit and was cancelled.
    #[error("the query ran longer than {0:?} and was cancelled")]
    Timeout(Duration),
    /// The query failed while being evaluated.
    #[error("query evaluation failed: {0}")]
    Evaluation(String),
    /// The query passes a limit of [`guard`] (length, nesting, products, paths, string sizes) and
    /// was refused before evaluation.
    #[error("query refused: {0}")]
    Refused(String),
    /// [`MAX_CONCURRENT_QUERIES`] queries were running (or still finishing after their time
    /// limit) for the whole time limit of this one; try again later.
    #[error("the graph was busy with {0} other queries for the whole time limit; try again in a few seconds")]
    Busy(usize),
}

/// Most SPARQL queries evaluated at once in this process. A query past its time limit is answered
/// with [`GraphError::Timeout`] at once but keeps its slot until its evaluation stops, so a hostile
/// query never takes more than these threads (the rest of the process stays served).
pub const MAX_CONCURRENT_QUERIES: usize = 2;

/// Stack of the thread that parses and evaluates a query (both recurse over the query).
const QUERY_STACK_BYTES: usize = 64 * 1024 * 1024;

/// Queries being evaluated (including ones past their time limit that have not stopped yet).
static RUNNING: Mutex<usize> = Mutex::new(0);
static FREED: Condvar = Condvar::new();

/// Most solutions one query may feed into its sorts (`ORDER BY`) before it is stopped with a
/// refusal: the memory a sort holds is bounded, not only its time.
pub const MAX_SORT_SOLUTIONS: usize = 100_000;

/// Most distinct solutions one query's `DISTINCT` and `REDUCED` may hold (they keep every
/// solution seen) before it is stopped with a refusal.
pub const MAX_DISTINCT_SOLUTIONS: usize = 100_000;

/// Most solutions one query may feed into its groups (`GROUP BY`, or aggregates without it)
/// before it is stopped with a refusal: a group holds its aggregates' state, which for
/// `GROUP_CONCAT` and `SAMPLE` grows with its input.
pub const MAX_GROUP_SOLUTIONS: usize = 1_000_000;

/// The operators that hold solutions in memory, each with the internal filter function that
/// counts them ([`guard_holders`]), its cap and what the refusal says.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Holder {
    /// `ORDER BY`: its input, counted under it.
    Sort,
    /// `DISTINCT` / `REDUCED`: the distinct solutions, counted above it.
    Distinct,
    /// `GROUP BY`: its input, counted under it.
    Group,
}

impl Holder {
    const ALL: [Holder; 3] = [Holder::Sort, Holder::Distinct, Holder::Group];

    fn iri(self) -> NamedNode {
        NamedNode::new_unchecked(match self {
            Holder::Sort => "urn:kubewhy:internal:sort-guard",
            Holder::Distinct => "urn:kubewhy:internal:distinct-guard",
            Holder::Group => "urn:kubewhy:internal:group-guard",
        })
    }

    fn cap(self) -> usize {
        match self {
            Holder::Sort => MAX_SORT_SOLUTIONS,
            Holder::Distinct => MAX_DISTINCT_SOLUTIONS,
            Holder::Group => MAX_GROUP_SOLUTIONS,
        }
    }

    fn refusal(self) -> String {
        match self {
            Holder::Sort => format!(
                "ORDER BY over more than {MAX_SORT_SOLUTIONS} solutions was stopped (a sort holds its whole input in memory): narrow the pattern, or drop ORDER BY"
            ),
            Holder::Distinct => format!(
                "DISTINCT over more than {MAX_DISTINCT_SOLUTIONS} distinct solutions was stopped (it holds every solution it has seen): narrow the pattern, project fewer variables, or drop DISTINCT"
            ),
            Holder::Group => format!(
                "GROUP BY over more than {MAX_GROUP_SOLUTIONS} solutions was stopped (groups hold their aggregates' state in memory): narrow the pattern"
            ),
        }
    }
}

/// A filter calling the counting function of `h` on the in-scope variables of `inner`:
/// COALESCE(?v, 0) of each, so that the filter runs on every solution itself (a filter without
/// variables, or with arguments the optimiser can fold, may be evaluated once, early) and never
/// errors on an unbound variable (which would drop the solution).
fn counted(h: Holder, inner: spargebra::algebra::GraphPattern) -> spargebra::algebra::GraphPattern {
    use spargebra::algebra::{Expression, Function, GraphPattern as G};
    let mut vars = Vec::new();
    inner.on_in_scope_variable(|v| vars.push(Expression::Coalesce(vec![Expression::Variable(v.clone()), Expression::Literal(Literal::from(0))])));
    G::Filter { expr: Expression::FunctionCall(Function::Custom(h.iri()), vars), inner: Box::new(inner) }
}

/// Puts a counting filter under every `ORDER BY` and `GROUP BY` (their input) and over every
/// `DISTINCT` and `REDUCED` (what they hold); see [`Holder`].
fn guard_holders(p: &mut spargebra::algebra::GraphPattern) {
    use spargebra::algebra::GraphPattern as G;
    let empty = || G::Bgp { patterns: Vec::new() };
    match p {
        G::OrderBy { inner, .. } | G::Group { inner, .. } => {
            guard_holders(inner);
            let h = if matches!(p, G::OrderBy { .. }) { Holder::Sort } else { Holder::Group };
            let (G::OrderBy { inner, .. } | G::Group { inner, .. }) = p else { return };
            let taken = std::mem::replace(inner.as_mut(), empty());
            **inner = counted(h, taken);
        }
        G::Distinct { inner } | G::Reduced { inner } => {
            guard_holders(inner);
            let taken = std::mem::replace(p, empty());
            *p = counted(Holder::Distinct, taken);
        }
        G::Join { left, right } | G::LeftJoin { left, right, .. } | G::Union { left, right } | G::Minus { left, right } => {
            guard_holders(left);
            guard_holders(right);
        }
        G::Filter { inner, .. } | G::Graph { inner, .. } | G::Extend { inner, .. } | G::Project { inner, .. } | G::Slice { inner, .. } | G::Service { inner, .. } => {
            guard_holders(inner)
        }
        _ => {}
    }
}

/// One of the [`MAX_CONCURRENT_QUERIES`] evaluation slots; released when dropped.
struct Slot;

impl Slot {
    /// Waits for a free slot until `deadline`.
    fn take(deadline: Instant) -> Result<Slot, GraphError> {
        let mut running = RUNNING.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if *running < MAX_CONCURRENT_QUERIES {
                *running += 1;
                return Ok(Slot);
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(GraphError::Busy(*running));
            }
            running = FREED.wait_timeout(running, deadline - now).unwrap_or_else(|p| p.into_inner()).0;
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut running = RUNNING.lock().unwrap_or_else(|p| p.into_inner());
        *running = running.saturating_sub(1);
        FREED.notify_one();
    }
}

/// Limits applied to one SPARQL query.
#[derive(Debug, Clone, Copy)]
pub struct QueryLimits {
    /// Wall-clock limit; the query is cancelled after it.
    pub timeout: Duration,
    /// At most this many solutions (or triples) are returned; `truncated` says when more existed.
    pub max_rows: usize,
}

impl Default for QueryLimits {
    fn default() -> Self {
        QueryLimits { timeout: Duration::from_secs(10), max_rows: 10_000 }
    }
}

/// The result of a read-only SPARQL query. Cells are `T`: a `String` from [`Graph::query`], an
/// [`RdfTerm`] from [`Graph::query_terms`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum QueryOutput<T = String> {
    /// SELECT: variable names and rows of values (`None` when unbound). As strings, IRIs are
    /// written `<iri>`, blank nodes `_:id` and literals as their lexical form.
    Solutions {
        /// Variable names, in projection order.
        variables: Vec<String>,
        /// Rows, each with one cell per variable.
        rows: Vec<Vec<Option<T>>>,
        /// Whether rows were cut at the row limit.
        truncated: bool,
    },
    /// ASK.
    Boolean {
        /// The answer.
        value: bool,
    },
    /// CONSTRUCT or DESCRIBE: the triples as N-Triples.
    Graph {
        /// N-Triples text.
        ntriples: String,
        /// Number of triples.
        triples: usize,
        /// Whether triples were cut at the row limit.
        truncated: bool,
    },
}

/// One RDF term of a SELECT solution, typed as the SPARQL 1.1 result formats need it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum RdfTerm {
    /// An IRI (without angle brackets).
    Iri {
        /// The IRI.
        value: String,
    },
    /// A blank node (its label, without `_:`).
    Blank {
        /// The label.
        value: String,
    },
    /// A literal.
    Literal {
        /// Lexical form.
        value: String,
        /// Datatype IRI; `None` for `xsd:string` and for language-tagged strings.
        datatype: Option<String>,
        /// Language tag, when there is one.
        language: Option<String>,
    },
}

/// A typed relation between two entities, as seen from one of them.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Relation {
    /// The ontology property's local name (`causedBy`).
    pub property: String,
    /// The other entity's id.
    pub id: String,
}

/// The RDF graph of the knowledge.
pub struct Graph {
    store: Store,
    triples: usize,
    /// Length of the longest literal or IRI in the graph, in bytes (for [`guard::check_query`]).
    max_term: u64,
}

impl std::fmt::Debug for Graph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Graph").field("triples", &self.triples).finish()
    }
}

struct Builder {
    quads: Vec<Quad>,
}

impl Builder {
    fn node(iri: &str) -> NamedNode {
        NamedNode::new_unchecked(iri)
    }
    fn lit(&mut self, s: &str, p: &str, v: &str) {
        self.quads.push(Quad::new(Self::node(&entity_iri(s)), Self::node(&kw(p)), Literal::new_simple_literal(v), GraphNameRef::DefaultGraph));
    }
    fn typed(&mut self, s: &str, p: &str, v: Literal) {
        self.quads.push(Quad::new(Self::node(&entity_iri(s)), Self::node(&kw(p)), v, GraphNameRef::DefaultGraph));
    }
    fn rel(&mut self, s: &str, p: &str, o: &str) {
        self.quads.push(Quad::new(Self::node(&entity_iri(s)), Self::node(&kw(p)), Self::node(&entity_iri(o)), GraphNameRef::DefaultGraph));
    }
    fn rels(&mut self, s: &str, p: &str, os: &[String]) {
        for o in os {
            self.rel(s, p, o);
        }
    }
    fn raw(&mut self, s: &str, p: &str, o: Term) {
        self.quads.push(Quad::new(Self::node(&entity_iri(s)), Self::node(p), o, GraphNameRef::DefaultGraph));
    }

    fn entity(&mut self, e: &Entity) {
        let id = e.id.as_str();
        self.raw(id, ontology::RDF_TYPE, Self::node(&kw(e.kind.class_name())).into());
        self.raw(id, ontology::RDFS_LABEL, Literal::new_simple_literal(&e.title).into());
        let summary = e.summary(300);
        if !summary.is_empty() {
            self.raw(id, ontology::RDFS_COMMENT, Literal::new_simple_literal(summary).into());
        }
        if !e.body.is_empty() {
            self.lit(id, "body", &e.body);
        }
        for a in &e.aliases {
            self.lit(id, "alias", a);
        }
        for r in &e.references {
            self.lit(id, "reference", r);
        }
        if let Some(v) = e.applies.since {
            self.lit(id, "since", &v.to_string());
        }
        if let Some(v) = e.applies.until {
            self.lit(id, "until", &v.to_string());
        }
        for k in &e.keps {
            self.rel(id, "describedIn", &format!("kep/{k}"));
        }
        for g in &e.feature_gates {
            self.rel(id, "gatedBy", &format!("feature-gate/{g}"));
        }
        for r in &e.related {
            self.raw(id, ontology::RDFS_SEE_ALSO, Self::node(&entity_iri(r)).into());
        }
        self.lit(id, "definedIn", &e.location.to_string());
        match &e.data {
            KindData::Component { part_of, talks_to } => {
                if let Some(p) = part_of {
                    self.rel(id, "partOf", p);
                }
                self.rels(id, "talksTo", talks_to);
            }
            KindData::Loop { part_of, reads, writes, emits } => {
                self.rel(id, "partOf", part_of);
                self.rels(id, "reads", reads);
                self.rels(id, "writes", writes);
                self.rels(id, "emits", emits);
            }
            KindData::Field { object, path, written_by } => {
                self.lit(id, "objectKind", object);
                self.lit(id, "fieldPath", path);
                for w in written_by {
                    self.rel(w, "writes", id);
                }
            }
            KindData::Metric { name, component, metric_type, stability, labels, bad_value } => {
                self.lit(id, "metricName", name);
                self.rel(id, "exposedBy", component);
                self.lit(id, "metricType", metric_type);
                if let Some(s) = stability {
                    self.lit(id, "stability", s);
                }
                for l in labels {
                    self.lit(id, "label", l);
                }
                if let Some(b) = bad_value {
                    self.lit(id, "badValue", b);
                }
            }
            KindData::FailureMode(fm) => {
                self.lit(id, "area", &fm.area);
                self.rels(id, "involves", &fm.components);
                self.rels(id, "inLoop", &fm.loops);
                self.rels(id, "concernsField", &fm.fields);
                self.rels(id, "observableVia", &fm.metrics);
                self.rels(id, "manifestsAs", &fm.symptoms);
                self.rels(id, "diagnosedBy", &fm.checks);
                self.rels(id, "fixedBy", &fm.fixes);
                self.rels(id, "causedBy", &fm.caused_by);
                self.rels(id, "leadsTo", &fm.leads_to);
                // Each direction implies the other.
                for c in &fm.caused_by {
                    self.rel(c, "leadsTo", id);
                }
                for d in &fm.leads_to {
                    self.rel(d, "causedBy", id);
                }
                self.lit(id, "level", fm.level.as_str());
                for c in &fm.context {
                    self.lit(id, "contextCue", &c.describe());
                }
                for r in &fm.ruled_out_by {
                    self.lit(id, "ruledOutBy", r);
                }
            }
            KindData::Symptom(s) => {
                self.lit(id, "signalKind", s.signal.as_str());
                if let Some(t) = &s.text {
                    self.lit(id, "template", t);
                }
                if let Some(r) = &s.reason {
                    self.lit(id, "reason", r);
                }
                if let Some(c) = s.code {
                    self.typed(id, "code", Literal::from(c));
                }
                if let Some(src) = &s.source {
                    self.lit(id, "emittedBy", src);
                }
                self.typed(id, "weight", Literal::from(s.weight));
            }
            KindData::Check { command, look_for, probe, rules_out } => {
                if let Some(c) = command {
                    self.lit(id, "command", c);
                }
                self.lit(id, "lookFor", look_for);
                if let Some(p) = probe {
                    self.lit(id, "probe", p);
                }
                if let Some(r) = rules_out {
                    self.lit(id, "rulesOut", r);
                }
            }
            KindData::Fix { action, command, risk } => {
                self.lit(id, "action", action);
                if let Some(c) = command {
                    self.lit(id, "command", c);
                }
                self.lit(id, "risk", risk);
            }
            KindData::Concept => {}
            KindData::FeatureGate(g) => {
                self.typed(id, "inFeatureList", Literal::from(g.in_feature_list));
                if let Some(last) = g.step.last() {
                    self.lit(id, "stage", &last.stage);
                    if let Some(d) = last.default {
                        self.typed(id, "defaultValue", Literal::from(d));
                    }
                    if let Some(l) = last.locked {
                        self.typed(id, "lockedToDefault", Literal::from(l));
                    }
                }
                for (stage, prop) in [("Alpha", "alphaIn"), ("Beta", "betaIn"), ("GA", "stableIn"), ("Deprecated", "deprecatedIn")] {
                    if let Some(v) = g.first_at_stage(stage) {
                        self.lit(id, prop, v);
                    }
                }
            }
            KindData::Kep(k) => {
                self.typed(id, "kepNumber", Literal::from(i64::from(k.number)));
                self.lit(id, "owningSig", &k.sig);
                self.lit(id, "kepStatus", &k.status);
                for (v, prop) in [(&k.alpha, "alphaIn"), (&k.beta, "betaIn"), (&k.stable, "stableIn"), (&k.deprecated, "deprecatedIn")] {
                    if !v.is_empty() {
                        self.lit(id, prop, v);
                    }
                }
            }
            KindData::Release(r) => {
                self.lit(id, "releaseDate", &r.date);
                if !r.eol.is_empty() {
                    self.lit(id, "endOfLife", &r.eol);
                }
            }
            KindData::Myth { correction, concerns } => {
                self.lit(id, "correction", correction);
                self.rels(id, "concerns", concerns);
            }
        }
    }
}

/// Upstream causes of every failure mode: `causedBy` plus inverse `leadsTo`, by id.
pub fn direct_causes(kb: &KnowledgeBase) -> BTreeMap<String, BTreeSet<String>> {
    let mut causes: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for e in kb.entities() {
        if let Some(fm) = e.failure_mode() {
            for c in &fm.caused_by {
                causes.entry(e.id.clone()).or_default().insert(c.clone());
            }
            for d in &fm.leads_to {
                causes.entry(d.clone()).or_default().insert(e.id.clone());
            }
        }
    }
    causes
}

impl Graph {
    /// Builds the graph of `kb`, with the causal closure materialised.
    ///
    /// # Errors
    /// [`GraphError::Store`] if the in-memory store refuses the data.
    pub fn build(kb: &KnowledgeBase) -> Result<Graph, GraphError> {
        let mut b = Builder { quads: Vec::new() };
        for e in kb.entities() {
            b.entity(e);
        }
        let causes = direct_causes(kb);
        for fm in causes.keys() {
            let mut seen = BTreeSet::new();
            let mut stack: Vec<String> = causes[fm].iter().cloned().collect();
            while let Some(c) = stack.pop() {
                if c != *fm && seen.insert(c.clone()) {
                    stack.extend(causes.get(&c).into_iter().flatten().cloned());
                }
            }
            for c in seen {
                b.rel(fm, "hasUpstreamCause", &c);
            }
        }
        let store = Store::new().map_err(|e| GraphError::Store(e.to_string()))?;
        let triples = b.quads.len();
        let max_term = b.quads.iter().map(|q| term_len(&q.object).max(q.subject.to_string().len())).max().unwrap_or(0) as u64;
        store.extend(b.quads).map_err(|e| GraphError::Store(e.to_string()))?;
        let triples = store.len().map_err(|e| GraphError::Store(e.to_string()))?.min(triples);
        Ok(Graph { store, triples, max_term })
    }

    /// An empty graph (the fallback when building fails).
    pub fn empty() -> Graph {
        Graph { store: Store::new().unwrap_or_else(|_| unreachable_store()), triples: 0, max_term: 0 }
    }

    /// Number of triples in the graph.
    pub fn len(&self) -> usize {
        self.triples
    }

    /// Whether the graph has no triple.
    pub fn is_empty(&self) -> bool {
        self.triples == 0
    }

    /// Runs a read-only SPARQL query. The prefixes `kw:`, `id:`, `rdf:`, `rdfs:` and one per kind
    /// (`component:`, `failure-mode:`, ... so `failure-mode:etcd-nospace-alarm` is an entity) are predeclared.
    ///
    /// # Errors
    /// [`GraphError::UpdateRefused`] for SPARQL Update; [`GraphError::Syntax`] for invalid SPARQL;
    /// [`GraphError::Timeout`] past `limits.timeout`; [`GraphError::Evaluation`] otherwise.
    pub fn query(&self, sparql: &str, limits: QueryLimits) -> Result<QueryOutput, GraphError> {
        self.run(sparql, limits, term_text)
    }

    /// Like [`Graph::query`], with each SELECT cell as a typed [`RdfTerm`] (for the SPARQL 1.1
    /// JSON and CSV result formats).
    ///
    /// # Errors
    /// See [`Graph::query`].
    pub fn query_terms(&self, sparql: &str, limits: QueryLimits) -> Result<QueryOutput<RdfTerm>, GraphError> {
        self.run(sparql, limits, rdf_term)
    }

    fn run<T: Send + 'static>(&self, sparql: &str, limits: QueryLimits, cell: fn(&Term) -> T) -> Result<QueryOutput<T>, GraphError> {
        guard::check_text(sparql).map_err(|r| GraphError::Refused(r.0))?;
        let started = Instant::now();
        let deadline = started + limits.timeout;
        let slot = Slot::take(deadline)?;
        let token = CancellationToken::new();
        let (tx, rx) = std::sync::mpsc::channel();
        let (store, max_term, text, worker_token) = (self.store.clone(), self.max_term, sparql.to_string(), token.clone());
        // Parse and evaluate on a thread of our own: a big stack for the recursive parser and
        // evaluator, and an answer at the time limit even when the evaluation does not look at
        // its cancellation token (a sort, a product held in memory).
        std::thread::Builder::new()
            .name("kubewhy-sparql".into())
            .stack_size(QUERY_STACK_BYTES)
            .spawn(move || {
                let _slot = slot;
                let result = Self::evaluate(&store, max_term, &text, &worker_token, limits, cell);
                let _ = tx.send(result);
            })
            .map_err(|e| GraphError::Evaluation(format!("cannot start the query thread: {e}")))?;
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(result) => match result {
                // A refusal (the sort cap cancels the evaluation itself) stays a refusal.
                Err(GraphError::Refused(m)) => Err(GraphError::Refused(m)),
                // A cut evaluation (an OFFSET skips the cancellation error) is a time-out, never an
                // empty answer.
                _ if token.is_cancelled() => Err(GraphError::Timeout(limits.timeout)),
                Err(GraphError::Evaluation(_)) if started.elapsed() >= limits.timeout => Err(GraphError::Timeout(limits.timeout)),
                other => other,
            },
            Err(_) => {
                token.cancel();
                Err(GraphError::Timeout(limits.timeout))
            }
        }
    }

    fn evaluate<T>(store: &Store, max_term: u64, sparql: &str, token: &CancellationToken, limits: QueryLimits, cell: fn(&Term) -> T) -> Result<QueryOutput<T>, GraphError> {
        let mut parser = spargebra::SparqlParser::new();
        for (prefix, iri) in prefixes() {
            parser = parser.with_prefix(prefix, iri).map_err(|e| GraphError::Syntax(e.to_string()))?;
        }
        let query = match parser.parse_query(sparql) {
            Ok(q) => q,
            Err(e) => {
                let mut up = spargebra::SparqlParser::new();
                for (prefix, iri) in prefixes() {
                    up = up.with_prefix(prefix, iri).map_err(|e| GraphError::Syntax(e.to_string()))?;
                }
                if up.parse_update(sparql).is_ok() {
                    return Err(GraphError::UpdateRefused);
                }
                return Err(GraphError::Syntax(e.to_string()));
            }
        };
        guard::check_query(&query, max_term).map_err(|r| GraphError::Refused(r.0))?;
        // Sorts, groups and DISTINCT hold solutions in memory: count them and cancel the query
        // past each one's cap (a memory bound the time limit alone is not).
        let mut query = query;
        match &mut query {
            spargebra::Query::Select { pattern, .. } | spargebra::Query::Construct { pattern, .. } | spargebra::Query::Describe { pattern, .. } | spargebra::Query::Ask { pattern, .. } => {
                guard_holders(pattern);
            }
        }
        let counters: Vec<(Holder, std::sync::Arc<std::sync::atomic::AtomicUsize>)> =
            Holder::ALL.iter().map(|&h| (h, std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0)))).collect();
        let mut evaluator = SparqlEvaluator::new().with_cancellation_token(token.clone());
        for (h, counter) in &counters {
            let (h, count, cancel) = (*h, counter.clone(), token.clone());
            evaluator = evaluator.with_custom_function(h.iri(), move |_| {
                let n = count.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                if n > h.cap() {
                    cancel.cancel();
                }
                Some(Literal::from(n <= h.cap()).into())
            });
        }
        let result = Self::collect(evaluator.for_query(query).on_store(store).execute(), limits, cell);
        if let Some((h, _)) = counters.iter().find(|(h, c)| c.load(std::sync::atomic::Ordering::Relaxed) > h.cap()) {
            return Err(GraphError::Refused(h.refusal()));
        }
        result
    }

    fn collect<T>(
        results: Result<QueryResults<'_>, oxigraph::sparql::QueryEvaluationError>,
        limits: QueryLimits,
        cell: fn(&Term) -> T,
    ) -> Result<QueryOutput<T>, GraphError> {
        let eval = |e: &dyn std::fmt::Display| GraphError::Evaluation(e.to_string());
        match results.map_err(|e| eval(&e))? {
            QueryResults::Boolean(value) => Ok(QueryOutput::Boolean { value }),
            QueryResults::Solutions(solutions) => {
                let variables: Vec<String> = solutions.variables().iter().map(|v| v.as_str().to_string()).collect();
                let mut rows = Vec::new();
                let mut truncated = false;
                for s in solutions {
                    let s = s.map_err(|e| eval(&e))?;
                    if rows.len() >= limits.max_rows {
                        truncated = true;
                        break;
                    }
                    rows.push(variables.iter().map(|v| s.get(v.as_str()).map(cell)).collect());
                }
                Ok(QueryOutput::Solutions { variables, rows, truncated })
            }
            QueryResults::Graph(triples) => {
                let mut ser = RdfSerializer::from_format(RdfFormat::NTriples).for_writer(Vec::new());
                let mut n = 0;
                let mut truncated = false;
                for t in triples {
                    let t = t.map_err(|e| eval(&e))?;
                    if n >= limits.max_rows {
                        truncated = true;
                        break;
                    }
                    ser.serialize_triple(&t).map_err(|e| eval(&e))?;
                    n += 1;
                }
                let bytes = ser.finish().map_err(|e| eval(&e))?;
                Ok(QueryOutput::Graph { ntriples: String::from_utf8_lossy(&bytes).into_owned(), triples: n, truncated })
            }
        }
    }

    /// Relations of an entity: `(outgoing, incoming)`, each sorted, entity-to-entity only.
    pub fn relations(&self, id: &str) -> (Vec<Relation>, Vec<Relation>) {
        let iri = entity_iri(id);
        let node = NamedNodeRef::new_unchecked(&iri);
        let local = |p: &NamedNode| -> String {
            let s = p.as_str();
            s.strip_prefix(ontology::KW)
                .map(str::to_string)
                .or_else(|| s.rsplit_once('#').map(|(_, l)| l.to_string()))
                .unwrap_or_else(|| s.to_string())
        };
        let mut out = BTreeSet::new();
        for q in self.store.quads_for_pattern(Some(node.into()), None, None, Some(GraphNameRef::DefaultGraph)).flatten() {
            if let Term::NamedNode(o) = &q.object {
                if let Some(oid) = ontology::id_of_iri(o.as_str()) {
                    out.insert(Relation { property: local(&q.predicate), id: oid.to_string() });
                }
            }
        }
        let mut inc = BTreeSet::new();
        for q in self.store.quads_for_pattern(None, None, Some(node.into()), Some(GraphNameRef::DefaultGraph)).flatten() {
            if let oxigraph::model::NamedOrBlankNode::NamedNode(s) = &q.subject {
                if let Some(sid) = ontology::id_of_iri(s.as_str()) {
                    inc.insert(Relation { property: local(&q.predicate), id: sid.to_string() });
                }
            }
        }
        (out.into_iter().collect(), inc.into_iter().collect())
    }

    /// Upstream causes of a failure mode (the materialised closure), sorted.
    pub fn upstream_causes(&self, id: &str) -> Vec<String> {
        let (out, _) = self.relations(id);
        out.into_iter().filter(|r| r.property == "hasUpstreamCause").map(|r| r.id).collect()
    }

    /// The whole graph serialised in `format` ("turtle", "ntriples" or "jsonld" is not supported: see errors).
    ///
    /// # Errors
    /// [`GraphError::Evaluation`] for an unknown format name or a serialisation failure.
    pub fn export(&self, format: &str) -> Result<String, GraphError> {
        let fmt = match format {
            "turtle" | "ttl" => RdfFormat::Turtle,
            "ntriples" | "nt" => RdfFormat::NTriples,
            "nquads" | "nq" => RdfFormat::NQuads,
            "rdfxml" | "xml" => RdfFormat::RdfXml,
            other => return Err(GraphError::Evaluation(format!("unknown export format `{other}` (turtle, ntriples, nquads, rdfxml)"))),
        };
        let mut ser = RdfSerializer::from_format(fmt);
        if fmt == RdfFormat::Turtle {
            ser = ser.with_prefix("kw", ontology::KW).map_err(|e| GraphError::Evaluation(e.to_string()))?;
            ser = ser.with_prefix("id", ontology::ID_BASE).map_err(|e| GraphError::Evaluation(e.to_string()))?;
        }
        let mut w = ser.for_writer(Vec::new());
        for q in self.store.iter().flatten() {
            w.serialize_triple(q.as_ref()).map_err(|e| GraphError::Evaluation(e.to_string()))?;
        }
        let bytes = w.finish().map_err(|e| GraphError::Evaluation(e.to_string()))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}

/// The prefixes every query may use: `kw:`, `id:`, `rdf:`, `rdfs:` and one per kind (so that
/// `failure-mode:etcd-nospace-alarm` names an entity; a `/` is not allowed in a local name).
fn prefixes() -> Vec<(String, String)> {
    let mut p = vec![
        ("kw".to_string(), ontology::KW.to_string()),
        ("id".to_string(), ontology::ID_BASE.to_string()),
        ("rdf".to_string(), "http://www.w3.org/1999/02/22-rdf-syntax-ns#".to_string()),
        ("rdfs".to_string(), "http://www.w3.org/2000/01/rdf-schema#".to_string()),
    ];
    p.extend(Kind::ALL.iter().map(|k| (k.prefix().to_string(), format!("{}{}/", ontology::ID_BASE, k.prefix()))));
    p
}

fn term_len(t: &Term) -> usize {
    match t {
        Term::Literal(l) => l.value().len(),
        other => other.to_string().len(),
    }
}

fn term_text(t: &Term) -> String {
    match t {
        Term::NamedNode(n) => format!("<{}>", n.as_str()),
        Term::BlankNode(b) => format!("_:{}", b.as_str()),
        Term::Literal(l) => l.value().to_string(),
        #[allow(unreachable_patterns)]
        other => other.to_string(),
    }
}

fn rdf_term(t: &Term) -> RdfTerm {
    match t {
        Term::NamedNode(n) => RdfTerm::Iri { value: n.as_str().to_string() },
        Term::BlankNode(b) => RdfTerm::Blank { value: b.as_str().to_string() },
        Term::Literal(l) => {
            let language = l.language().map(str::to_string);
            let dt = l.datatype().as_str();
            let datatype = (language.is_none() && dt != "http://www.w3.org/2001/XMLSchema#string").then(|| dt.to_string());
            RdfTerm::Literal { value: l.value().to_string(), datatype, language }
        }
        #[allow(unreachable_patterns)]
        other => RdfTerm::Literal { value: other.to_string(), datatype: None, language: None },
    }
}

/// `Store::new` for the in-memory backend has no failure path; this is never reached.
fn unreachable_store() -> Store {
    panic!("in-memory oxigraph store could not be created")
}
