//! Adds an rpath to libtether (found by tether-sys's build script, exported as
//! DEP_TETHER_LIB_DIR) to this crate's tests, doc tests and examples, so they run without
//! LD_LIBRARY_PATH. Link arguments of a library crate do not reach its dependents' binaries.
fn main() {
    println!("cargo:rerun-if-env-changed=DEP_TETHER_LIB_DIR");
    if let Ok(dirs) = std::env::var("DEP_TETHER_LIB_DIR") {
        for dir in dirs.split(':').filter(|d| !d.is_empty()) {
            println!("cargo:rustc-link-search=native={dir}");
            println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
        }
    }
}
