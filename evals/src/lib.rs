//! Evals.
