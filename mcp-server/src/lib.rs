//! kubewhy's MCP server: the only crate that knows MCP, JSON Schema and HTTP.
//!
//! One handler type, [`KubewhyServer`] (a cheap clone over `Arc<Engine>`), serves
//! - tools: `diagnose`, `explain`, `search`, `query_graph`, `feature_gate`, `kep`, `metric`,
//!   `check_claims`; each answers with structured content (described by its output schema) and
//!   a concise Markdown text, and reports bad arguments as a tool result with `isError`;
//! - resources: every curated entity as `kubewhy://<kind>/<slug>` (Markdown), listed 100 a page in
//!   id order, and the template `kubewhy://{kind}/{slug}` for any entity;
//! - prompts `diagnose_symptom`, `explain_component`, `review_answer`, and completions for their
//!   arguments and the template's.
//!
//! It is served over stdio ([`serve_stdio`]) and over streamable HTTP ([`http::serve`]).
//!
//! ```no_run
//! # async fn f(engine: kubewhy_engine::Engine) -> anyhow::Result<()> {
//! kubewhy_mcp::serve_stdio(std::sync::Arc::new(engine)).await?;
//! # Ok(()) }
//! ```

pub mod cluster;
pub mod http;
pub mod jsonrpc;
pub mod site;
mod tools;
pub mod wire;

pub use tools::{uri_of, QUERY_MAX_ROWS, QUERY_TIMEOUT};

use kubewhy_engine::model::Kind;
use kubewhy_engine::Engine;
use rmcp::handler::server::common::{schema_for_input, schema_for_output};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult, CompletionInfo, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, Implementation, JsonObject, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, Prompt, PromptArgument, PromptMessage, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Reference, Resource,
    ResourceContents, ResourceTemplate, Role, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde::de::DeserializeOwned;
use std::sync::Arc;

/// Largest accepted text argument (bytes): 1 MiB.
pub const MAX_ARGUMENT_BYTES: usize = 1024 * 1024;
/// Resources per `resources/list` page.
pub const RESOURCE_PAGE_SIZE: usize = 100;
/// The resource template every entity matches.
pub const RESOURCE_TEMPLATE: &str = "kubewhy://{kind}/{slug}";

const INSTRUCTIONS: &str = "kubewhy maps a Kubernetes symptom (an error message, events, `kubectl describe` output, logs or a question) to the mechanism behind it, from a curated knowledge graph of components, control loops, fields, metrics and failure modes. Start with `diagnose`; `explain` an id it returns; use `feature_gate`, `kep` and `metric` for upstream facts and `check_claims` to verify an answer before giving it.";

/// The MCP handler: tools, resources, prompts and completions over one shared [`Engine`].
/// Cloning is cheap (a few `Arc`s): the HTTP transport clones it per session.
#[derive(Clone)]
pub struct KubewhyServer {
    engine: Arc<Engine>,
    tools: Arc<Vec<Tool>>,
    /// Cluster access (the `verify_cluster` and `scan_cluster` tools exist only with it).
    cluster: Option<Arc<cluster::ClusterAccess>>,
    /// Ids of curated entities (not the generated gates, KEPs, releases and metrics), sorted.
    curated: Arc<Vec<String>>,
    /// Base URL of the reference site; when set, answers carry `url` links to entity pages.
    base_url: Option<Arc<str>>,
    /// Permits to run a quick tool ([`QUICK_TOOLS`]): one per core, shared by every session.
    quick: Arc<tokio::sync::Semaphore>,
    /// Recent answers of quick tools, shared by every session ([`ANSWER_CACHE_BYTES`]).
    answers: Arc<AnswerCache>,
    /// Quick-tool runs so far (calls answered from `answers` are not counted).
    runs: Arc<std::sync::atomic::AtomicU64>,
}

/// Tools that answer in milliseconds. At most one runs per core at a time, the others wait in
/// arrival order (tokio's semaphore is fair): 100 sessions calling `diagnose` at once no longer
/// get 100 threads sharing two cores, so each answer comes out as soon as it is ready. The
/// other tools (`query_graph`, up to its time limit; `check_claims`; the cluster tools, which
/// wait on the API server) are not held back by them and do not hold them back.
pub const QUICK_TOOLS: [&str; 6] = ["diagnose", "explain", "search", "feature_gate", "kep", "metric"];

