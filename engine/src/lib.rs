//! kubewhy's engine: the knowledge model, its loader and validation, the RDF
//! graph (oxigraph), the full-text index (tantivy) and the diagnosis that maps a
//! symptom to the mechanism behind it.
//!
//! The engine never prints, never installs a logger and knows nothing about
//! terminals, MCP or HTTP. [`Engine`] is `Send + Sync`; share it with an `Arc`.
//!
//! ```
//! use kubewhy_engine::{Engine, knowledge::SourceFile, diagnose::DiagnoseOptions};
//! let files = vec![
//!     SourceFile { path: "components/etcd.md".into(), text: "+++\nid = \"component/etcd\"\ntitle = \"etcd\"\n+++\nThe key-value store.\n".into() },
//!     SourceFile { path: "loops/etcd-backend-quota.md".into(), text: "+++\nid = \"loop/etcd-backend-quota\"\ntitle = \"backend quota\"\npart_of = \"component/etcd\"\n+++\n".into() },
//!     SourceFile { path: "failure-modes/etcd/etcd-nospace-alarm.md".into(), text: r#"+++
//! id = "failure-mode/etcd-nospace-alarm"
//! title = "etcd NOSPACE alarm: writes refused"
//! area = "etcd"
//! components = ["component/etcd"]
//! loops = ["loop/etcd-backend-quota"]
//! references = ["etcd-io/etcd:api/v3rpc/rpctypes/error.go"]
//! [[symptom]]
//! signal = "message"
//! text = "etcdserver: mvcc: database space exceeded"
//! source = "etcd-io/etcd:api/v3rpc/rpctypes/error.go"
//! [[check]]
//! command = "etcdctl alarm list"
//! look_for = "alarm:NOSPACE"
//! [[fix]]
//! action = "compact, defragment, then disarm the alarm"
//! risk = "medium"
//! +++
//! The backend database reached its quota.
//! "#.into() },
//! ];
//! let (engine, problems) = Engine::from_sources(files).unwrap();
//! assert!(problems.is_empty());
//! let d = engine.diagnose("etcdserver: mvcc: database space exceeded", DiagnoseOptions::default()).unwrap();
//! assert_eq!(d.candidates[0].id, "failure-mode/etcd-nospace-alarm");
//! ```

pub mod accuracy;
pub mod bounded;
pub mod claims;
pub mod compiled;
pub mod context;
pub mod diagnose;
pub mod graph;
pub mod knowledge;
pub mod lookup;
pub mod model;
pub mod ontology;
pub mod patterns;
pub mod scorers;
pub mod search;
pub mod signals;
pub mod synthetic;
pub mod tables;
pub mod upstream;

use diagnose::{DiagnoseError, DiagnoseOptions, Diagnosis, Matcher};
use graph::{Graph, GraphError, QueryLimits, QueryOutput, Relation};
use knowledge::{Diagnostic, KnowledgeBase, Severity, SourceFile};
use model::{Entity, Kind, AREAS};
use search::{Hit, SearchIndex};
use serde::Serialize;
use std::collections::BTreeMap;

/// Errors of building an [`Engine`].
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The knowledge has errors; every problem is listed (errors and warnings).
    #[error("the knowledge has {} error(s); first: {}", .0.iter().filter(|d| d.severity == Severity::Error).count(), .0.first().map(|d| d.to_string()).unwrap_or_default())]
    Invalid(Vec<Diagnostic>),
    /// The graph could not be built.
    #[error(transparent)]
    Graph(#[from] GraphError),
    /// The search index could not be built.
    #[error(transparent)]
    Search(#[from] search::SearchError),
    /// The compiled knowledge could not be read.
    #[error(transparent)]
    Compiled(#[from] compiled::CompiledError),
}

/// The loaded knowledge with its graph, index and matchers.
pub struct Engine {
    kb: KnowledgeBase,
    /// Built on first use: a diagnosis does not need it, so `kubewhy why` starts faster.
    graph: std::sync::OnceLock<Graph>,
    index: SearchIndex,
    matcher: Matcher,
    /// Normalized titles and aliases (see `normalize_name`) to the ids of the entities
    /// that carry them, symptoms, checks and fixes left out. Built on first use (search and
    /// explain need it, a diagnosis does not).
    names: std::sync::OnceLock<std::collections::HashMap<String, Vec<String>>>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").field("entities", &self.kb.len()).field("graph_built", &self.graph.get().is_some()).finish()
    }
}

/// How [`Engine::explain`] resolved its query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ResolvedBy {
    /// The query was an id.
    Id,
    /// The query was a slug (id without its kind).
    Slug,
    /// The query equals a title (case-insensitive).
    Title,
    /// The query equals an alias (case-insensitive).
    Alias,
    /// The best full-text hit.
    Search,
}

