//! The `kubewhy` command line: argument parsing (clap), output formatting and exit codes.
//! Every subcommand is a thin shell over [`kubewhy_engine`]; no domain logic lives here.
//!
//! Exit codes: 0 success; 1 the command ran and found a problem (lint errors, an
//! unknown entity, a failed query); 2 bad usage or bad input (clap errors, empty
//! or oversized input, unreadable files); 3 the knowledge could not be loaded; 4 (`scan`,
//! `verify`) the cluster could not be read at all. `scan` exits 1 when a failure mode holds
//! and `verify` when a candidate's probe holds (see [`cluster`]).
//! A closed stdout (broken pipe) is not an error.

pub mod cluster;
pub mod completions;
pub mod kubectl;
mod render;

use anyhow::Context as _;
use clap::{Parser, Subcommand, ValueEnum};
use kubewhy_engine::diagnose::DiagnoseOptions;
use kubewhy_engine::graph::QueryLimits;
use kubewhy_engine::knowledge::{self, Diagnostic, Severity, SourceFile};
use kubewhy_engine::model::{Kind, Version};
use kubewhy_engine::Engine;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::Duration;

/// Exit code: success.
pub const EXIT_OK: i32 = 0;
/// Exit code: the command ran and found a problem.
pub const EXIT_PROBLEM: i32 = 1;
/// Exit code: bad usage or bad input.
pub const EXIT_USAGE: i32 = 2;
/// Exit code: the knowledge could not be loaded.
pub const EXIT_KNOWLEDGE: i32 = 3;

/// kubewhy: why is my Kubernetes cluster doing this?
#[derive(Debug, Parser)]
#[command(name = "kubewhy", version, about, long_about = None, max_term_width = 100)]
pub struct Cli {
    /// Also load this directory of knowledge files on top of the built-in graph (your own runbooks).
    #[arg(long, global = true, value_name = "DIR")]
    pub knowledge: Option<PathBuf>,
    /// Do not load the built-in knowledge: use only --knowledge DIR (to try edits without rebuilding).
    #[arg(long, global = true, requires = "knowledge")]
    pub no_builtin: bool,
    /// When to colour text output (auto: only on a terminal, and never when NO_COLOR is set).
    #[arg(long, global = true, value_enum, default_value_t = ColorWhen::Auto)]
    pub color: ColorWhen,
    /// Base URL of the reference site (`kubewhy serve` or an export): JSON of why, explain and
    /// search, and MCP answers of mcp and serve, then carry `url` links to entity pages.
    #[arg(long, global = true, env = "KUBEWHY_BASE_URL", value_name = "URL", value_parser = parse_base_url)]
    pub base_url: Option<String>,
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

/// `--color` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    /// Colour on a terminal unless NO_COLOR is set.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Output {
    /// Readable text.
    Text,
    /// One JSON document.
    Json,
    /// Markdown.
    Markdown,
}