/// Most bytes the answers of recent quick-tool calls may hold, counted as their keys, Markdown
/// and structured content serialised as JSON: 32 MiB (about 800 `diagnose` answers of a
/// one-line symptom).
///
/// A call whose tool and arguments (all of them) match a kept answer's gets a copy of it without
/// running the tool; a call matching one still running waits for that answer. The engine does
/// not change while a server runs, so the copy is what the tool would answer. Errors are not
/// kept. Answers that are neither recent nor asked again make room first (quick_cache's S3-FIFO
/// policy). With 100 sessions asking about the same few symptoms at once, this is what brings a
/// call's p99 to about 100 ms on two cores (`cargo bench -p kubewhy-mcp --bench load`).
pub const ANSWER_CACHE_BYTES: u64 = 32 << 20;

/// An answer kept for repeated calls, with the bytes it holds.
#[derive(Clone)]
struct CachedAnswer {
    result: Arc<CallToolResult>,
    bytes: u64,
}

/// Weighs a kept answer by its key and the bytes of its answer.
#[derive(Clone)]
struct AnswerBytes;

impl quick_cache::Weighter<String, CachedAnswer> for AnswerBytes {
    fn weight(&self, key: &String, answer: &CachedAnswer) -> u64 {
        key.len() as u64 + answer.bytes
    }
}

type AnswerCache = quick_cache::sync::Cache<String, CachedAnswer, AnswerBytes>;

fn answer_cache() -> AnswerCache {
    AnswerCache::with_weighter(1_024, ANSWER_CACHE_BYTES, AnswerBytes)
}

/// Counts the bytes written to it.
struct ByteCount(u64);

impl std::io::Write for ByteCount {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The bytes a result holds: its text contents and its structured content as JSON.
fn answer_bytes(r: &CallToolResult) -> u64 {
    let mut n = ByteCount(0);
    if let Some(v) = &r.structured_content {
        let _ = serde_json::to_writer(&mut n, v);
    }
    n.0 + r.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.len() as u64).sum::<u64>()
}

impl std::fmt::Debug for KubewhyServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KubewhyServer").field("tools", &self.tools.len()).field("resources", &self.curated.len()).finish()
    }
}

/// The output schema as the tool list sends it: an object. The answer's shape is documented in
/// the README and pinned by the full-schema snapshot test; sending it in every session's tool
/// list cost about 10,000 characters that a model, which reads the answer itself, does not need.
fn shallow_output(_schema: &JsonObject) -> JsonObject {
    let mut out = JsonObject::new();
    out.insert("type".into(), serde_json::json!("object"));
    out
}

/// The input schema without what a model does not need to call the tool: `$schema`, the
/// struct's title, `default: null` and integer `format`s (argument descriptions, examples and
/// ranges stay).
fn lean_input(schema: &mut JsonObject) {
    schema.remove("$schema");
    schema.remove("title");
    if let Some(props) = schema.get_mut("properties").and_then(serde_json::Value::as_object_mut) {
        for p in props.values_mut() {
            if let Some(p) = p.as_object_mut() {
                if p.get("default") == Some(&serde_json::Value::Null) {
                    p.remove("default");
                }
                p.remove("format");
            }
        }
    }
    if let Some(defs) = schema.get_mut("$defs").and_then(serde_json::Value::as_object_mut) {
        for d in defs.values_mut() {
            if let Some(d) = d.as_object_mut() {
                d.remove("description");
                if let Some(serde_json::Value::Array(alts)) = d.get_mut("oneOf") {
                    for a in alts.iter_mut().filter_map(serde_json::Value::as_object_mut) {
                        a.remove("description");
                    }
                }
            }
        }
    }
}

fn tool<P: schemars::JsonSchema + 'static, O: schemars::JsonSchema + 'static>(name: &'static str, title: &'static str, description: &'static str) -> Tool {
    let mut input = (*schema_for_input::<P>().unwrap_or_else(|e| {
        tracing::error!(tool = name, error = %e, "input schema is not an object schema");
        rmcp::handler::server::common::schema_for_empty_input()
    }))
    .clone();
    lean_input(&mut input);
    let output = shallow_output(&schema_for_output::<O>());
    let mut t = Tool::new(name, description, Arc::new(input)).with_raw_output_schema(Arc::new(output)).with_title(title);
    t = t.with_annotations(ToolAnnotations::new().read_only(true).destructive(false).idempotent(true).open_world(false));
    t
}