/// A relation with the other entity's kind and title, for display.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RelatedEntity {
    /// Ontology property local name (`partOf`).
    pub property: String,
    /// The other entity's id.
    pub id: String,
    /// Its kind prefix.
    pub kind: String,
    /// Its title (the id when the entity is not in the knowledge, e.g. a KEP not imported).
    pub title: String,
}

/// One loop of a component, with what it writes and emits and the failure modes in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LoopDetail {
    /// The loop.
    #[serde(rename = "loop")]
    pub loop_: diagnose::EntityRef,
    /// Fields it writes.
    pub writes: Vec<diagnose::EntityRef>,
    /// Fields it reads.
    pub reads: Vec<diagnose::EntityRef>,
    /// Metrics it emits.
    pub emits: Vec<diagnose::EntityRef>,
    /// Failure modes that happen in it.
    pub failure_modes: Vec<diagnose::EntityRef>,
}

/// An entity with its relations both ways.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explanation {
    /// How the query was resolved.
    pub resolved_by: ResolvedBy,
    /// The entity.
    pub entity: Entity,
    /// Relations from this entity.
    pub outgoing: Vec<RelatedEntity>,
    /// Relations to this entity.
    pub incoming: Vec<RelatedEntity>,
    /// For a component: its loops (and those of its parts), each with the fields it writes and
    /// reads, the metrics it emits and the failure modes in it. Empty for other kinds.
    pub loops: Vec<LoopDetail>,
    /// For a component: the metrics it exposes. Empty for other kinds.
    pub metrics: Vec<diagnose::EntityRef>,
}

/// Counts describing the loaded knowledge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Stats {
    /// Number of entities.
    pub entities: usize,
    /// Entities per kind prefix (every kind listed, zero included).
    pub by_kind: BTreeMap<String, usize>,
    /// Failure modes per area (every area listed, zero included).
    pub failure_modes_by_area: BTreeMap<String, usize>,
    /// Failure modes per level: `symptom` (hubs) and `cause` (both listed, zero included).
    pub failure_modes_by_level: BTreeMap<String, usize>,
    /// Cause-level failure modes that are a cause of at least one hub.
    pub causes_of_hubs: usize,
    /// Symptoms with a machine text template.
    pub symptom_templates: usize,
    /// Distinct causal links between failure modes (causedBy plus inverse leadsTo).
    pub causal_links: usize,
    /// Triples in the RDF graph.
    pub triples: usize,
    /// Breadth measures of the curated knowledge.
    pub breadth: Breadth,
}

/// Breadth of the curated knowledge (issue targets are stated per field).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Breadth {
    /// Curated Field entities that name the loop or component writing them.
    pub fields_with_writer: usize,
    /// Curated Metric entities with a bad value, linked from a failure mode or a loop.
    pub curated_metrics_linked_with_bad_value: usize,
    /// Failure modes that link a Field or a Metric.
    pub failure_modes_with_field_or_metric: usize,
    /// Failure modes with at least one check and one fix.
    pub failure_modes_with_check_and_fix: usize,
    /// Coverage topics in the topic map.
    pub topics: usize,
    /// Topics with at least one covering entity.
    pub topics_covered: usize,
}

/// An explain query that matched nothing.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("no entity matches `{query}`{}", if .suggestions.is_empty() { String::new() } else { format!(" (closest: {})", .suggestions.join(", ")) })]
pub struct NotFound {
    /// The query.
    pub query: String,
    /// Closest ids.
    pub suggestions: Vec<String>,
}

/// Longest name `explain`, `gate`, `kep` and `metric` look up, in bytes: no id, title, alias,
/// gate, KEP title or metric name is longer, and a longer one would only make the closest-name
/// search slow (issue 16).
pub const MAX_NAME_BYTES: usize = 512;

