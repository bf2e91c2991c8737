//! The `kubewhy` binary: parses arguments, sets up logging to stderr and runs [`kubewhy_cli::run`].
//! Started under the name `kubectl-why` (a link or a copy: kubectl's plugin name), it runs
//! `kubectl why` instead ([`kubewhy_cli::kubectl`]).

use clap::Parser;
use std::io::IsTerminal;

fn main() {
    if std::env::args_os().next().is_some_and(|a| kubewhy_cli::kubectl::invoked_as_plugin(&a)) {
        kubewhy_cli::kubectl::main();
    }
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_env("KUBEWHY_LOG").unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")))
        .with_writer(std::io::stderr)
        .init();
    let cli = match kubewhy_cli::Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { kubewhy_cli::EXIT_USAGE } else { kubewhy_cli::EXIT_OK };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    kubewhy_cli::EXITS_AFTER_RUN.store(true, std::sync::atomic::Ordering::Relaxed);
    let stdout = std::io::stdout();
    let is_tty = stdout.is_terminal();
    // Not locked for the whole run: `kubewhy mcp` writes JSON-RPC to stdout from the MCP transport.
    let mut out = stdout;
    let mut err = std::io::stderr();
    let mut stdin = std::io::stdin();
    let code = kubewhy_cli::run(
        cli,
        &mut kubewhy_cli::Io { stdin: &mut stdin, stdout: &mut out, stderr: &mut err, stdout_is_terminal: is_tty, stderr_is_terminal: std::io::stderr().is_terminal() },
    );
    std::process::exit(code);
}
