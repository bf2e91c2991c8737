//! `kubectl why`: kubewhy as a kubectl plugin. kubectl runs the `kubectl-why` executable it
//! finds on PATH with the words that follow `kubectl why` (kubectl puts none of its own flags
//! before them: it refuses flags placed before a plugin's name). This module reads those words
//! the way kubectl users write them and turns them into one `kubewhy` command line, which
//! [`crate::run`] then runs as usual:
//!
//! | `kubectl why ...` | runs |
//! |---|---|
//! | `"<text>"` (several words are joined), `-` (stdin) | `kubewhy why` (offline) |
//! | `KIND/NAME` (`pod/web-0`, `deploy/web`, `pvc/data`) | `kubewhy verify KIND/NAME` |
//! | `scan` | `kubewhy scan` |
//! | `verify "<text>"` / `verify KIND/NAME` | `kubewhy verify` |
//!
//! kubectl's global flags mean what they mean in kubectl: `-n/--namespace`,
//! `-A/--all-namespaces`, `--context`, `--kubeconfig` (and `$KUBECONFIG`), `--request-timeout`
//! (a kubectl duration: `30s`, `1m`, `500ms`, a bare number of seconds), `-o/--output`
//! (`text`, `json`, `yaml`, `markdown`). Exit codes are kubewhy's (see [`crate`]).

use clap::{Parser, ValueEnum};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The name kubectl looks for on PATH: `kubectl why` runs `kubectl-why`.
pub const PLUGIN_NAME: &str = "kubectl-why";

const EXAMPLES: &str = "Examples:
  kubectl why \"0/3 nodes are available: 3 Insufficient cpu.\"
  kubectl describe pod web-0 -n shop | kubectl why -
  kubectl why pod/web-0 -n shop            # diagnose one object from its status and events
  kubectl why scan -A                      # every probe over every namespace
  kubectl why scan -n shop -o json
  kubectl why verify \"Readiness probe failed\" -n shop --context prod

Reads the cluster read-only (get and list), through the same kubeconfig, context and namespace
as kubectl. `kubewhy --help` lists kubewhy's other commands.";

/// `kubectl why` arguments, as kubectl users write them.
#[derive(Debug, Parser)]
#[command(
    name = "kubectl-why",
    bin_name = "kubectl why",
    version,
    about = "kubectl why: why is my Kubernetes cluster doing this? (kubewhy as a kubectl plugin)",
    after_help = EXAMPLES,
    max_term_width = 100
)]
pub struct KubectlWhy {
    /// The namespace (default: the kubeconfig context's namespace, else `default`).
    #[arg(short = 'n', long, value_name = "NS")]
    pub namespace: Option<String>,
    /// Every namespace (`scan`, `verify "<text>"`).
    #[arg(short = 'A', long, conflicts_with = "namespace")]
    pub all_namespaces: bool,
    /// The kubeconfig context to use (default: the current context).
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
    /// The kubeconfig file (default: $KUBECONFIG, ~/.kube/config, then the in-cluster service account).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = Format::Text)]
    pub output: Format,
    /// Timeout of each API request, as kubectl writes it: `30s`, `2m`, `500ms`, or seconds (`0`: the default, 30 s).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub request_timeout: Option<u64>,
    /// The cluster's Kubernetes version ("1.30"); default: the server's.
    #[arg(long = "k8s-version", value_name = "VERSION")]
    pub k8s_version: Option<String>,
    /// How many diagnosis candidates to show (or to check, for `verify`).
    #[arg(long, value_name = "N")]
    pub top: Option<u16>,
    /// Read this snapshot instead of a live cluster (`kubectl get -o json|yaml` output, `kubectl cluster-info dump`).
    #[arg(long, value_name = "DIR|FILE", conflicts_with_all = ["kubeconfig", "context"])]
    pub snapshot: Option<PathBuf>,
    /// Mask object names, namespaces and IP addresses in the output.
    #[arg(long)]
    pub redact: bool,
    /// When to colour text output (auto: only on a terminal, and never when NO_COLOR is set).
    #[arg(long, value_name = "WHEN", value_parser = ["auto", "always", "never"])]
    pub color: Option<String>,
    /// A symptom text (`-` reads stdin), `KIND/NAME`, `scan`, or `verify TEXT|KIND/NAME`.
    #[arg(value_name = "TEXT|KIND/NAME|scan|verify")]
    pub args: Vec<String>,
}