/// A [`NotFound`] for a name over [`MAX_NAME_BYTES`] (the query shown cut to 64 characters).
fn too_long(query: &str) -> Option<NotFound> {
    (query.len() > MAX_NAME_BYTES).then(|| NotFound {
        query: format!("{}… ({} bytes; names are at most {MAX_NAME_BYTES} bytes)", query.chars().take(64).collect::<String>(), query.len()),
        suggestions: Vec::new(),
    })
}

impl Engine {
    /// Loads, validates and indexes knowledge files.
    ///
    /// Returns the engine and the warnings found.
    ///
    /// # Errors
    /// [`EngineError::Invalid`] with every problem when any is an error; graph or index errors.
    pub fn from_sources(files: impl IntoIterator<Item = SourceFile>) -> Result<(Engine, Vec<Diagnostic>), EngineError> {
        let (kb, diags) = knowledge::load_sources(files);
        if diags.iter().any(|d| d.severity == Severity::Error) {
            return Err(EngineError::Invalid(diags));
        }
        Ok((Engine::new(kb)?, diags))
    }

    /// Builds the index and the matchers over an already validated knowledge base; the RDF
    /// graph is built on first use.
    ///
    /// # Errors
    /// Index errors.
    pub fn new(kb: KnowledgeBase) -> Result<Engine, EngineError> {
        // The index and the matchers are independent: build them side by side.
        let (index, matcher) = std::thread::scope(|s| {
            let m = s.spawn(|| Matcher::new(&kb));
            let index = SearchIndex::build(&kb);
            (index, m.join())
        });
        let matcher = matcher.unwrap_or_else(|_| Matcher::new(&kb));
        Ok(Engine::assemble(kb, index?, matcher))
    }

    /// Loads knowledge compiled by [`compiled::compile`] (the built-in knowledge is compiled
    /// at build time, issue 13): no file is parsed and the index is not rebuilt.
    ///
    /// # Errors
    /// [`EngineError::Compiled`] when the bytes are not compiled knowledge of this build.
    pub fn from_compiled(bytes: impl Into<compiled::Bytes>) -> Result<Engine, EngineError> {
        let compiled::Loaded { kb, index, matcher } = compiled::load(bytes)?;
        Ok(Engine::assemble(kb, index, matcher))
    }

    /// Loads compiled knowledge and merges overlay files into it (see
    /// [`knowledge::load_overlay`]): only the overlay is parsed, and only its entities are
    /// added to the index.
    ///
    /// Returns the engine and the warnings found.
    ///
    /// # Errors
    /// [`EngineError::Compiled`] for bad bytes; [`EngineError::Invalid`] with every problem when
    /// any is an error (overlay problems carry the overlay's file:line); index errors.
    pub fn from_compiled_with_overlay(bytes: impl Into<compiled::Bytes>, overlay: impl IntoIterator<Item = SourceFile>) -> Result<(Engine, Vec<Diagnostic>), EngineError> {
        // The stored matcher tables are of the built-in failure modes only: rebuilt below.
        let (kb, mut index) = compiled::load_base(bytes)?;
        let (kb, added, diags) = knowledge::load_overlay(kb, overlay);
        if diags.iter().any(|d| d.severity == Severity::Error) {
            return Err(EngineError::Invalid(diags));
        }
        index.add(&kb, &added)?;
        let matcher = Matcher::new(&kb);
        Ok((Engine::assemble(kb, index, matcher), diags))
    }

    /// This engine's knowledge and index in the compiled form that [`Engine::from_compiled`]
    /// reads (see [`compiled::compile`]).
    ///
    /// # Errors
    /// [`EngineError::Compiled`] when the index files cannot be read.
    pub fn compile(&self) -> Result<Vec<u8>, EngineError> {
        Ok(compiled::compile(&self.kb, &self.index, &self.matcher)?)
    }

    fn assemble(kb: KnowledgeBase, index: SearchIndex, matcher: Matcher) -> Engine {
        Engine { kb, graph: std::sync::OnceLock::new(), index, matcher, names: std::sync::OnceLock::new() }
    }

