//! Rebuild the embedded knowledge whenever a file under knowledge/ changes.
fn main() {
    println!("cargo:rerun-if-changed=.");
}
