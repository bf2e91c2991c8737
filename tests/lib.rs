//! Shared test support for the end-to-end tests (in e2e/) and the CLI process tests: a test
//! Kubernetes API server ([`apiserver`]) and the cluster states it serves ([`scenarios`]); and
//! process figures from `/proc` for the benchmarks and the hostile-input test ([`procfs`]).

pub mod apiserver;
pub mod procfs;
pub mod scenarios;