    /// Normalized names to entity ids (see the `names` field), built on the first call.
    fn names(&self) -> &std::collections::HashMap<String, Vec<String>> {
        self.names.get_or_init(|| {
            let mut names: std::collections::HashMap<String, Vec<String>> = std::collections::HashMap::new();
            for e in self.kb.entities() {
                if matches!(e.kind, Kind::Symptom | Kind::Check | Kind::Fix) {
                    continue;
                }
                for n in std::iter::once(e.title.as_str()).chain(e.aliases.iter().map(String::as_str)) {
                    let ids = names.entry(normalize_name(n)).or_default();
                    if !ids.contains(&e.id) {
                        ids.push(e.id.clone());
                    }
                }
            }
            names
        })
    }

    /// The knowledge base.
    pub fn knowledge(&self) -> &KnowledgeBase {
        &self.kb
    }

    /// The RDF graph (built on the first call; later calls return the same graph).
    ///
    /// # Panics
    /// Never in practice: building an in-memory store only fails if the store refuses a triple,
    /// which the builder never produces; such a failure leaves an empty graph instead.
    pub fn graph(&self) -> &Graph {
        self.graph.get_or_init(|| Graph::build(&self.kb).unwrap_or_else(|e| {
            tracing::error!(error = %e, "building the RDF graph failed; queries see an empty graph");
            Graph::empty()
        }))
    }

    /// Answers a symptom (see [`diagnose`]).
    ///
    /// # Errors
    /// [`DiagnoseError`] for empty or oversized input.
    pub fn diagnose(&self, input: &str, opts: DiagnoseOptions) -> Result<Diagnosis, DiagnoseError> {
        diagnose::diagnose(&self.kb, &self.index, &self.matcher, input, opts)
    }

    /// Full-text search over all entities (or only `kinds`), at most `limit` hits, best first.
    ///
    /// BM25 ranks the hits; then names win over words: an entity whose title or an alias
    /// *is* the query (case and spacing ignored) comes first, and one whose title or alias
    /// contains the query as a phrase gets its score doubled. So "insufficient cpu" finds
    /// the failure mode that has the alias "Insufficient cpu" before pages that merely use
    /// both words often. Symptom, check and fix entities never take the exact-name place.
    pub fn search(&self, text: &str, kinds: Option<&[Kind]>, limit: usize) -> Vec<Hit> {
        let mut hits = self.index.search(text, kinds, limit.saturating_add(32)).unwrap_or_default();
        let query = normalize_name(text);
        let words = query.split(' ').filter(|w| !w.is_empty()).count();
        if words == 0 {
            hits.truncate(limit);
            return hits;
        }
        let allowed = |e: &Entity| kinds.is_none_or(|ks| ks.contains(&e.kind));
        let names = |e: &Entity| {
            std::iter::once(e.title.as_str()).chain(e.aliases.iter().map(String::as_str)).map(normalize_name).collect::<Vec<_>>()
        };
        let top = hits.iter().map(|h| h.score).fold(0.0f32, f32::max);
        for h in &mut hits {
            let Some(e) = self.kb.get(&h.id) else { continue };
            let ns = names(e);
            let named = !matches!(e.kind, Kind::Symptom | Kind::Check | Kind::Fix);
            if named && ns.contains(&query) {
                h.score += top * 2.0 + 1.0;
            } else if words >= 2 && ns.iter().any(|n| contains_phrase(n, &query)) {
                h.score *= 2.0;
            }
        }
        // An exact name that BM25 left out of the window still belongs on top.
        for id in self.names().get(&query).into_iter().flatten() {
            if let Some(e) = self.kb.get(id) {
                if allowed(e) && !hits.iter().any(|h| h.id == e.id) {
                    hits.push(Hit { id: e.id.clone(), score: top * 2.0 + 1.0 });
                }
            }
        }
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
        hits.truncate(limit);
        hits
    }

    /// Runs a read-only SPARQL query (see [`Graph::query`]).
    ///
    /// # Errors
    /// See [`Graph::query`].
    pub fn sparql(&self, query: &str, limits: QueryLimits) -> Result<QueryOutput, GraphError> {
        self.graph().query(query, limits)
    }