fn tool_list() -> Vec<Tool> {
    use wire::*;
    vec![
        tool::<DiagnoseParams, DiagnoseOutput>(
            "diagnose",
            "Diagnose a Kubernetes symptom",
            "Map a Kubernetes symptom (error message, events, `kubectl describe`, YAML, logs or a question) to ranked failure modes with the mechanism chain (symptom → failure mode → control loop → component), evidence per scorer, checks that tell the candidates apart, fixes and references. Each candidate has a `level`: a `cause` (one specific mechanism; `hub` names the surface failure it was reached through) or a `symptom` hub, whose `causes` list its specific causes most likely first, each with the check that confirms or rules it out. Include the context you have (settings, platform, versions, timings, what was ruled out): it decides among causes. Give `k8s_version` when known.",
        ),
        tool::<ExplainParams, ExplainOutput>(
            "explain",
            "Explain an entity",
            "Explain one entity of the knowledge graph (component, loop, field, metric, failure mode, concept, myth ...) by id, slug, title, alias or words: its facts, relations both ways, and for a component its loops and metrics.",
        ),
        tool::<SearchParams, SearchOutput>("search", "Search the knowledge graph", "Full-text search over every entity, optionally of one kind; hits best first with ids to `explain`."),
        tool::<QueryGraphParams, QueryGraphOutput>(
            "query_graph",
            "Query the graph with SPARQL",
            "Run a read-only SPARQL 1.1 query (SELECT, ASK, CONSTRUCT, DESCRIBE) over the RDF graph; updates are refused; 10 s time limit, 1,000 rows. The ontology is the `kw:` prefix (causedBy, leadsTo, manifestsAs, inLoop, partOf, involves, diagnosedBy, fixedBy, observableVia ...).",
        ),
        tool::<FeatureGateParams, FeatureGateOutput>("feature_gate", "Feature gate lifecycle", "A Kubernetes feature gate's lifecycle (stage and default per release), its state at a version, its KEPs and what it gates. Unknown names get the closest known names."),
        tool::<KepParams, KepOutput>("kep", "Look up a KEP", "A Kubernetes Enhancement Proposal by number or title words: SIG, status, stage, alpha/beta/stable releases and the curated entities citing it."),
        tool::<MetricParams, MetricOutput>("metric", "Look up a metric", "A Kubernetes, etcd, CoreDNS or kube-state-metrics metric: type, stability, labels, component, what a bad value means and the failure modes it reveals."),
        tool::<CheckClaimsParams, CheckClaimsOutput>(
            "check_claims",
            "Check claims in a text",
            "Find the checkable claims in a text (feature gates and their stages, KEP numbers and titles, metric names, removal and GA versions) and check each against the graph: supported, contradicted or unknown.",
        ),
    ]
}

/// The cluster tools, read-only; open-world when they reach a live cluster.
fn cluster_tools(live: bool) -> Vec<Tool> {
    let mark = |t: Tool| {
        t.with_annotations(ToolAnnotations::new().read_only(true).destructive(false).idempotent(true).open_world(live))
    };
    vec![
        mark(tool::<cluster::VerifyClusterParams, cluster::VerifyClusterOutput>(
            "verify_cluster",
            "Verify a diagnosis against the cluster",
            "Check against the connected cluster (read-only): give `object` (pod/web-0, deployment/web, node/n1) to diagnose it from its status, events, owners, node, PVCs, Services and webhooks; or give `symptom` to diagnose a text and check its top candidates. Candidates are re-ranked by evidence (holds, unknown, does not hold) with the objects and field values that show it.",
        )),
        mark(tool::<cluster::ScanClusterParams, cluster::ScanClusterOutput>(
            "scan_cluster",
            "Scan the cluster for failure modes",
            "Run every probe over the connected cluster (read-only) in one namespace or all, and report the failure modes found with their mechanism, affected objects, evidence and fixes; probes that could not decide are listed with the missing permission.",
        )),
    ]
}

fn parse<P: DeserializeOwned>(tool: &str, args: JsonObject) -> Result<P, String> {
    serde_path_to_error::deserialize(serde_json::Value::Object(args)).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path.is_empty() || path == "." {
            format!("invalid arguments for `{tool}`: {inner}")
        } else {
            format!("invalid arguments for `{tool}`: argument `{path}`: {inner}")
        }
    })
}

/// Refuses any string argument over [`MAX_ARGUMENT_BYTES`], naming it.
fn check_sizes(args: &JsonObject) -> Result<(), String> {
    for (k, v) in args {
        let len = match v {
            serde_json::Value::String(s) => s.len(),
            other => other.to_string().len(),
        };
        if len > MAX_ARGUMENT_BYTES {
            return Err(format!("argument `{k}` is {len} bytes; the limit is {MAX_ARGUMENT_BYTES} bytes (1 MiB): send the relevant part (the error lines, the Events table)"));
        }
    }
    Ok(())
}

/// The name argument of each lookup tool: at most [`kubewhy_engine::MAX_NAME_BYTES`] bytes (no
/// entity, gate, KEP title or metric name is longer; a longer one took minutes to match).
const NAME_ARGUMENTS: [(&str, &str); 4] = [("explain", "id_or_name"), ("feature_gate", "name"), ("kep", "query"), ("metric", "name")];

