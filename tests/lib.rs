//! Shared test support for the end-to-end tests (in e2e/) and the CLI process tests: a test
//! Kubernetes API server ([`apiserver`]) and the cluster states it serves ([`scenarios`]).

pub mod apiserver;
pub mod scenarios;