    /// Runs a read-only SPARQL query with typed cells (see [`Graph::query_terms`]).
    ///
    /// # Errors
    /// See [`Graph::query`].
    pub fn sparql_terms(&self, query: &str, limits: QueryLimits) -> Result<QueryOutput<graph::RdfTerm>, GraphError> {
        self.graph().query_terms(query, limits)
    }

    /// Resolves an id, a slug, a title, an alias or free text to one entity and its relations.
    ///
    /// # Errors
    /// [`NotFound`] with the closest ids when nothing matches.
    pub fn explain(&self, query: &str) -> Result<Explanation, NotFound> {
        if let Some(e) = too_long(query) {
            return Err(e);
        }
        let q = query.trim();
        let lower = q.to_lowercase();
        let resolved = if let Some(e) = self.kb.get(q) {
            Some((e, ResolvedBy::Id))
        } else if let Some(e) = self.kb.entities().iter().find(|e| e.slug().eq_ignore_ascii_case(q) && e.kind != Kind::Symptom) {
            Some((e, ResolvedBy::Slug))
        } else if let Some(e) = self.kb.entities().iter().find(|e| e.title.to_lowercase() == lower) {
            Some((e, ResolvedBy::Title))
        } else if let Some(e) = {
            // Several entities may share an alias: prefer the most concrete kind.
            let rank = |k: Kind| [Kind::Component, Kind::Loop, Kind::FailureMode, Kind::Field, Kind::Metric, Kind::Concept].iter().position(|x| *x == k).unwrap_or(9);
            self.kb.entities().iter().filter(|e| e.aliases.iter().any(|a| a.to_lowercase() == lower)).min_by_key(|e| rank(e.kind))
        } {
            Some((e, ResolvedBy::Alias))
        } else if q.split_once('/').is_some_and(|(k, _)| Kind::from_prefix(k).is_some()) {
            // An id that does not exist: suggest, never guess.
            None
        } else {
            self.search(q, None, 1).first().and_then(|h| self.kb.get(&h.id)).map(|e| (e, ResolvedBy::Search))
        };
        let Some((entity, resolved_by)) = resolved else {
            let mut near: Vec<(usize, &str)> = self
                .kb
                .entities()
                .iter()
                .map(|e| (knowledge::strsim_distance(&e.slug().to_lowercase(), &lower), e.id.as_str()))
                .collect();
            near.sort();
            return Err(NotFound { query: q.to_string(), suggestions: near.into_iter().take(3).map(|(_, id)| id.to_string()).collect() });
        };
        let (out, inc) = self.graph().relations(&entity.id);
        let describe = |rels: Vec<Relation>| -> Vec<RelatedEntity> {
            rels.into_iter()
                .map(|r| {
                    let other = self.kb.get(&r.id);
                    RelatedEntity {
                        property: r.property,
                        kind: other.map(|o| o.kind.prefix().to_string()).unwrap_or_else(|| r.id.split('/').next().unwrap_or("").to_string()),
                        title: other.map(|o| o.title.clone()).unwrap_or_else(|| r.id.clone()),
                        id: r.id,
                    }
                })
                .collect()
        };
        let (loops, metrics) = if entity.kind == Kind::Component { self.component_detail(&entity.id) } else { (Vec::new(), Vec::new()) };
        Ok(Explanation { resolved_by, entity: entity.clone(), outgoing: describe(out), incoming: describe(inc), loops, metrics })
    }

    fn eref(&self, id: &str) -> diagnose::EntityRef {
        diagnose::EntityRef::of(&self.kb, id)
    }