/// `-o` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Readable text.
    Text,
    /// One JSON document.
    Json,
    /// The JSON document as YAML.
    Yaml,
    /// Markdown.
    Markdown,
}

/// kubectl's `--request-timeout`: a Go duration (`1h2m3s`, `500ms`) or a bare number of seconds,
/// in whole seconds (rounded up; at most 600). `0` means "no timeout" to kubectl: here, the default.
fn parse_duration(s: &str) -> Result<u64, String> {
    let bad = || format!("`{s}` is not a duration (30s, 2m, 500ms, or seconds)");
    let s = s.trim();
    if let Ok(n) = s.parse::<u64>() {
        return if n <= 600 { Ok(n) } else { Err(format!("`{s}`: at most 600 seconds")) };
    }
    let mut ms: u64 = 0;
    let mut rest = s;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
        let n: u64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit_len = rest.find(|c: char| c.is_ascii_digit()).unwrap_or(rest.len());
        let factor = match &rest[..unit_len] {
            "ms" => 1,
            "s" => 1_000,
            "m" => 60_000,
            "h" => 3_600_000,
            _ => return Err(bad()),
        };
        ms = ms.saturating_add(n.saturating_mul(factor));
        rest = &rest[unit_len..];
    }
    let secs = ms.div_ceil(1_000);
    if secs > 600 {
        return Err(format!("`{s}`: at most 600 seconds"));
    }
    Ok(secs)
}

/// The `kubewhy` command line for these `kubectl why` arguments (the program name first), and
/// notes for stderr (flags that do not apply to what was asked).
///
/// # Errors
/// A usage message when nothing was asked, or `scan` was given extra words.
pub fn kubewhy_args(k: &KubectlWhy) -> Result<(Vec<String>, Vec<String>), String> {
    let mut notes = Vec::new();
    let (sub, rest): (&str, &[String]) = match k.args.split_first() {
        None => return Err("nothing to explain: give a symptom text (or `-` for stdin), KIND/NAME, or `scan` (see `kubectl why --help`)".into()),
        Some((first, rest)) if first == "scan" => {
            if !rest.is_empty() {
                return Err(format!("`scan` takes no words (got `{}`); scope it with -n NS or -A", rest.join(" ")));
            }
            ("scan", rest)
        }
        Some((first, rest)) if first == "verify" => {
            if rest.is_empty() {
                return Err("`verify` needs KIND/NAME or a symptom text".into());
            }
            ("verify", rest)
        }
        Some(_) if crate::cluster::parse_target(&k.args).is_some() => ("verify", &k.args[..]),
        Some(_) => ("why", &k.args[..]),
    };
    let output = match k.output {
        Format::Text => "text",
        Format::Json | Format::Yaml => "json",
        Format::Markdown => "markdown",
    };
    let mut argv: Vec<String> = vec!["kubewhy".into()];
    if let Some(c) = &k.color {
        argv.extend(["--color".into(), c.clone()]);
    }
    argv.push(sub.into());
    argv.extend(["--output".into(), output.into()]);
    if let Some(v) = &k.k8s_version {
        argv.extend(["--k8s-version".into(), v.clone()]);
    }
    if sub == "why" {
        if let Some(top) = k.top {
            argv.extend(["--top".into(), top.to_string()]);
        }
        let cluster_flags = k.namespace.is_some() || k.all_namespaces || k.context.is_some() || k.kubeconfig.is_some() || k.snapshot.is_some();
        if cluster_flags || k.request_timeout.is_some() || k.redact {
            notes.push("a symptom text is diagnosed offline: the cluster flags were not used (`kubectl why verify TEXT` checks the diagnosis against the cluster)".into());
        }
    } else {
        if let Some(ns) = &k.namespace {
            argv.extend(["--namespace".into(), ns.clone()]);
        }
        if k.all_namespaces {
            argv.push("--all-namespaces".into());
        }
        if let Some(c) = &k.context {
            argv.extend(["--context".into(), c.clone()]);
        }
        if let Some(f) = &k.kubeconfig {
            argv.extend(["--kubeconfig".into(), f.display().to_string()]);
        }
        if let Some(s) = &k.snapshot {
            argv.extend(["--snapshot".into(), s.display().to_string()]);
        }
        if let Some(t) = k.request_timeout.filter(|t| *t > 0) {
            argv.extend(["--request-timeout".into(), t.to_string()]);
        }
        if k.redact {
            argv.push("--redact".into());
        }
        if sub == "verify" {
            if let Some(top) = k.top {
                argv.extend(["--top".into(), top.to_string()]);
            }
        } else if k.top.is_some() {
            notes.push("--top applies to a diagnosis, not to `scan`: ignored".into());
        }
    }
    if !rest.is_empty() {
        argv.push("--".into());
        argv.extend(rest.iter().cloned());
    }
    Ok((argv, notes))
}

