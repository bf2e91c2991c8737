//! End-to-end tests of kubewhy: the acceptance scenarios of the foundation issue, run against
//! the built-in knowledge through the same entry points the CLI uses.

mod causes;
mod cli;
mod cluster;
mod compiled;
mod diagnose;
mod evals;
mod hostile;
mod issue15;
mod lint;
mod support;
mod upstream;
