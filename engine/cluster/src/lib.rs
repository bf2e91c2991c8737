//! Read-only cluster evidence: cluster state from a live cluster or an offline
//! snapshot, and probes that turn it into evidence for failure modes.
//!
//! This crate sits beside the engine (it depends on `kubewhy-engine`; the engine does not
//! know it) so the Kubernetes API types and the probes build apart from the graph and index.
//! It is the only crate of kubewhy that talks to a cluster. Its
//! interface can only get and list: there is no code path that creates, updates,
//! patches, deletes, execs, attaches or port-forwards, and Secrets are not a kind it
//! knows ([`state::ResourceKind`]).

pub mod collect;
pub mod live;
pub mod probes;
pub mod redact;
pub mod report;
pub mod snapshot;
pub mod source;
pub mod state;

pub use probes::{Evidence, Finding, Probe, ProbeOutcome, Verdict};
pub use source::{Cluster, FieldFilter, ReadError, Scope};
pub use state::{ClusterState, ObjectRef, ResourceKind, Unavailable};