/// True when this process was started as `kubectl-why` (kubectl, krew's link, or a copy named
/// so), judged by the file name in `argv[0]`.
pub fn invoked_as_plugin(argv0: &OsString) -> bool {
    Path::new(argv0).file_stem().is_some_and(|s| s == PLUGIN_NAME)
}

/// The `kubectl-why` process: logging to stderr (`KUBEWHY_LOG`), [`run`] over the process's
/// arguments and standard streams, then exit with its code.
pub fn main() -> ! {
    use std::io::IsTerminal as _;
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_env("KUBEWHY_LOG").unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")))
        .with_writer(std::io::stderr)
        .init();
    crate::EXITS_AFTER_RUN.store(true, std::sync::atomic::Ordering::Relaxed);
    let (mut stdin, mut out, mut err) = (std::io::stdin(), std::io::stdout(), std::io::stderr());
    let (out_tty, err_tty) = (out.is_terminal(), err.is_terminal());
    let code = run(
        std::env::args_os().skip(1),
        &mut crate::Io { stdin: &mut stdin, stdout: &mut out, stderr: &mut err, stdout_is_terminal: out_tty, stderr_is_terminal: err_tty },
    );
    std::process::exit(code)
}

/// Runs `kubectl why` with these arguments (without the program name); returns the exit code.
pub fn run<I: IntoIterator<Item = OsString>>(args: I, io: &mut crate::Io<'_>) -> i32 {
    let k = match KubectlWhy::try_parse_from(std::iter::once(OsString::from(PLUGIN_NAME)).chain(args)) {
        Ok(k) => k,
        Err(e) => {
            let code = if e.use_stderr() { crate::EXIT_USAGE } else { crate::EXIT_OK };
            let text = e.render().to_string();
            let _ = if e.use_stderr() { io.stderr.write_all(text.as_bytes()) } else { io.stdout.write_all(text.as_bytes()) };
            return code;
        }
    };
    let (argv, notes) = match kubewhy_args(&k) {
        Ok(x) => x,
        Err(msg) => {
            let _ = writeln!(io.stderr, "kubectl why: error: {msg}");
            return crate::EXIT_USAGE;
        }
    };
    for n in notes {
        let _ = writeln!(io.stderr, "kubectl why: note: {n}");
    }
    let cli = match <crate::Cli as Parser>::try_parse_from(&argv) {
        Ok(c) => c,
        Err(e) => {
            let _ = write!(io.stderr, "{}", e.render());
            return crate::EXIT_USAGE;
        }
    };
    if k.output != Format::Yaml {
        return crate::run(cli, io);
    }
    // YAML: run for JSON into a buffer, then convert (the exit code is kept).
    let mut buf = Vec::new();
    let code = {
        let mut sub = crate::Io { stdin: &mut *io.stdin, stdout: &mut buf, stderr: &mut *io.stderr, stdout_is_terminal: false, stderr_is_terminal: io.stderr_is_terminal };
        crate::run(cli, &mut sub)
    };
    if buf.is_empty() {
        return code;
    }
    let yaml = serde_json::from_slice::<serde_json::Value>(&buf).map_err(|e| e.to_string()).and_then(|v| serde_yaml_ng::to_string(&v).map_err(|e| e.to_string()));
    match yaml {
        Ok(y) => match io.stdout.write_all(y.as_bytes()) {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                let _ = writeln!(io.stderr, "kubectl why: error: {e}");
                crate::EXIT_USAGE
            }
            _ => code,
        },
        Err(e) => {
            let _ = writeln!(io.stderr, "kubectl why: error: cannot convert the output to YAML: {e}");
            crate::EXIT_USAGE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Result<Vec<String>, String> {
        let k = KubectlWhy::try_parse_from(std::iter::once(PLUGIN_NAME).chain(words.iter().copied())).map_err(|e| e.to_string())?;
        kubewhy_args(&k).map(|(a, _)| a)
    }

    fn check(words: &[&str], expected: &str) {
        assert_eq!(argv(words).map(|a| a.join(" ")), Ok(expected.to_string()), "{words:?}");
    }

    #[test]
    fn kubectl_words_become_kubewhy_commands() {
        check(&["0/3 nodes are available"], "kubewhy why --output text -- 0/3 nodes are available");
        check(&["crash", "loop", "-o", "json"], "kubewhy why --output json -- crash loop");
        check(&["-"], "kubewhy why --output text -- -");
        check(&["pod/web-0", "-n", "shop"], "kubewhy verify --output text --namespace shop -- pod/web-0");
        check(&["-nshop", "deploy/web", "--context=prod"], "kubewhy verify --output text --namespace shop --context prod -- deploy/web");
        check(&["scan", "-A", "-o", "yaml"], "kubewhy scan --output json --all-namespaces");
        check(&["scan", "--kubeconfig", "/k", "--request-timeout", "1m"], "kubewhy scan --output text --kubeconfig /k --request-timeout 60");
        check(&["verify", "Insufficient cpu", "--top", "3", "-o", "markdown"], "kubewhy verify --output markdown --top 3 -- Insufficient cpu");
        check(&["--", "-weird text"], "kubewhy why --output text -- -weird text");
    }

    #[test]
    fn usage_errors() {
        assert!(argv(&[]).is_err());
        assert!(argv(&["scan", "extra"]).is_err());
        assert!(argv(&["verify"]).is_err());
        assert!(argv(&["scan", "-n", "a", "-A"]).is_err());
        assert!(argv(&["x", "-o", "wide"]).is_err());
    }

    #[test]
    fn kubectl_durations() {
        assert_eq!(parse_duration("30s"), Ok(30));
        assert_eq!(parse_duration("1m30s"), Ok(90));
        assert_eq!(parse_duration("500ms"), Ok(1));
        assert_eq!(parse_duration("45"), Ok(45));
        assert_eq!(parse_duration("0"), Ok(0));
        assert!(parse_duration("1d").is_err() && parse_duration("h").is_err() && parse_duration("11m").is_err());
    }

    #[test]
    fn plugin_name_from_argv0() {
        assert!(invoked_as_plugin(&"/home/u/.krew/bin/kubectl-why".into()));
        assert!(invoked_as_plugin(&"kubectl-why.exe".into()));
        assert!(!invoked_as_plugin(&"/usr/bin/kubewhy".into()));
    }
}