/// Refuses a lookup tool's name argument over [`kubewhy_engine::MAX_NAME_BYTES`], naming it.
fn check_name(tool: &str, args: &JsonObject) -> Result<(), String> {
    let limit = kubewhy_engine::MAX_NAME_BYTES;
    for (t, arg) in NAME_ARGUMENTS {
        if t == tool {
            if let Some(len) = args.get(arg).and_then(serde_json::Value::as_str).map(str::len).filter(|l| *l > limit) {
                return Err(format!("argument `{arg}` of `{tool}` is {len} bytes; names are at most {limit} bytes: give an id, a name or a few words"));
            }
        }
    }
    Ok(())
}

/// Runs one tool synchronously. `None` for an unknown tool name.
fn run_tool(engine: &Engine, name: &str, args: JsonObject) -> Option<tools::ToolResult> {
    if !tool_names().contains(&name) {
        return None;
    }
    if let Err(e) = check_sizes(&args).and_then(|()| check_name(name, &args)) {
        return Some(Err(e));
    }
    Some(match name {
        "diagnose" => parse(name, args).and_then(|p| tools::diagnose(engine, p)),
        "explain" => parse(name, args).and_then(|p| tools::explain(engine, p)),
        "search" => parse(name, args).and_then(|p| tools::search(engine, p)),
        "query_graph" => parse(name, args).and_then(|p| tools::query_graph(engine, p)),
        "feature_gate" => parse(name, args).and_then(|p| tools::feature_gate(engine, p)),
        "kep" => parse(name, args).and_then(|p| tools::kep(engine, p)),
        "metric" => parse(name, args).and_then(|p| tools::metric(engine, p)),
        _ => parse(name, args).and_then(|p| tools::check_claims(engine, p)),
    })
}

fn tool_names() -> [&'static str; 8] {
    ["diagnose", "explain", "search", "query_graph", "feature_gate", "kep", "metric", "check_claims"]
}

/// A successful tool result: `markdown` as its text content and `structured` as its structured
/// content. (rmcp's `CallToolResult::structured` would also serialise `structured` to JSON text
/// for the content, which the Markdown replaces: about 5% of a `diagnose` call's time under load.)
fn structured_answer(structured: serde_json::Value, markdown: String) -> CallToolResult {
    let mut r = CallToolResult::success(vec![ContentBlock::text(markdown)]);
    r.structured_content = Some(structured);
    r
}

/// The `kind/slug` id named by a `kubewhy://kind/slug` URI.
fn id_of_uri(uri: &str) -> Option<&str> {
    uri.strip_prefix("kubewhy://").filter(|id| id.split_once('/').is_some_and(|(k, s)| Kind::from_prefix(k).is_some() && !s.is_empty()))
}

impl KubewhyServer {
    /// A server over `engine`.
    pub fn new(engine: Arc<Engine>) -> KubewhyServer {
        KubewhyServer::with_cluster(engine, None)
    }

