//! Finds libtether: `TETHER_LIB_DIR` (a directory holding libtether.so) first, else the
//! `pkg-config` binary (no crates: this must build offline).
//!
//! Emits the link search path, `-ltether`, an rpath (so tests and examples run without
//! LD_LIBRARY_PATH), `TETHER_INCLUDE_DIR` for the layout test, and, through `links =
//! "tether"`, `DEP_TETHER_LIB_DIR` so that dependent crates can add the same rpath to
//! their own test and example binaries (a library crate's link args do not propagate).
use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=TETHER_LIB_DIR");
    println!("cargo:rerun-if-env-changed=TETHER_INCLUDE_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-changed=build.rs");

    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    // The header of the repository this crate lives in: bindings/rust/tether-sys -> include/.
    let repo_include = manifest.join("../../../include");

    let (lib_dirs, mut include_dirs) = match env::var("TETHER_LIB_DIR") {
        Ok(dir) if !dir.is_empty() => (vec![PathBuf::from(dir)], Vec::new()),
        _ => pkg_config(),
    };
    if let Ok(inc) = env::var("TETHER_INCLUDE_DIR") {
        include_dirs.insert(0, PathBuf::from(inc));
    }
    include_dirs.push(repo_include);
    let include = include_dirs
        .into_iter()
        .find(|d| d.join("tether/tether.h").exists())
        .expect("tether-sys: cannot find tether/tether.h (set TETHER_INCLUDE_DIR)");
    let include = include.canonicalize().unwrap_or(include);

    for dir in &lib_dirs {
        println!("cargo:rustc-link-search=native={}", dir.display());
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
    }
    println!("cargo:rustc-link-lib=dylib=tether");
    println!("cargo:rustc-env=TETHER_INCLUDE_DIR={}", include.display());
    // Metadata for dependents (DEP_TETHER_LIB_DIR / DEP_TETHER_INCLUDE).
    let joined: Vec<String> = lib_dirs.iter().map(|d| d.display().to_string()).collect();
    println!("cargo:lib_dir={}", joined.join(":"));
    println!("cargo:include={}", include.display());
}

/// Runs `pkg-config --libs --cflags tether` and picks out -L and -I directories.
fn pkg_config() -> (Vec<PathBuf>, Vec<PathBuf>) {
    let out = Command::new("pkg-config")
        .args(["--libs", "--cflags", "tether"])
        .output()
        .unwrap_or_else(|e| {
            panic!("tether-sys: running pkg-config failed ({e}); set TETHER_LIB_DIR or PKG_CONFIG_PATH")
        });
    if !out.status.success() {
        panic!(
            "tether-sys: `pkg-config --libs --cflags tether` failed: {}\n\
             set TETHER_LIB_DIR to the directory holding libtether.so, or PKG_CONFIG_PATH to \
             the directory holding tether.pc",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let text = String::from_utf8(out.stdout).expect("pkg-config output is not UTF-8");
    let mut libs = Vec::new();
    let mut incs = Vec::new();
    for tok in text.split_whitespace() {
        if let Some(d) = tok.strip_prefix("-L") {
            libs.push(PathBuf::from(d));
        } else if let Some(d) = tok.strip_prefix("-I") {
            incs.push(PathBuf::from(d));
        }
    }
    if libs.is_empty() {
        panic!("tether-sys: pkg-config gave no -L directory for tether: {text}");
    }
    (libs, incs)
}
