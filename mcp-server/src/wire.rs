//! Wire types: the tools' parameter structs (deserialised from `arguments`, described by their
//! JSON Schema) and their structured outputs (serialised into `structuredContent`, described by
//! each tool's output schema). Answer types the engine already declares are re-exported, not
//! copied; the types here are those whose shape really differs (ids and resource URIs for MCP
//! clients, lists cut to a size a model reads).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How much a `diagnose` answer says.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Detail {
    /// The mechanism, evidence, three checks and two fixes for the top candidate and one check
    /// for each other (the default; about 1,000 tokens of text).
    #[default]
    Brief,
    /// Every check, fix, reference and piece of evidence, and the full chain.
    Full,
}

/// Parameters of `diagnose`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiagnoseParams {
    /// The symptom: an error message, event lines, `kubectl describe` output, YAML, log lines or
    /// a question in words. At most 1 MiB.
    #[schemars(example = "etcdserver: mvcc: database space exceeded")]
    #[schemars(example = "0/3 nodes are available: 3 Insufficient cpu.", length(max = 1048576))]
    pub symptom: String,
    /// Kubernetes version of the cluster ("1.30", "v1.30.2"); failure modes that do not apply at
    /// that version are left out. Taken from the input when it names one version.
    #[schemars(example = "1.30")]
    #[serde(default)]
    pub k8s_version: Option<String>,
    /// How many ranked candidates to return, 1 to 10 (default 3).
    #[schemars(range(min = 1, max = 10), example = 3)]
    #[serde(default)]
    pub top: Option<u32>,
    /// `brief` (default, a short answer) or `full` (every check, fix and reference).
    #[serde(default)]
    pub detail: Option<Detail>,
}

/// Parameters of `explain`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExplainParams {
    /// An entity id (`component/kubelet`), a slug (`kubelet`), a title, an alias or free words.
    /// At most 512 bytes.
    #[schemars(example = "component/kubelet", example = "watch cache", length(max = 512))]
    pub id_or_name: String,
}

/// Parameters of `search`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchParams {
    /// Words to look for (full-text, stemmed, CamelCase split).
    #[schemars(example = "crash loop")]
    pub text: String,
    /// Only entities of this kind: component, loop, field, metric, failure-mode, symptom, check,
    /// fix, concept, myth, kep, feature-gate or release.
    #[schemars(example = "failure-mode")]
    #[serde(default)]
    pub kind: Option<String>,
    /// At most this many hits, 1 to 50 (default 10).
    #[schemars(range(min = 1, max = 50), example = 10)]
    #[serde(default)]
    pub limit: Option<u32>,
}

/// Parameters of `query_graph`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueryGraphParams {
    /// A read-only SPARQL 1.1 query (SELECT, ASK, CONSTRUCT or DESCRIBE). Prefixes `kw:`, `rdf:`,
    /// `rdfs:`, `id:` and one per kind (`failure-mode:`, `component:` ...) are predeclared.
    /// Runs at most 10 s and returns at most 1,000 rows; at most 16 KiB of text.
    #[schemars(example = "SELECT ?fm WHERE { ?fm kw:causedBy failure-mode:node-affinity-mismatch }", length(max = 16384))]
    pub sparql: String,
}

/// Parameters of `feature_gate`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FeatureGateParams {
    /// The feature gate's name (case-insensitive). At most 512 bytes.
    #[schemars(example = &"SidecarContainers", length(max = 512))]
    pub name: String,
    /// A Kubernetes version ("1.30"): the gate's stage and default at that version.
    #[schemars(example = "1.30")]
    #[serde(default)]
    pub version: Option<String>,
}

/// Parameters of `kep`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KepParams {
    /// A KEP number (`753`, `KEP-753`) or words of its title. At most 512 bytes.
    #[schemars(example = "753", example = "sidecar containers", length(max = 512))]
    pub query: String,
}