    /// Loops of a component and of its parts (controllers of kube-controller-manager), and the metrics it exposes.
    fn component_detail(&self, id: &str) -> (Vec<LoopDetail>, Vec<diagnose::EntityRef>) {
        use model::KindData;
        let mut owners = vec![id.to_string()];
        owners.extend(
            self.kb
                .of_kind(Kind::Component)
                .filter(|c| matches!(&c.data, KindData::Component { part_of: Some(p), .. } if p == id))
                .map(|c| c.id.clone()),
        );
        let mut loops = Vec::new();
        for l in self.kb.of_kind(Kind::Loop) {
            let KindData::Loop { part_of, reads, writes, emits } = &l.data else { continue };
            if !owners.contains(part_of) {
                continue;
            }
            let mut writes: Vec<String> = writes.clone();
            for f in self.kb.of_kind(Kind::Field) {
                if let KindData::Field { written_by, .. } = &f.data {
                    if written_by.contains(&l.id) && !writes.contains(&f.id) {
                        writes.push(f.id.clone());
                    }
                }
            }
            let failure_modes = self
                .kb
                .of_kind(Kind::FailureMode)
                .filter(|f| f.failure_mode().is_some_and(|d| d.loops.contains(&l.id)))
                .map(|f| self.eref(&f.id))
                .collect();
            loops.push(LoopDetail {
                loop_: self.eref(&l.id),
                writes: writes.iter().map(|w| self.eref(w)).collect(),
                reads: reads.iter().map(|w| self.eref(w)).collect(),
                emits: emits.iter().map(|w| self.eref(w)).collect(),
                failure_modes,
            });
        }
        let metrics = self
            .kb
            .of_kind(Kind::Metric)
            .filter(|m| matches!(&m.data, KindData::Metric { component, .. } if owners.contains(component)))
            .map(|m| self.eref(&m.id))
            .collect();
        (loops, metrics)
    }

    /// A feature gate's lifecycle and its state at `version` (see [`lookup::gate`]).
    ///
    /// # Errors
    /// [`NotFound`] with the closest gate names.
    pub fn gate(&self, name: &str, version: Option<model::Version>) -> Result<lookup::GateAnswer, NotFound> {
        if let Some(e) = too_long(name) {
            return Err(e);
        }
        match lookup::gate(&self.kb, name, version) {
            Err(nf) if name.split_whitespace().count() > 1 => {
                // Words, not a name: the gate whose name spells them ("sidecar containers"), else
                // the gates of the KEPs those words find.
                let words = name.to_lowercase();
                let spelled = self.kb.upstream().gates.keys().filter(|g| search::expand_camel_case(g).to_lowercase().contains(words.trim())).min_by_key(|g| g.len());
                let from_keps = || self.kep(name).ok().into_iter().flatten().flat_map(|k| k.kep.feature_gates).find(|g| self.kb.upstream().gates.contains_key(g));
                match spelled.cloned().or_else(from_keps) {
                    Some(g) => lookup::gate(&self.kb, &g, version),
                    None => Err(nf),
                }
            }
            r => r,
        }
    }

    /// KEPs by number or title words (see [`lookup::kep`]).
    ///
    /// # Errors
    /// [`NotFound`] with the closest numbers or titles.
    pub fn kep(&self, query: &str) -> Result<Vec<lookup::KepAnswer>, NotFound> {
        if let Some(e) = too_long(query) {
            return Err(e);
        }
        match lookup::kep(&self.kb, query) {
            Err(nf) if query.trim().parse::<u32>().is_err() && !query.trim().to_lowercase().starts_with("kep") => {
                // Words no KEP title holds: search as `kubewhy search` does, and answer with the
                // KEPs found and the KEPs the entities found cite, best hit first (at most 5).
                let mut numbers: Vec<u32> = Vec::new();
                for h in self.search(query, None, 10) {
                    let Some(e) = self.kb.get(&h.id) else { continue };
                    let cited: Vec<u32> = match e.slug().parse::<u32>() {
                        Ok(n) if e.kind == Kind::Kep => vec![n],
                        _ => e.keps.clone(),
                    };
                    for n in cited {
                        if !numbers.contains(&n) && self.kb.upstream().keps.contains_key(&n) {
                            numbers.push(n);
                        }
                    }
                }
                let found: Vec<lookup::KepAnswer> = numbers.iter().take(5).filter_map(|n| lookup::kep(&self.kb, &n.to_string()).ok()).flatten().collect();
                if found.is_empty() {
                    Err(nf)
                } else {
                    Ok(found)
                }
            }
            r => r,
        }
    }

    /// A metric (see [`lookup::metric`]).
    ///
    /// # Errors
    /// [`NotFound`] with the closest metric names.
    pub fn metric(&self, name: &str) -> Result<lookup::MetricAnswer, NotFound> {
        if let Some(e) = too_long(name) {
            return Err(e);
        }
        lookup::metric(&self.kb, name)
    }

    /// Finds the checkable claims in `text` and checks each against the graph (see [`claims`]).
    pub fn check_claims(&self, text: &str) -> Vec<claims::Claim> {
        claims::check(&self.kb, text)
    }