/// Output formats of `sparql`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SparqlOutput {
    /// An aligned table (N-Triples for CONSTRUCT/DESCRIBE).
    Table,
    /// JSON.
    Json,
    /// CSV (SELECT only).
    Csv,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Diagnose a symptom: an error, event lines, `kubectl describe` output or a question.
    Why {
        /// The symptom text; `-` reads standard input. Several words are joined with spaces.
        #[arg(required = true, num_args = 1.., value_name = "TEXT")]
        text: Vec<String>,
        /// The cluster's Kubernetes version ("1.30"); failure modes that do not apply to it are left out.
        #[arg(long = "k8s-version", value_name = "VERSION", value_parser = parse_version)]
        k8s_version: Option<Version>,
        /// How many candidates to show.
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u16).range(1..=50))]
        top: u16,
        /// Output format.
        #[arg(long, short, value_enum, default_value_t = Output::Text)]
        output: Output,
        /// Text output: every check, fix, reference and piece of evidence of every candidate.
        #[arg(long, short)]
        verbose: bool,
    },
    /// Show one entity (by id, name, alias or words) with its relations both ways.
    Explain {
        /// An id (`component/kubelet`), a name (`kubelet`, "watch cache") or words.
        #[arg(required = true, num_args = 1.., value_name = "ID_OR_NAME")]
        query: Vec<String>,
        /// Output format.
        #[arg(long, short, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// Full-text search over the graph.
    Search {
        /// Words to search for.
        #[arg(required = true, num_args = 1.., value_name = "TEXT")]
        text: Vec<String>,
        /// Only entities of this kind (component, loop, field, metric, failure-mode, symptom, check, fix, concept, myth).
        #[arg(long, value_parser = parse_kind)]
        kind: Option<Kind>,
        /// How many hits to show.
        #[arg(long, default_value_t = 10)]
        limit: usize,
        /// Output format.
        #[arg(long, short, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// Run a read-only SPARQL query (SELECT, ASK, CONSTRUCT, DESCRIBE). Prefixes kw:, id:, rdf:, rdfs: and one per kind (failure-mode:, component:, ...) are predeclared.
    Sparql {
        /// The query; `-` reads standard input, `@FILE` reads a file.
        #[arg(value_name = "QUERY")]
        query: String,
        /// Output format.
        #[arg(long, short, value_enum, default_value_t = SparqlOutput::Table)]
        output: SparqlOutput,
        /// Time limit in seconds.
        #[arg(long, default_value_t = 10)]
        timeout: u64,
        /// Row limit.
        #[arg(long, default_value_t = 10_000)]
        max_rows: usize,
    },
    /// Check knowledge files: unknown keys, duplicate ids, dangling references, bad versions, missing fields.
    Lint {
        /// Your runbooks, checked on top of the built-in graph (their references to built-in ids resolve); a whole knowledge directory (with `ontology.ttl` or `generated/`), or any directory with --no-builtin, is checked alone. Without DIR: the built-in knowledge (plus --knowledge).
        #[arg(value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Output format (text or json).
        #[arg(long, short, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// Counts of entities per kind and of failure modes per area.
    Stats {
        /// Output format.
        #[arg(long, short, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// A feature gate: its stage and default at a version, its whole lifecycle and its KEP.
    Gate {
        /// The gate's name, e.g. SidecarContainers.
        name: String,
        /// The Kubernetes version to state the gate at ("1.30").
        #[arg(long = "k8s-version", value_name = "VERSION", value_parser = parse_version)]
        k8s_version: Option<Version>,
        /// Output format.
        #[arg(long, short, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// A KEP by number (753, KEP-753) or by words of its title.
    Kep {
        /// A number or title words.
        #[arg(required = true, num_args = 1.., value_name = "NUMBER_OR_WORDS")]
        query: Vec<String>,
        /// Output format.
        #[arg(long, short, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// A metric: its component, type, stability, labels, what a bad value means and related failure modes.
    Metric {
        /// The metric's name.
        name: String,
        /// Output format.
        #[arg(long, short, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// Run the gold cases and report top-1, top-3 and MRR (or grade assistants' answers: `eval grade`).
    Eval {
        /// `grade ANSWERS.jsonl` grades free-text answers instead of running the engine.
        #[command(subcommand)]
        action: Option<EvalAction>,
        /// Directory (or file) of gold cases (*.jsonl).
        #[arg(long, default_value = "evals/cases", value_name = "DIR")]
        cases: PathBuf,
        /// The realworld slice (reported apart from the gold set).
        #[arg(long, default_value = "evals/realworld/cases.jsonl", value_name = "FILE")]
        realworld: PathBuf,
        /// The cause slice: directory (or file) of cases that expect a specific cause (reported apart, gated).
        #[arg(long, default_value = "evals/causes", value_name = "DIR")]
        causes: PathBuf,
        /// The real-world ledger (reported apart, gated, with its before-rate per batch).
        #[arg(long, default_value = "evals/realworld/ledger.jsonl", value_name = "FILE")]
        ledger: PathBuf,
        /// Where report.json and report.md are written (and the committed report is read).
        #[arg(long, default_value = "evals/reports", value_name = "DIR")]
        reports: PathBuf,
        /// Do not write the report: compare with the committed one and apply the CI gates.
        #[arg(long)]
        check: bool,
        /// Output format.
        #[arg(long, short, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// Check the claims in a text (gates, KEPs, metrics, versions) against the graph. FILE or `-` for stdin.
    CheckClaims {
        /// A file, or `-` for standard input.
        #[arg(value_name = "FILE")]
        file: String,
        /// Output format.
        #[arg(long, short, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// Regenerate knowledge/generated/ from the upstream data folder (shared/upstream).
    ImportUpstream {
        /// The upstream data folder (with kubernetes/, keps/, etcd/, coredns/, kube-state-metrics/).
        #[arg(value_name = "DIR")]
        dir: PathBuf,
        /// The knowledge directory to write generated/ into.
        #[arg(long, default_value = "knowledge", value_name = "KNOWLEDGE_DIR")]
        out: PathBuf,
        /// Only compare: exit 1 when a generated file would change.
        #[arg(long)]
        check: bool,
    },
    /// Check a cluster (or a snapshot) for every known failure mode, read-only; findings grouped by failure mode with mechanism, evidence and fixes.
    Scan(cluster::ScanArgs),
    /// Confirm a diagnosis against a cluster (read-only): `verify "<symptom>"` re-ranks the candidates by evidence; `verify pod/NAME -n NS` diagnoses one object.
    Verify(cluster::VerifyArgs),
    /// Serve MCP over stdin/stdout (for Claude Code and other MCP clients). Logs go to stderr.
    Mcp {
        /// Cluster access for the `verify_cluster` and `scan_cluster` tools.
        #[command(flatten)]
        cluster: cluster::McpClusterArgs,
    },
    /// Serve MCP over streamable HTTP at /mcp (loopback only by default).
    Serve {
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1:8787", value_name = "ADDR")]
        listen: std::net::SocketAddr,
        /// A file holding the bearer token clients must send (also: env KUBEWHY_AUTH_TOKEN).
        #[arg(long, value_name = "FILE")]
        auth_token_file: Option<PathBuf>,
        /// Also allow this browser Origin (scheme://host:port; `:*` for any port). Repeatable.
        #[arg(long = "allow-origin", value_name = "ORIGIN")]
        allow_origins: Vec<String>,
        /// Also allow this Host name (needed behind a proxy or when listening on 0.0.0.0). Repeatable.
        #[arg(long = "allow-host", value_name = "HOST")]
        allow_hosts: Vec<String>,
        /// With a token: serve the read-only reference site (pages, /sparql, /diagnose) without it; /mcp still needs it.
        #[arg(long)]
        public_site: bool,
        /// Listen beyond loopback without a bearer token (refused otherwise): anyone who reaches the address can use every tool.
        #[arg(long)]
        insecure_no_auth_on_non_loopback: bool,
        /// Most MCP sessions held at once; an `initialize` beyond gets 503 with Retry-After.
        #[arg(long, default_value_t = 1_000, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100_000))]
        max_sessions: u32,
        /// Most open connections; more are closed at once.
        #[arg(long, default_value_t = 512, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=65_536))]
        max_connections: u32,
        /// Cluster access for the `verify_cluster` and `scan_cluster` tools.
        #[command(flatten)]
        cluster: cluster::McpClusterArgs,
    },
    /// The reference site: `site export DIR` writes it as static files.
    Site {
        /// What to do.
        #[command(subcommand)]
        action: SiteAction,
    },
    /// Write the whole graph as RDF.
    Export {
        /// turtle, ntriples, nquads or rdfxml.
        #[arg(long, default_value = "turtle")]
        format: String,
    },
    /// Print a shell completion script: `kubewhy completions bash > /etc/bash_completion.d/kubewhy`.
    Completions {
        /// The shell.
        #[arg(value_enum, value_name = "SHELL")]
        shell: completions::Shell,
    },
    /// Write man pages (kubewhy.1, one per subcommand, kubectl-why.1) into DIR.
    Manpages {
        /// The output directory (created when missing).
        #[arg(value_name = "DIR")]
        dir: PathBuf,
    },
}

/// `site` sub-actions.
#[derive(Debug, Subcommand)]
pub enum SiteAction {
    /// Write the whole site (pages, search index, assets, graph.ttl) into DIR for any static host.
    Export {
        /// The output directory (created when missing; existing files are overwritten).
        #[arg(value_name = "DIR")]
        dir: PathBuf,
        /// Serve under this absolute path (`/kubewhy/`) instead of writing relative links.
        #[arg(long, value_name = "PATH")]
        base_path: Option<String>,
    },
}

/// `eval` sub-actions.
#[derive(Debug, Subcommand)]
pub enum EvalAction {
    /// Grade free-text answers (JSON Lines of {"id", "answer"}) against the cases they answer.
    Grade {
        /// The answers file.
        #[arg(value_name = "ANSWERS.jsonl")]
        answers: PathBuf,
        /// Directory (or file) of the cases answered.
        #[arg(long, default_value = "evals/cases", value_name = "DIR")]
        cases: PathBuf,
        /// The realworld slice, also searched for case ids.
        #[arg(long, default_value = "evals/realworld/cases.jsonl", value_name = "FILE")]
        realworld: PathBuf,
        /// Output format.
        #[arg(long, short, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
}

fn parse_version(s: &str) -> Result<Version, String> {
    Version::parse(s)
}

fn parse_base_url(s: &str) -> Result<String, String> {
    kubewhy_mcp::site::normalize_base_url(s)
}

/// Pretty JSON of `value`, with `url` links to entity pages when a base URL is set.
fn linked_json<T: serde::Serialize>(value: &T, base_url: Option<&str>) -> anyhow::Result<String> {
    let mut v = serde_json::to_value(value)?;
    if let Some(base) = base_url {
        kubewhy_mcp::site::add_urls(&mut v, base);
    }
    Ok(serde_json::to_string_pretty(&v)? + "\n")
}

fn parse_kind(s: &str) -> Result<Kind, String> {
    Kind::from_prefix(s).ok_or_else(|| {
        format!("unknown kind `{s}` (one of {})", Kind::ALL.iter().map(|k| k.prefix()).collect::<Vec<_>>().join(", "))
    })
}

/// The knowledge files embedded in the binary, as [`SourceFile`]s sorted by path.
pub fn builtin_sources() -> Vec<SourceFile> {
    knowledge::sources_from(kubewhy_knowledge::files())
}

/// Environment variable naming a file of compiled knowledge (`Engine::compile` output) to use
/// instead of the one built into the binary: for benchmarks over other graphs (issue 13) and
/// for trying a compiled graph without rebuilding. Unset in normal use.
pub const COMPILED_ENV: &str = "KUBEWHY_COMPILED";

/// The compiled built-in knowledge: the file [`COMPILED_ENV`] names, else the bytes the build
/// embedded (empty when the built-in knowledge had errors at build time).
///
/// # Errors
/// When [`COMPILED_ENV`] names a file that cannot be read.
pub fn compiled_builtin() -> anyhow::Result<std::borrow::Cow<'static, [u8]>> {
    match std::env::var_os(COMPILED_ENV).filter(|v| !v.is_empty()) {
        Some(path) => std::fs::read(&path)
            .map(std::borrow::Cow::Owned)
            .map_err(|e| anyhow::anyhow!("cannot read compiled knowledge {} (from {COMPILED_ENV}): {e}", std::path::Path::new(&path).display())),
        None => Ok(std::borrow::Cow::Borrowed(kubewhy_compiled::KNOWLEDGE)),
    }
}

/// Loads the built-in knowledge plus an optional directory on top.
///
/// The built-in knowledge comes compiled (parsed, validated and indexed when the binary was
/// built); only the directory is parsed at run time. Returns the engine and the warnings.
///
/// # Errors
/// When the directory cannot be read, or the knowledge has errors (all listed).
pub fn load_engine(extra: Option<&std::path::Path>) -> anyhow::Result<(Engine, Vec<Diagnostic>)> {
    load_engine_with(extra, true)
}

/// Like [`load_engine`], optionally without the built-in knowledge (then `extra` is the whole knowledge).
///
/// # Errors
/// When the directory cannot be read, or the knowledge has errors (all listed).
pub fn load_engine_with(extra: Option<&std::path::Path>, builtin: bool) -> anyhow::Result<(Engine, Vec<Diagnostic>)> {
    let more = match extra {
        Some(dir) => {
            let prefix = dir.display().to_string();
            let files = knowledge::read_dir(dir)?;
            if builtin {
                files.into_iter().map(|f| SourceFile { path: format!("{prefix}/{}", f.path), text: f.text }).collect()
            } else {
                files
            }
        }
        None => Vec::new(),
    };
    let compiled = if builtin { compiled_builtin()? } else { std::borrow::Cow::Borrowed(&[][..]) };
    let loaded = if !compiled.is_empty() {
        if more.is_empty() {
            Engine::from_compiled(compiled).map(|e| (e, Vec::new()))
        } else {
            Engine::from_compiled_with_overlay(compiled, more)
        }
    } else {
        // No compiled knowledge (`--no-builtin`, or built-in knowledge with errors): parse.
        let mut files = if builtin { builtin_sources() } else { Vec::new() };
        files.extend(more);
        Engine::from_sources(files)
    };
    match loaded {
        Ok(x) => Ok(x),
        Err(kubewhy_engine::EngineError::Invalid(diags)) => {
            let list: Vec<String> = diags.iter().filter(|d| d.severity == Severity::Error).map(|d| d.to_string()).collect();
            anyhow::bail!("the knowledge has {} error(s):\n{}", list.len(), list.join("\n"))
        }
        Err(e) => Err(e.into()),
    }
}

/// Where command output goes, with colour decided once.
pub struct Io<'a> {
    /// Standard input (for `-`).
    pub stdin: &'a mut dyn Read,
    /// Standard output.
    pub stdout: &'a mut dyn Write,
    /// Standard error.
    pub stderr: &'a mut dyn Write,
    /// Whether stdout is a terminal (used by `--color auto`).
    pub stdout_is_terminal: bool,
    /// Whether stderr is a terminal (progress bars are drawn only then).
    pub stderr_is_terminal: bool,
}

fn color_enabled(when: ColorWhen, is_tty: bool) -> bool {
    match when {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto => is_tty && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    }
}

fn write_out(io: &mut Io<'_>, text: &str, color: bool) -> std::io::Result<()> {
    if color {
        io.stdout.write_all(escape_controls(text, true).as_bytes())
    } else {
        let plain = anstream::adapter::strip_str(text).to_string();
        io.stdout.write_all(escape_controls(&plain, false).as_bytes())
    }
}

/// Makes text safe for a terminal (issue 16): control characters other than newline and tab
/// (an `ESC[2J` in an event reason or a file name) are written visibly as `\u{1b}`. With
/// `keep_sgr`, our own colour sequences (`ESC[...m`) are kept.
pub fn escape_controls(text: &str, keep_sgr: bool) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\u{1b}' && keep_sgr {
            let rest = &text[i + 1..];
            let sgr = rest.strip_prefix('[').map(|r| r.chars().take_while(|c| c.is_ascii_digit() || *c == ';').count()).filter(|&n| rest[1 + n..].starts_with('m'));
            if let Some(n) = sgr {
                out.push_str(&text[i..i + n + 3]);
                for _ in 0..n + 2 {
                    chars.next();
                }
                continue;
            }
        }
        if c.is_control() && c != '\n' && c != '\t' {
            out.push_str(&c.escape_unicode().to_string());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Largest input read from stdin or a file argument, in bytes (the diagnosis limit).
pub const MAX_INPUT_BYTES: u64 = kubewhy_engine::diagnose::MAX_INPUT_BYTES as u64;

/// A notice for a version no Kubernetes release has (`0.0`, `99.99`): the filter still applies
/// as asked.
fn version_notice(v: Version) -> Option<String> {
    (v.major != 1 || v.minor > 60).then(|| format!("notice: Kubernetes {}.{} is not a known release (1.x); version filtering applies as given", v.major, v.minor))
}

fn read_text(words: &[String], stdin: &mut dyn Read) -> anyhow::Result<String> {
    if words.len() == 1 && words[0] == "-" {
        // Bounded before reading (issue 16): at most MAX_INPUT_BYTES + 1 bytes are taken.
        return kubewhy_engine::bounded::read_stream(stdin, MAX_INPUT_BYTES, "standard input", "an input").map_err(|e| fail(EXIT_USAGE, e.to_string()));
    }
    Ok(words.join(" "))
}

/// Reads a file argument (a query file, a claims file): a regular file of at most
/// [`MAX_INPUT_BYTES`] bytes of UTF-8 text.
fn read_input_file(path: &std::path::Path) -> anyhow::Result<String> {
    kubewhy_engine::bounded::read_file(path, MAX_INPUT_BYTES, "an input file").map_err(|e| fail(EXIT_USAGE, e.to_string()))
}

/// Runs the CLI with parsed arguments; returns the exit code. Errors are written to `io.stderr`.
pub fn run(cli: Cli, io: &mut Io<'_>) -> i32 {
    match run_inner(cli, io) {
        Ok(code) => code,
        Err(e) => {
            if e.chain().any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)) {
                return EXIT_OK;
            }
            let code = e.downcast_ref::<Exit>().map(|x| x.0).unwrap_or(EXIT_USAGE);
            let _ = writeln!(io.stderr, "kubewhy: error: {}", escape_controls(&format!("{e:#}"), false));
            code
        }
    }
}

/// An error carrying its exit code.
#[derive(Debug)]
struct Exit(i32, String);

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.1)
    }
}

impl std::error::Error for Exit {}

fn fail(code: i32, msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(Exit(code, msg.into()))
}

fn engine(cli_knowledge: Option<&std::path::Path>, builtin: bool) -> anyhow::Result<Engine> {
    load_engine_with(cli_knowledge, builtin).map(|(e, _)| e).map_err(|e| fail(EXIT_KNOWLEDGE, format!("{e:#}")))
}

/// Set by the binaries (`kubewhy`, `kubectl-why`), which exit right after [`run`]: a one-shot
/// command then leaves its engine to the operating system instead of freeing it piece by
/// piece (about a tenth of a cold `why`, issue 13). Left unset in process (tests, embedders),
/// where the memory must come back.
pub static EXITS_AFTER_RUN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Ends a one-shot command's use of `engine` (see [`EXITS_AFTER_RUN`]).
fn finish(engine: Engine) {
    if EXITS_AFTER_RUN.load(std::sync::atomic::Ordering::Relaxed) {
        std::mem::forget(engine);
    }
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the async runtime")
}

fn run_inner(cli: Cli, io: &mut Io<'_>) -> anyhow::Result<i32> {
    let color = color_enabled(cli.color, io.stdout_is_terminal);
    let kdir = cli.knowledge.clone();
    let builtin = !cli.no_builtin;
    let base_url = cli.base_url.clone();
    match cli.command {
        Command::Why { text, k8s_version, top, output, verbose } => {
            let input = read_text(&text, io.stdin)?;
            if let Some(n) = k8s_version.and_then(version_notice) {
                let _ = writeln!(io.stderr, "kubewhy: {n}");
            }
            let engine = engine(kdir.as_deref(), builtin)?;
            let d = engine
                .diagnose(&input, DiagnoseOptions { k8s_version, top: usize::from(top) })
                .map_err(|e| fail(EXIT_USAGE, e.to_string()))?;
            let text = match output {
                Output::Json => linked_json(&d, base_url.as_deref())?,
                Output::Markdown => render::diagnosis_markdown(&d),
                Output::Text => render::diagnosis_text(&d, verbose),
            };
            write_out(io, &text, color && output == Output::Text)?;
            finish(engine);
            Ok(EXIT_OK)
        }
        Command::Scan(a) => cluster::scan(a, kdir.as_deref(), builtin, color, io),
        Command::Verify(a) => cluster::verify(a, kdir.as_deref(), builtin, color, io),
        Command::Mcp { cluster } => {
            let engine = std::sync::Arc::new(engine(kdir.as_deref(), builtin)?);
            let rt = runtime()?;
            let access = rt.block_on(cluster.access())?;
            rt.block_on(kubewhy_mcp::serve_stdio_with(kubewhy_mcp::KubewhyServer::with_cluster(engine, access).with_base_url(base_url)))?;
            Ok(EXIT_OK)
        }
        Command::Serve { listen, auth_token_file, allow_origins, allow_hosts, public_site, insecure_no_auth_on_non_loopback, max_sessions, max_connections, cluster } => {
            let auth_token = match auth_token_file {
                Some(f) => {
                    let t = kubewhy_engine::bounded::read_file(&f, 64 * 1024, "a token file").map_err(|e| fail(EXIT_USAGE, e.to_string()))?;
                    if t.trim().is_empty() {
                        return Err(fail(EXIT_USAGE, format!("the token file {} is empty", f.display())));
                    }
                    Some(t.trim().to_string())
                }
                None => std::env::var("KUBEWHY_AUTH_TOKEN").ok().map(|t| t.trim().to_string()).filter(|t| !t.is_empty()),
            };
            let opts = kubewhy_mcp::http::HttpOptions {
                listen,
                auth_token,
                allowed_origins: allow_origins,
                allowed_hosts: allow_hosts,
                base_url,
                public_site,
                insecure_no_auth_on_non_loopback,
                max_sessions: max_sessions as usize,
                max_connections: max_connections as usize,
                ..kubewhy_mcp::http::HttpOptions::default()
            };
            // Before loading anything: refuse an exposed listener without a token.
            kubewhy_mcp::http::check_exposure(&opts).map_err(|e| fail(EXIT_USAGE, e.to_string()))?;
            let engine = std::sync::Arc::new(engine(kdir.as_deref(), builtin)?);
            let secured = opts.auth_token.is_some();
            let stderr = &mut *io.stderr;
            let rt = runtime()?;
            let access = rt.block_on(cluster.access())?;
            rt.block_on(kubewhy_mcp::http::serve_with(engine, access, opts, |addr| {
                let _ = writeln!(stderr, "kubewhy: MCP over streamable HTTP at http://{addr}/mcp{}; reference site at http://{addr}/", if secured { " (bearer token required)" } else { "" });
                let _ = stderr.flush();
            }))?;
            Ok(EXIT_OK)
        }
        Command::Explain { query, output } => {
            let engine = engine(kdir.as_deref(), builtin)?;
            let q = query.join(" ");
            let x = engine.explain(&q).map_err(|e| fail(EXIT_PROBLEM, e.to_string()))?;
            let text = match output {
                Output::Json => linked_json(&x, base_url.as_deref())?,
                Output::Markdown => render::explanation_markdown(&x, &engine),
                Output::Text => render::explanation_text(&x),
            };
            write_out(io, &text, color && output == Output::Text)?;
            Ok(EXIT_OK)
        }
        Command::Search { text, kind, limit, output } => {
            let engine = engine(kdir.as_deref(), builtin)?;
            let kinds = kind.map(|k| vec![k]);
            let hits = engine.search(&text.join(" "), kinds.as_deref(), limit.max(1));
            let text = match output {
                Output::Json => {
                    let rows: Vec<serde_json::Value> = hits
                        .iter()
                        .filter_map(|h| engine.knowledge().get(&h.id).map(|e| (h, e)))
                        .map(|(h, e)| serde_json::json!({"id": h.id, "kind": e.kind.prefix(), "title": e.title, "score": h.score, "summary": e.summary(200)}))
                        .collect();
                    linked_json(&serde_json::json!({"query": text.join(" "), "hits": rows}), base_url.as_deref())?
                }
                _ => render::search_text(&hits, &engine, output == Output::Markdown),
            };
            write_out(io, &text, color && output == Output::Text)?;
            if hits.is_empty() {
                let _ = writeln!(io.stderr, "kubewhy: no entity matches `{}`", escape_controls(text.trim(), false));
                return Ok(EXIT_PROBLEM);
            }
            Ok(EXIT_OK)
        }
        Command::Sparql { query, output, timeout, max_rows } => {
            let q = if query == "-" {
                read_text(&["-".to_string()], io.stdin)?
            } else if let Some(path) = query.strip_prefix('@') {
                read_input_file(std::path::Path::new(path))?
            } else {
                query
            };
            let engine = engine(kdir.as_deref(), builtin)?;
            let out = engine
                .sparql(&q, QueryLimits { timeout: Duration::from_secs(timeout.max(1)), max_rows: max_rows.max(1) })
                .map_err(|e| fail(EXIT_PROBLEM, e.to_string()))?;
            let text = render::sparql(&out, output)?;
            write_out(io, &text, false)?;
            Ok(EXIT_OK)
        }
        Command::Lint { dir, output } => {
            // An overlay (runbooks) is checked on top of the built-in graph, and only its own
            // files' problems are reported; a whole knowledge directory is checked alone.
            let overlay = dir.as_ref().filter(|d| builtin && !(d.join("ontology.ttl").is_file() || d.join("generated").is_dir())).cloned();
            let (files, label) = match &dir {
                Some(d) if overlay.is_some() => {
                    let mut files = builtin_sources();
                    let own = knowledge::read_dir(d).map_err(|e| fail(EXIT_USAGE, e.to_string()))?;
                    files.extend(own.into_iter().map(|f| SourceFile { path: format!("{}/{}", d.display().to_string().trim_end_matches('/'), f.path), text: f.text }));
                    (files, format!("{} (on the built-in knowledge)", d.display()))
                }
                Some(d) => (knowledge::read_dir(d).map_err(|e| fail(EXIT_USAGE, e.to_string()))?, d.display().to_string()),
                None => {
                    let mut files = builtin_sources();
                    if let Some(k) = &kdir {
                        let more = knowledge::read_dir(k).map_err(|e| fail(EXIT_USAGE, e.to_string()))?;
                        files.extend(more.into_iter().map(|f| SourceFile { path: format!("{}/{}", k.display(), f.path), text: f.text }));
                    }
                    (files, "built-in knowledge".to_string())
                }
            };
            let own_prefix = overlay.as_ref().map(|d| format!("{}/", d.display().to_string().trim_end_matches('/')));
            let n_files = match &own_prefix {
                Some(p) => files.iter().filter(|f| f.path.starts_with(p.as_str())).count(),
                None => files.len(),
            };
            let (kb, mut diags) = knowledge::load_sources(files);
            // Probe ids named by checks (and, for the whole built-in graph, every probe's
            // failure mode naming it): kubewhy-cluster's probe lint.
            diags.extend(if dir.is_some() { kubewhy_cluster::probes::lint_checks(&kb) } else { kubewhy_cluster::probes::lint(&kb) });
            if let Some(p) = &own_prefix {
                diags.retain(|d| d.location.file.starts_with(p.as_str()));
            }
            let errors = diags.iter().filter(|d| d.severity == Severity::Error).count();
            let warnings = diags.len() - errors;
            let text = match output {
                Output::Json => {
                    serde_json::to_string_pretty(&serde_json::json!({
                        "knowledge": label, "files": n_files, "entities": kb.len(),
                        "errors": errors, "warnings": warnings, "problems": diags,
                    }))? + "\n"
                }
                _ => {
                    let mut s = String::new();
                    for d in &diags {
                        // Built-in files are relative to knowledge/; files of --knowledge DIR carry their own prefix.
                        let prefix = match &dir {
                            Some(_) if overlay.is_some() => String::new(),
                            Some(_) => format!("{}/", label.trim_end_matches('/')),
                            None if d.location.file.starts_with('/') || kdir.as_ref().is_some_and(|k| d.location.file.starts_with(&k.display().to_string())) => String::new(),
                            None => "knowledge/".to_string(),
                        };
                        s.push_str(&format!("{prefix}{d}\n"));
                    }
                    s.push_str(&format!(
                        "{label}: {n_files} files, {} entities, {errors} error(s), {warnings} warning(s)\n",
                        kb.len()
                    ));
                    s
                }
            };
            write_out(io, &text, false)?;
            Ok(if errors > 0 { EXIT_PROBLEM } else { EXIT_OK })
        }
        Command::Stats { output } => {
            let engine = engine(kdir.as_deref(), builtin)?;
            let s = engine.stats();
            let text = match output {
                Output::Json => serde_json::to_string_pretty(&s)? + "\n",
                _ => render::stats_text(&s),
            };
            write_out(io, &text, false)?;
            Ok(EXIT_OK)
        }
        Command::Gate { name, k8s_version, output } => {
            let engine = engine(kdir.as_deref(), builtin)?;
            let a = engine.gate(&name, k8s_version).map_err(|e| fail(EXIT_PROBLEM, e.to_string()))?;
            let text = match output {
                Output::Json => serde_json::to_string_pretty(&a)? + "\n",
                _ => render::gate_text(&a),
            };
            write_out(io, &text, color && output == Output::Text)?;
            Ok(EXIT_OK)
        }
        Command::Kep { query, output } => {
            let engine = engine(kdir.as_deref(), builtin)?;
            let a = engine.kep(&query.join(" ")).map_err(|e| fail(EXIT_PROBLEM, e.to_string()))?;
            let text = match output {
                Output::Json => serde_json::to_string_pretty(&a)? + "\n",
                _ => render::kep_text(&a),
            };
            write_out(io, &text, color && output == Output::Text)?;
            Ok(EXIT_OK)
        }
        Command::Metric { name, output } => {
            let engine = engine(kdir.as_deref(), builtin)?;
            let a = engine.metric(&name).map_err(|e| fail(EXIT_PROBLEM, e.to_string()))?;
            let text = match output {
                Output::Json => serde_json::to_string_pretty(&a)? + "\n",
                _ => render::metric_text(&a),
            };
            write_out(io, &text, color && output == Output::Text)?;
            Ok(EXIT_OK)
        }
        Command::Eval { action: Some(EvalAction::Grade { answers, cases, realworld, output }), .. } => {
            let engine = engine(kdir.as_deref(), builtin)?;
            let mut all = kubewhy_evals::load_cases(&cases).map_err(|e| fail(EXIT_USAGE, e.to_string()))?;
            if realworld.exists() {
                all.extend(kubewhy_evals::load_cases(&realworld).map_err(|e| fail(EXIT_USAGE, e.to_string()))?);
            }
            let answers = kubewhy_evals::load_answers(&answers).map_err(|e| fail(EXIT_USAGE, e.to_string()))?;
            let grades = kubewhy_evals::grade(&engine, &all, &answers).map_err(|e| fail(EXIT_USAGE, e))?;
            let text = match output {
                Output::Json => serde_json::to_string_pretty(&serde_json::json!({"grades": grades, "summary": render::grade_summary(&grades)}))? + "\n",
                _ => render::grades_text(&grades),
            };
            write_out(io, &text, color && output == Output::Text)?;
            Ok(EXIT_OK)
        }
        Command::Eval { action: None, cases, realworld, causes, ledger, reports, check, output } => {
            let engine = engine(kdir.as_deref(), builtin)?;
            let gold = kubewhy_evals::load_cases(&cases).map_err(|e| fail(EXIT_USAGE, e.to_string()))?;
            let rw = if realworld.exists() { kubewhy_evals::load_cases(&realworld).map_err(|e| fail(EXIT_USAGE, e.to_string()))? } else { Vec::new() };
            let cz = if causes.exists() { kubewhy_evals::load_cases(&causes).map_err(|e| fail(EXIT_USAGE, e.to_string()))? } else { Vec::new() };
            let led = if ledger.exists() { kubewhy_evals::load_ledger(&ledger).map_err(|e| fail(EXIT_USAGE, e.to_string()))? } else { Vec::new() };
            let mut all = gold.clone();
            all.extend(rw.iter().cloned());
            all.extend(cz.iter().cloned());
            all.extend(kubewhy_evals::ledger_cases(&led));
            let problems = kubewhy_evals::validate_cases(&engine, &all);
            if !problems.is_empty() {
                return Err(fail(EXIT_USAGE, format!("{} problem(s) in the cases:\n{}", problems.len(), problems.join("\n"))));
            }
            let bar = if io.stderr_is_terminal {
                let b = indicatif::ProgressBar::new((gold.len() + rw.len() + cz.len() + led.len()) as u64);
                b.set_style(indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} cases {elapsed}").unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()));
                Some(b)
            } else {
                None
            };
            let report = kubewhy_evals::run_with_ledger(&engine, &gold, &rw, &cz, &led, |done, _| {
                if let Some(b) = &bar {
                    b.set_position(done as u64);
                }
            });
            if let Some(b) = bar {
                b.finish_and_clear();
            }
            let baseline: Option<kubewhy_evals::Report> = std::fs::read_to_string(reports.join("report.json")).ok().and_then(|t| serde_json::from_str(&t).ok());
            let regressions = baseline.as_ref().map(|b| kubewhy_evals::regressions(&report, b)).unwrap_or_default();
            let gates = kubewhy_evals::gates(&report);
            let md = kubewhy_evals::markdown(&report, baseline.as_ref(), &engine);
            if !check {
                std::fs::create_dir_all(&reports).with_context(|| format!("cannot create {}", reports.display()))?;
                std::fs::write(reports.join("report.json"), serde_json::to_string_pretty(&report)? + "\n").context("cannot write report.json")?;
                std::fs::write(reports.join("report.md"), &md).context("cannot write report.md")?;
            }
            let text = match output {
                Output::Json => serde_json::to_string_pretty(&serde_json::json!({"report": report, "gates_failed": gates, "regressions": regressions}))? + "\n",
                Output::Markdown => md,
                Output::Text => render::eval_text(&report, baseline.as_ref(), &gates, &regressions),
            };
            write_out(io, &text, color && output == Output::Text)?;
            Ok(if gates.is_empty() && regressions.is_empty() { EXIT_OK } else { EXIT_PROBLEM })
        }
        Command::CheckClaims { file, output } => {
            let text = if file == "-" {
                read_text(&["-".to_string()], io.stdin)?
            } else {
                read_input_file(std::path::Path::new(&file))?
            };
            let engine = engine(kdir.as_deref(), builtin)?;
            let claims = engine.check_claims(&text);
            let out = match output {
                Output::Json => serde_json::to_string_pretty(&claims)? + "\n",
                _ => render::claims_text(&claims),
            };
            write_out(io, &out, color && output == Output::Text)?;
            let contradicted = claims.iter().any(|c| c.verdict == kubewhy_engine::claims::Verdict::Contradicted);
            Ok(if contradicted { EXIT_PROBLEM } else { EXIT_OK })
        }
        Command::ImportUpstream { dir, out, check } => {
            let files = kubewhy_engine::upstream::import(&dir).map_err(|e| fail(EXIT_USAGE, e.to_string()))?;
            let mut changed = Vec::new();
            for (rel, text) in &files {
                let path = out.join(rel);
                let old = std::fs::read_to_string(&path).unwrap_or_default();
                if old != *text {
                    changed.push(path.display().to_string());
                    if !check {
                        if let Some(parent) = path.parent() {
                            std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
                        }
                        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
                    }
                }
            }
            let verb = if check { "would change" } else { "written" };
            let mut msg = String::new();
            for (rel, text) in &files {
                msg.push_str(&format!("{}: {} bytes\n", out.join(rel).display(), text.len()));
            }
            msg.push_str(&format!("{} file(s) {verb}{}\n", changed.len(), if changed.is_empty() { String::new() } else { format!(": {}", changed.join(", ")) }));
            write_out(io, &msg, false)?;
            Ok(if check && !changed.is_empty() { EXIT_PROBLEM } else { EXIT_OK })
        }
        Command::Site { action: SiteAction::Export { dir, base_path } } => {
            let engine = std::sync::Arc::new(engine(kdir.as_deref(), builtin)?);
            let r = kubewhy_mcp::site::export(engine, &dir, &kubewhy_mcp::site::ExportOptions { base_path }).map_err(|e| fail(EXIT_USAGE, e.to_string()))?;
            let _ = writeln!(io.stderr, "kubewhy: wrote the site to {}: {} files ({} entity pages), {} bytes", dir.display(), r.files, r.entity_pages, r.bytes);
            Ok(EXIT_OK)
        }
        Command::Completions { shell } => {
            completions::completions(shell, io.stdout)?;
            Ok(EXIT_OK)
        }
        Command::Manpages { dir } => {
            let files = completions::manpages(&dir).with_context(|| format!("cannot write man pages into {}", dir.display()))?;
            let _ = writeln!(io.stderr, "kubewhy: wrote {} man pages into {}", files.len(), dir.display());
            Ok(EXIT_OK)
        }
        Command::Export { format } => {
            let engine = engine(kdir.as_deref(), builtin)?;
            let text = engine.graph().export(&format).map_err(|e| fail(EXIT_USAGE, e.to_string()))?;
            write_out(io, &text, false)?;
            Ok(EXIT_OK)
        }
    }
}