/// Parameters of `metric`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MetricParams {
    /// The exposed metric name. At most 512 bytes.
    #[schemars(example = &"etcd_mvcc_db_total_size_in_bytes", length(max = 512))]
    pub name: String,
}

/// Parameters of `check_claims`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckClaimsParams {
    /// Text to check (an answer, a runbook): its claims about feature gates, KEPs, metrics and
    /// removal or GA versions are checked against the graph. At most 1 MiB.
    #[schemars(example = "The SidecarContainers feature gate went beta in 1.29 (KEP-753).", length(max = 1048576))]
    pub text: String,
}

/// Answer types shared with the engine (and so with `kubewhy why --output json`): declared once
/// there, with `JsonSchema` derived under the engine's `schema` feature.
pub use kubewhy_engine::claims::{Claim, Verdict};
pub use kubewhy_engine::context::Names;
pub use kubewhy_engine::diagnose::{Applies, CauseOut, ChainStep, CheckOut, DistinguishingCheck, EntityRef, Evidence, Excluded, FixOut};
pub use kubewhy_engine::lookup::MetricAnswer as MetricOutput;
pub use kubewhy_engine::upstream::GateStep;
pub use kubewhy_engine::RelatedEntity as Related;

/// A ranked failure mode as `diagnose` returns it: the engine's candidate (the same fields as
/// `kubewhy why --output json`, cut to the answer's `detail`) plus where to read the whole entity.
/// The one shape that really differs from the engine's: MCP clients follow `uri`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Candidate {
    /// The engine's candidate: rank, id, level (`symptom` hub or `cause`), the hub it was
    /// reached through, a hub's causes with their checks, confidence, evidence per scorer,
    /// checks, fixes, references and version applicability.
    #[serde(flatten)]
    pub candidate: kubewhy_engine::diagnose::Candidate,
    /// Resource URI with the whole entity (`kubewhy://failure-mode/...`).
    pub uri: String,
    /// Link to the entity's page on the reference site (`<base>/e/<kind>/<slug>`); present only
    /// when the server has a base URL (`--base-url`, `KUBEWHY_BASE_URL`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// The answer of `diagnose`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DiagnoseOutput {
    /// The version used for filtering, if any.
    pub k8s_version: Option<String>,
    /// Where the version came from: option, input or none.
    pub k8s_version_source: String,
    /// How the input was read: question, error, events, describe, yaml or log.
    pub input_style: String,
    /// Names of the objects the input is about (filled into check commands).
    pub names: Names,
    /// Ranked candidates, best first.
    pub candidates: Vec<Candidate>,
    /// Checks that tell the top candidates apart.
    pub distinguishing_checks: Vec<DistinguishingCheck>,
    /// Failure modes left out at this version.
    pub excluded: Vec<Excluded>,
    /// Notes: nothing recognised, version taken from the input, what was left out, causes the
    /// input does not separate.
    pub notices: Vec<String>,
}

/// A loop of a component.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LoopDetail {
    /// The loop.
    #[serde(rename = "loop")]
    pub loop_: EntityRef,
    /// Ids of fields it writes (at most 10).
    pub writes: Vec<String>,
    /// Ids of metrics it emits (at most 10).
    pub emits: Vec<String>,
    /// Ids of failure modes in it (at most 10).
    pub failure_modes: Vec<String>,
}

