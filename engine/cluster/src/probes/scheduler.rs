//! Probes for the `scheduler` failure modes.

use super::Probe;

/// This area's probes.
pub static PROBES: &[Probe] = &[];
