//! The `kubectl-why` binary: kubewhy as a kubectl plugin (`kubectl why ...`); see
//! [`kubewhy_cli::kubectl`]. The `kubewhy` binary does the same when started under the name
//! `kubectl-why` (a link or a copy), so one executable serves both.

fn main() {
    kubewhy_cli::kubectl::main();
}