    /// A server over `engine` that also offers `verify_cluster` and `scan_cluster` when
    /// `cluster` is given.
    pub fn with_cluster(engine: Arc<Engine>, cluster: Option<Arc<cluster::ClusterAccess>>) -> KubewhyServer {
        let mut curated: Vec<String> = engine.knowledge().entities().iter().filter(|e| !e.location.file.starts_with("generated/")).map(|e| e.id.clone()).collect();
        curated.sort();
        let mut tools = tool_list();
        if let Some(c) = &cluster {
            tools.extend(cluster_tools(c.cluster.is_live()));
        }
        let cores = std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get);
        KubewhyServer {
            engine,
            tools: Arc::new(tools),
            curated: Arc::new(curated),
            cluster,
            base_url: None,
            quick: Arc::new(tokio::sync::Semaphore::new(cores)),
            answers: Arc::new(answer_cache()),
            runs: Arc::default(),
        }
    }

    /// Sets the reference site's base URL (normalised, see [`site::normalize_base_url`]): tool
    /// answers then carry `url` links to entity pages beside their `uri`s.
    pub fn with_base_url(mut self, base_url: Option<String>) -> KubewhyServer {
        self.base_url = base_url.map(Arc::from);
        // Kept answers carry the old base URL's links (and clones share the cache).
        self.answers = Arc::new(answer_cache());
        self
    }

    /// The engine.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// Every tool definition, in listing order.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// Calls a tool as `tools/call` would, on a blocking thread; a panic becomes an error result.
    /// A quick tool ([`QUICK_TOOLS`]) waits for one of one-per-core permits, and its answer is
    /// kept for identical calls ([`ANSWER_CACHE_BYTES`]).
    ///
    /// # Errors
    /// An invalid-params protocol error for an unknown tool name.
    pub async fn call(&self, name: &str, arguments: Option<JsonObject>) -> Result<CallToolResult, McpError> {
        let engine = self.engine.clone();
        let owned = name.to_string();
        let args = arguments.unwrap_or_default();
        if let (Some(access), "verify_cluster" | "scan_cluster") = (&self.cluster, name) {
            let result = match check_sizes(&args) {
                Err(e) => Err(e),
                Ok(()) if name == "verify_cluster" => match parse(name, args) {
                    Ok(p) => cluster::verify_cluster(&engine, access, p).await,
                    Err(e) => Err(e),
                },
                Ok(()) => match parse(name, args) {
                    Ok(p) => cluster::scan_cluster(&engine, access, p).await,
                    Err(e) => Err(e),
                },
            };
            return Ok(match result {
                Ok((structured, markdown)) => structured_answer(structured, markdown),
                Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
            });
        }
        let quick = QUICK_TOOLS.contains(&name);
        // The tool and its arguments (a JSON object's keys come out sorted), when it is quick.
        let key = quick.then(|| format!("{name}\n{}", serde_json::to_string(&args).unwrap_or_default()));
        // A call like one already running waits for its answer instead of running the tool again.
        let guard = match &key {
            Some(k) => match self.answers.get_value_or_guard_async(k.as_str()).await {
                Ok(kept) => return Ok((*kept.result).clone()),
                Err(guard) => Some(guard),
            },
            None => None,
        };
        let permit = if quick {
            self.runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            // Never closed, so acquiring fails only if it were; then run without a permit.
            self.quick.acquire().await.ok()
        } else {
            None
        };
        let joined = tokio::task::spawn_blocking(move || run_tool(&engine, &owned, args)).await;
        drop(permit);
        let result = match joined {
            Ok(Some(r)) => r,
            Ok(None) => return Err(McpError::invalid_params(format!("unknown tool `{name}`; tools: {}", tool_names().join(", ")), None)),
            Err(e) => {
                tracing::error!(tool = name, error = %e, "tool panicked");
                Err(format!("internal error in `{name}`; the server keeps running: {e}"))
            }
        };
        Ok(match result {
            Ok(mut a) => {
                if let Some(base) = &self.base_url {
                    site::add_resource_urls(&mut a.structured, base);
                }
                let r = structured_answer(a.structured, a.markdown);
                if let Some(guard) = guard {
                    let bytes = answer_bytes(&r);
                    // Err only when the answer was evicted meanwhile; then it is not kept.
                    let _ = guard.insert(CachedAnswer { result: Arc::new(r.clone()), bytes });
                }
                r
            }
            Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
        })
    }

    /// One page of curated-entity resources: starting after `cursor` (an offset), in id order.
    ///
    /// # Errors
    /// Invalid params for a cursor this server did not issue.
    pub fn resource_page(&self, cursor: Option<&str>) -> Result<ListResourcesResult, McpError> {
        let start = match cursor {
            None => 0,
            Some(c) => c.parse::<usize>().ok().filter(|n| *n <= self.curated.len()).ok_or_else(|| McpError::invalid_params(format!("invalid cursor `{c}`"), None))?,
        };
        let kb = self.engine.knowledge();
        let end = (start + RESOURCE_PAGE_SIZE).min(self.curated.len());
        let resources = self.curated[start..end]
            .iter()
            .filter_map(|id| kb.get(id))
            .map(|e| Resource::new(uri_of(&e.id), e.id.clone()).with_title(e.title.clone()).with_description(e.summary(200)).with_mime_type("text/markdown"))
            .collect();
        let mut page = ListResourcesResult::with_all_items(resources);
        page.next_cursor = (end < self.curated.len()).then(|| end.to_string());
        Ok(page)
    }

    /// The Markdown of the entity a `kubewhy://kind/slug` URI names.
    ///
    /// # Errors
    /// Resource-not-found for a URI that names no entity.
    pub fn read(&self, uri: &str) -> Result<String, McpError> {
        let id = id_of_uri(uri).ok_or_else(|| McpError::invalid_params(format!("`{uri}` is not a kubewhy resource URI (kubewhy://<kind>/<slug>)"), None))?;
        let e = self.engine.knowledge().get(id).ok_or_else(|| McpError::resource_not_found(format!("no entity `{id}`"), Some(serde_json::json!({ "uri": uri }))))?;
        let (out, inc) = self.engine.graph().relations(&e.id);
        let rel = |v: Vec<kubewhy_engine::graph::Relation>| -> Vec<wire::Related> {
            v.into_iter()
                .map(|r| {
                    let o = self.engine.knowledge().get(&r.id);
                    wire::Related { property: r.property, kind: o.map(|o| o.kind.prefix().to_string()).unwrap_or_default(), title: o.map(|o| o.title.clone()).unwrap_or_else(|| r.id.clone()), id: r.id }
                })
                .collect()
        };
        Ok(tools::entity_markdown(e, &rel(out), &rel(inc), None))
    }

    fn complete_values(&self, req: &CompleteRequestParams) -> Vec<String> {
        let kb = self.engine.knowledge();
        let value = req.argument.value.trim().to_lowercase();
        let arg = req.argument.name.as_str();
        let matches = |s: &str| s.to_lowercase().starts_with(&value) || (value.len() >= 3 && s.to_lowercase().contains(&value));
        let ids_of = |kinds: &[Kind]| -> Vec<String> { kb.entities().iter().filter(|e| kinds.contains(&e.kind)).map(|e| e.id.clone()).filter(|id| matches(id) || matches(id.split_once('/').map(|x| x.1).unwrap_or(id))).collect() };
        let mut values = match (&req.r#ref, arg) {
            (Reference::Prompt(p), "component") if p.name == "explain_component" => {
                let mut v = ids_of(&[Kind::Component]);
                if v.is_empty() || value.contains('/') {
                    v.extend(ids_of(&[Kind::Loop, Kind::FailureMode, Kind::Concept, Kind::Field, Kind::Metric]));
                }
                v
            }
            (Reference::Prompt(p), "symptom") if p.name == "diagnose_symptom" => {
                kb.entities().iter().filter_map(|e| e.symptom().and_then(|s| s.text.clone())).filter(|t| matches(t)).collect()
            }
            (Reference::Resource(_), "kind") => Kind::ALL.iter().map(|k| k.prefix().to_string()).filter(|k| matches(k)).collect(),
            (Reference::Resource(_), "slug") => {
                let kind = req.context.as_ref().and_then(|c| c.get_argument("kind")).and_then(|k| Kind::from_prefix(k));
                kb.entities()
                    .iter()
                    .filter(|e| kind.is_none_or(|k| e.kind == k))
                    .map(|e| e.slug().to_string())
                    .filter(|s| matches(s))
                    .collect()
            }
            _ => Vec::new(),
        };
        values.sort();
        values.dedup();
        values
    }

    fn prompts() -> Vec<Prompt> {
        vec![
            Prompt::new("diagnose_symptom", Some("Diagnose a Kubernetes symptom with kubewhy and explain the mechanism"), Some(vec![PromptArgument::new("symptom").with_description("The error message, events, describe output or question").with_required(true)])),
            Prompt::new("explain_component", Some("Explain a Kubernetes component, its control loops and how they fail"), Some(vec![PromptArgument::new("component").with_description("A component id or name (component/kubelet, kube-scheduler)").with_required(true)])),
            Prompt::new("review_answer", Some("Review an answer about Kubernetes against kubewhy's graph before giving it"), Some(vec![PromptArgument::new("answer").with_description("The answer text to review").with_required(true)])),
        ]
    }

    fn prompt(&self, name: &str, args: &JsonObject) -> Result<GetPromptResult, McpError> {
        let arg = |n: &str| -> Result<String, McpError> {
            let v = args.get(n).and_then(|v| v.as_str()).map(str::trim).filter(|v| !v.is_empty()).ok_or_else(|| McpError::invalid_params(format!("prompt `{name}` needs the argument `{n}`"), None))?;
            if v.len() > MAX_ARGUMENT_BYTES {
                return Err(McpError::invalid_params(format!("argument `{n}` is over 1 MiB"), None));
            }
            Ok(v.to_string())
        };
        let (description, text) = match name {
            "diagnose_symptom" => {
                let symptom = arg("symptom")?;
                let context = tools::diagnose(&self.engine, wire::DiagnoseParams { symptom: symptom.clone(), k8s_version: None, top: Some(3), detail: None }).map(|a| a.markdown).unwrap_or_else(|e| e);
                (
                    "Diagnose a symptom",
                    format!("A Kubernetes cluster shows this symptom:\n\n```\n{symptom}\n```\n\nkubewhy's first diagnosis is below. Explain the most likely mechanism (which component and control loop, and why), say which check tells the candidates apart, and give the safest fix. Use the kubewhy tools (`diagnose` with `detail: \"full\"`, `explain`, `query_graph`) for more, and do not state facts the graph does not support.\n\n{context}"),
                )
            }
            "explain_component" => {
                let component = arg("component")?;
                let context = tools::explain(&self.engine, wire::ExplainParams { id_or_name: component.clone() }).map(|a| a.markdown).unwrap_or_else(|e| e);
                ("Explain a component", format!("Explain the Kubernetes component `{component}` to an operator: what it does, its control loops, what they read and write, the metrics to watch and the ways it fails. Ground every statement in kubewhy's graph (below, and the `explain`/`search` tools).\n\n{context}"))
            }
            "review_answer" => {
                let answer = arg("answer")?;
                let context = tools::check_claims(&self.engine, wire::CheckClaimsParams { text: answer.clone() }).map(|a| a.markdown).unwrap_or_else(|e| e);
                ("Review an answer", format!("Review this answer about Kubernetes before it is given. Correct every contradicted claim, flag the unknown ones, and check the named mechanism with kubewhy's `diagnose` and `explain` tools.\n\nAnswer:\n\n{answer}\n\nkubewhy's claim check:\n\n{context}"))
            }
            other => return Err(McpError::invalid_params(format!("unknown prompt `{other}`; prompts: diagnose_symptom, explain_component, review_answer"), None)),
        };
        Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]).with_description(description))
    }
}

