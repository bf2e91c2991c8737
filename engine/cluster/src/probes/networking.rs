//! Probes for the `networking` failure modes.

use super::Probe;

/// This area's probes.
pub static PROBES: &[Probe] = &[];