/// The answer of `explain`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ExplainOutput {
    /// How the query was resolved: id, slug, title, alias or search.
    pub resolved_by: String,
    /// Entity id.
    pub id: String,
    /// Kind.
    pub kind: String,
    /// Title.
    pub title: String,
    /// Other names.
    pub aliases: Vec<String>,
    /// Version range ("all versions", "1.24+").
    pub applies: String,
    /// Kind-specific facts (a JSON object; `kind_data` names the kind).
    pub facts: serde_json::Value,
    /// Markdown body.
    pub body: String,
    /// References.
    pub references: Vec<String>,
    /// Relations from this entity (at most 40; `outgoing_total` counts them all).
    pub outgoing: Vec<Related>,
    /// Number of relations from this entity.
    pub outgoing_total: usize,
    /// Relations to this entity (at most 40; `incoming_total` counts them all).
    pub incoming: Vec<Related>,
    /// Number of relations to this entity.
    pub incoming_total: usize,
    /// For a component: its loops (each list at most 10 long; read the loop's resource for more).
    pub loops: Vec<LoopDetail>,
    /// For a component: the metrics it exposes (at most 30).
    pub metrics: Vec<EntityRef>,
    /// For a component: how many metrics it exposes.
    pub metrics_total: usize,
    /// Resource URI.
    pub uri: String,    /// Link to the entity's page on the reference site (`<base>/e/<kind>/<slug>`); present only
    /// when the server has a base URL (`--base-url`, `KUBEWHY_BASE_URL`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// One search hit.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SearchHit {
    /// Entity id.
    pub id: String,
    /// Kind.
    pub kind: String,
    /// Title.
    pub title: String,
    /// BM25 score.
    pub score: f32,
    /// First sentence of its explanation (at most 160 characters).
    pub summary: String,
    /// Resource URI.
    pub uri: String,    /// Link to the entity's page on the reference site (`<base>/e/<kind>/<slug>`); present only
    /// when the server has a base URL (`--base-url`, `KUBEWHY_BASE_URL`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// The answer of `search`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SearchOutput {
    /// Hits, best first.
    pub hits: Vec<SearchHit>,
}

/// The answer of `query_graph`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct QueryGraphOutput {
    /// solutions (SELECT), boolean (ASK) or graph (CONSTRUCT, DESCRIBE).
    #[serde(rename = "type")]
    pub result_type: String,
    /// SELECT: variable names.
    pub variables: Vec<String>,
    /// SELECT: rows (IRIs as `<iri>`, literals as their lexical form, null when unbound).
    pub rows: Vec<Vec<Option<String>>>,
    /// ASK: the answer.
    pub boolean: Option<bool>,
    /// CONSTRUCT/DESCRIBE: N-Triples.
    pub ntriples: Option<String>,
    /// Whether rows or triples were cut at 1,000.
    pub truncated: bool,
}

/// The answer of `feature_gate`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FeatureGateOutput {
    /// Gate name.
    pub name: String,
    /// The version asked about.
    pub version: Option<String>,
    /// The step in force at that version.
    pub at_version: Option<GateStep>,
    /// One-line statement of its state.
    pub statement: String,
    /// The whole lifecycle.
    pub lifecycle: Vec<GateStep>,
    /// KEP numbers.
    pub keps: Vec<u32>,
    /// Curated entities gated by it.
    pub gated: Vec<EntityRef>,
    /// Where upstream lists it.
    pub source: String,
}

/// One KEP.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Kep {
    /// Number.
    pub number: u32,
    /// Title.
    pub title: String,
    /// Owning SIG.
    pub sig: String,
    /// Status (implementable, implemented ...).
    pub status: String,
    /// Current stage.
    pub stage: String,
    /// Latest milestone.
    pub latest_milestone: String,
    /// Alpha release.
    pub alpha: String,
    /// Beta release.
    pub beta: String,
    /// Stable release.
    pub stable: String,
    /// Curated entities that cite it.
    pub cited_by: Vec<EntityRef>,
}

/// The answer of `kep`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct KepOutput {
    /// Matching KEPs, best first.
    pub keps: Vec<Kep>,
}

/// The answer of `check_claims`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CheckClaimsOutput {
    /// Claims, in text order.
    pub claims: Vec<Claim>,
    /// Supported claims.
    pub supported: usize,
    /// Contradicted claims.
    pub contradicted: usize,
    /// Claims the graph cannot tell.
    pub unknown: usize,
}