    /// Counts of the loaded knowledge.
    pub fn stats(&self) -> Stats {
        let mut by_kind: BTreeMap<String, usize> = Kind::ALL.iter().map(|k| (k.prefix().to_string(), 0)).collect();
        let mut by_area: BTreeMap<String, usize> = AREAS.iter().map(|a| (a.to_string(), 0)).collect();
        let mut templates = 0;
        for e in self.kb.entities() {
            *by_kind.entry(e.kind.prefix().to_string()).or_default() += 1;
            if let Some(fm) = e.failure_mode() {
                *by_area.entry(fm.area.clone()).or_default() += 1;
            }
            if e.symptom().is_some_and(|s| s.text.is_some()) {
                templates += 1;
            }
        }
        let causal_links = graph::direct_causes(&self.kb).values().map(|s| s.len()).sum();
        let fms: Vec<&model::FailureModeData> = self.kb.entities().iter().filter_map(|e| e.failure_mode()).collect();
        let linked_metrics: std::collections::BTreeSet<&str> = self
            .kb
            .entities()
            .iter()
            .flat_map(|e| match &e.data {
                model::KindData::FailureMode(fm) => fm.metrics.iter().map(String::as_str).collect::<Vec<_>>(),
                model::KindData::Loop { emits, .. } => emits.iter().map(String::as_str).collect(),
                _ => Vec::new(),
            })
            .collect();
        let writers: std::collections::BTreeSet<&str> = self
            .kb
            .entities()
            .iter()
            .flat_map(|e| match &e.data {
                model::KindData::Loop { writes, .. } => writes.iter().map(String::as_str).collect::<Vec<_>>(),
                model::KindData::Field { written_by, .. } if !written_by.is_empty() => vec![e.id.as_str()],
                _ => Vec::new(),
            })
            .collect();
        let breadth = Breadth {
            fields_with_writer: self.kb.of_kind(Kind::Field).filter(|f| writers.contains(f.id.as_str())).count(),
            curated_metrics_linked_with_bad_value: self
                .kb
                .of_kind(Kind::Metric)
                .filter(|m| !m.location.file.starts_with("generated/"))
                .filter(|m| matches!(&m.data, model::KindData::Metric { bad_value: Some(_), .. }) && linked_metrics.contains(m.id.as_str()))
                .count(),
            failure_modes_with_field_or_metric: fms.iter().filter(|f| !f.fields.is_empty() || !f.metrics.is_empty()).count(),
            failure_modes_with_check_and_fix: fms.iter().filter(|f| !f.checks.is_empty() && !f.fixes.is_empty()).count(),
            topics: self.kb.topics().len(),
            topics_covered: self.kb.topics().iter().filter(|(t, _)| t.entities.iter().any(|id| self.kb.get(id).is_some())).count(),
        };
        let mut by_level: BTreeMap<String, usize> = [("symptom".to_string(), 0), ("cause".to_string(), 0)].into_iter().collect();
        for f in &fms {
            *by_level.entry(f.level.as_str().to_string()).or_default() += 1;
        }
        let causes_of_hubs = scorers::hub_causes(&self.kb).into_values().flatten().collect::<std::collections::BTreeSet<String>>().len();
        Stats {
            entities: self.kb.len(),
            by_kind,
            failure_modes_by_area: by_area,
            failure_modes_by_level: by_level,
            causes_of_hubs,
            symptom_templates: templates,
            causal_links,
            triples: self.graph().len(),
            breadth,
        }
    }
}

/// Lowercases and keeps letters, digits, `.`, `/` and `-`, other runs of characters become one space.
fn normalize_name(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_alphanumeric() || matches!(c, '.' | '/' | '-') {
            out.extend(c.to_lowercase());
        } else if !out.ends_with(' ') {
            out.push(' ');
        }
    }
    out.trim().to_string()
}

/// Whether `phrase` occurs in `name` on word boundaries (both normalized).
fn contains_phrase(name: &str, phrase: &str) -> bool {
    let padded = format!(" {name} ");
    padded.contains(&format!(" {phrase} "))
}

#[cfg(test)]
mod tests {
    #[test]
    fn engine_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<super::Engine>();
    }
}