impl ServerHandler for KubewhyServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_completions().enable_prompts().enable_resources().enable_tools().build())
            .with_server_info(Implementation::new("kubewhy", env!("CARGO_PKG_VERSION")).with_title("kubewhy").with_description("Kubernetes symptom → mechanism, from a curated knowledge graph"))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(&self, _request: Option<PaginatedRequestParams>, _context: RequestContext<RoleServer>) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(&self, request: CallToolRequestParams, _context: RequestContext<RoleServer>) -> Result<CallToolResponse, McpError> {
        self.call(&request.name, request.arguments).await.map(CallToolResponse::from)
    }

    async fn list_resources(&self, request: Option<PaginatedRequestParams>, _context: RequestContext<RoleServer>) -> Result<ListResourcesResult, McpError> {
        self.resource_page(request.as_ref().and_then(|r| r.cursor.as_deref()))
    }

    async fn list_resource_templates(&self, _request: Option<PaginatedRequestParams>, _context: RequestContext<RoleServer>) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![ResourceTemplate::new(RESOURCE_TEMPLATE, "entity")
            .with_title("kubewhy entity")
            .with_description("Any entity of the graph by kind and slug, e.g. kubewhy://failure-mode/etcd-nospace-alarm, kubewhy://feature-gate/SidecarContainers, kubewhy://kep/753")
            .with_mime_type("text/markdown")]))
    }

    async fn read_resource(&self, request: ReadResourceRequestParams, _context: RequestContext<RoleServer>) -> Result<ReadResourceResponse, McpError> {
        let this = self.clone();
        let uri = request.uri.clone();
        let text = tokio::task::spawn_blocking(move || this.read(&uri)).await.map_err(|e| McpError::internal_error(format!("reading the resource failed: {e}"), None))??;
        Ok(ReadResourceResult::new(vec![ResourceContents::text(text, request.uri).with_mime_type("text/markdown")]).into())
    }

    async fn list_prompts(&self, _request: Option<PaginatedRequestParams>, _context: RequestContext<RoleServer>) -> Result<ListPromptsResult, McpError> {
        Ok(ListPromptsResult::with_all_items(Self::prompts()))
    }

    async fn get_prompt(&self, request: GetPromptRequestParams, _context: RequestContext<RoleServer>) -> Result<GetPromptResponse, McpError> {
        let this = self.clone();
        let args = request.arguments.unwrap_or_default();
        let name = request.name;
        tokio::task::spawn_blocking(move || this.prompt(&name, &args)).await.map_err(|e| McpError::internal_error(format!("the prompt failed: {e}"), None))?.map(GetPromptResponse::from)
    }

    async fn complete(&self, request: CompleteRequestParams, _context: RequestContext<RoleServer>) -> Result<CompleteResult, McpError> {
        let values = self.complete_values(&request);
        let total = values.len();
        let shown: Vec<String> = values.into_iter().take(CompletionInfo::MAX_VALUES).collect();
        let info = CompletionInfo::with_pagination(shown, Some(u32::try_from(total).unwrap_or(u32::MAX)), total > CompletionInfo::MAX_VALUES).map_err(|e| McpError::internal_error(e, None))?;
        Ok(CompleteResult::new(info))
    }
}

