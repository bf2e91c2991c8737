//! End-to-end tests live in e2e/.
