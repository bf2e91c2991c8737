//! `kubewhy completions SHELL` (clap_complete) and `kubewhy manpages DIR` (clap_mangen): shell
//! completion scripts and man pages generated from the same clap definitions as the parser, so
//! they never drift from the real arguments.

use crate::Cli;
use clap::CommandFactory as _;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Shells `kubewhy completions` writes a script for.
pub use clap_complete::Shell;

/// Writes the completion script of `kubewhy` for `shell` to `out`.
///
/// # Errors
/// Writing to `out` failed.
pub fn completions(shell: Shell, out: &mut dyn Write) -> std::io::Result<()> {
    let mut cmd = Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "kubewhy", &mut buf);
    out.write_all(&buf)
}

/// Writes `kubewhy.1` and one page per subcommand (`kubewhy-why.1`, `kubewhy-eval-grade.1`, ...)
/// into `dir` (created when missing), plus `kubectl-why.1` for the kubectl plugin; returns the
/// files written, sorted.
///
/// # Errors
/// `dir` cannot be created or a page cannot be written.
pub fn manpages(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    clap_mangen::generate_to(Cli::command(), dir)?;
    let plugin = crate::kubectl::KubectlWhy::command().name(crate::kubectl::PLUGIN_NAME).display_name(crate::kubectl::PLUGIN_NAME);
    clap_mangen::Man::new(plugin).generate_to(dir)?;
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "1") && p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("kubewhy") || n.starts_with("kubectl-why")))
        .collect();
    files.sort();
    Ok(files)
}