/// Serves MCP over stdin/stdout until the client closes the stream. Logs go to stderr (the
/// caller's subscriber); nothing else is written to stdout.
///
/// # Errors
/// The handshake or the transport failed.
pub async fn serve_stdio(engine: Arc<Engine>) -> anyhow::Result<()> {
    serve_stdio_with(KubewhyServer::new(engine)).await
}

/// Like [`serve_stdio`], with a configured server (e.g. [`KubewhyServer::with_base_url`]).
///
/// # Errors
/// The handshake or the transport failed.
pub async fn serve_stdio_with(server: KubewhyServer) -> anyhow::Result<()> {
    let service = server.serve(jsonrpc::StdioTransport::new(tokio::io::stdin(), tokio::io::stdout())).await?;
    service.waiting().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};
    use std::sync::atomic::Ordering;
    use std::sync::OnceLock;

    /// The engine over the built-in knowledge, loaded once for these tests.
    fn engine() -> Arc<Engine> {
        static ENGINE: OnceLock<Arc<Engine>> = OnceLock::new();
        ENGINE.get_or_init(|| Arc::new(Engine::from_sources(kubewhy_engine::knowledge::sources_from(kubewhy_knowledge::files())).expect("built-in knowledge loads").0)).clone()
    }

    /// Calls `tool` with `arguments`; the whole result as JSON, to compare answers.
    async fn call(server: &KubewhyServer, tool: &str, arguments: Value) -> Value {
        let r = server.call(tool, arguments.as_object().cloned()).await.expect("a tool result");
        serde_json::to_value(&r).expect("a result serialises")
    }

    fn runs(server: &KubewhyServer) -> u64 {
        server.runs.load(Ordering::Relaxed)
    }

    #[tokio::test]
    async fn a_repeated_call_is_answered_from_the_kept_answer_and_errors_are_not_kept() {
        let server = KubewhyServer::new(engine());
        let cpu = json!({ "symptom": "0/3 nodes are available: 3 Insufficient cpu." });
        let first = call(&server, "diagnose", cpu.clone()).await;
        assert_eq!(first["isError"], false);
        assert!(first["structuredContent"]["candidates"].is_array(), "{first}");
        assert_eq!(runs(&server), 1);
        let again = call(&server, "diagnose", cpu.clone()).await;
        assert_eq!(runs(&server), 1, "the second call ran the tool again");
        assert_eq!(first, again);
        // What a server with nothing kept answers.
        assert_eq!(call(&KubewhyServer::new(engine()), "diagnose", cpu).await, again);
        // Every argument is part of the key.
        let top1 = call(&server, "diagnose", json!({ "symptom": "0/3 nodes are available: 3 Insufficient cpu.", "top": 1 })).await;
        assert_eq!(runs(&server), 2);
        assert_ne!(top1, first);
        // Another tool is another key; its repeated call is kept too.
        for _ in 0..2 {
            call(&server, "search", json!({ "text": "Insufficient cpu" })).await;
        }
        assert_eq!(runs(&server), 3);
        // An error result is not kept: each call runs the tool.
        for _ in 0..2 {
            assert_eq!(call(&server, "diagnose", json!({ "symptom": "   " })).await["isError"], true);
        }
        assert_eq!(runs(&server), 5);
        // A tool that is not quick is neither counted nor kept.
        for _ in 0..2 {
            call(&server, "query_graph", json!({ "sparql": "ASK { ?s ?p ?o }" })).await;
        }
        assert_eq!(runs(&server), 5);
        assert_eq!(server.answers.len(), 3, "two diagnose answers and one search answer are kept");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn identical_calls_at_once_run_the_tool_once() {
        let server = KubewhyServer::new(engine());
        let calls: Vec<_> = (0..16)
            .map(|_| {
                let s = server.clone();
                tokio::spawn(async move { call(&s, "diagnose", json!({ "symptom": "Back-off restarting failed container" })).await })
            })
            .collect();
        let mut answers = Vec::new();
        for c in calls {
            answers.push(c.await.expect("the call task ends"));
        }
        assert_eq!(runs(&server), 1, "16 identical calls at once ran the tool more than once");
        assert!(answers.iter().all(|a| *a == answers[0]));
        assert_eq!(answers[0]["isError"], false);
    }

    #[tokio::test]
    async fn a_new_base_url_does_not_reuse_answers_kept_without_it() {
        let server = KubewhyServer::new(engine());
        let q = json!({ "symptom": "etcdserver: mvcc: database space exceeded" });
        let plain = call(&server, "diagnose", q.clone()).await;
        assert!(!plain.to_string().contains("https://kubewhy.example/"));
        let linked = call(&server.clone().with_base_url(Some("https://kubewhy.example/".into())), "diagnose", q).await;
        assert!(linked.to_string().contains("https://kubewhy.example/"), "the answer has no links under the new base URL");
    }
}
