//! Finds or builds libtether, in this order:
//!
//! 1. `TETHER_LIB_DIR` set: links the shared library in that directory (a build tree, an
//!    install prefix), whatever the features say; the repository's own tests use it.
//! 2. feature `bundled` (the default): compiles the C++ core shipped inside this crate
//!    (`core/src`, `core/include`) with the C++ compiler (`CXX`, else `c++`), archives it
//!    with `AR` (else `ar`) and links it statically, with the C++ runtime. Nothing needs to
//!    be installed, and the binaries need no rpath or LD_LIBRARY_PATH.
//! 3. otherwise: the installed library, through the `pkg-config` binary (no crates: this
//!    must build offline).
//!
//! A shared library gets an rpath (so tests and examples run without LD_LIBRARY_PATH) and,
//! through `links = "tether"`, `DEP_TETHER_LIB_DIR` so that dependent crates can add the
//! same rpath to their own test and example binaries (a library crate's link args do not
//! propagate). `TETHER_INCLUDE_DIR` (for the layout test) is emitted in every mode.
use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

fn main() {
    for var in [
        "TETHER_LIB_DIR",
        "TETHER_INCLUDE_DIR",
        "PKG_CONFIG_PATH",
        "CXX",
        "AR",
        "TETHER_CXXFLAGS",
        "CXXSTDLIB",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo:rerun-if-changed=build.rs");

    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let bundled_include = manifest.join("core/include");

    let (lib_dirs, include) = match env::var("TETHER_LIB_DIR") {
        Ok(dir) if !dir.is_empty() => {
            link_shared(&[PathBuf::from(&dir)]);
            (
                vec![PathBuf::from(dir)],
                find_include(Vec::new(), &bundled_include),
            )
        }
        _ if env::var_os("CARGO_FEATURE_BUNDLED").is_some() => {
            build_bundled(&manifest.join("core"));
            (Vec::new(), bundled_include)
        }
        _ => {
            let (libs, incs) = pkg_config();
            link_shared(&libs);
            (libs, find_include(incs, &bundled_include))
        }
    };
    println!("cargo:rustc-env=TETHER_INCLUDE_DIR={}", include.display());
    // Metadata for dependents (DEP_TETHER_LIB_DIR / DEP_TETHER_INCLUDE): empty when static.
    let joined: Vec<String> = lib_dirs.iter().map(|d| d.display().to_string()).collect();
    println!("cargo:lib_dir={}", joined.join(":"));
    println!("cargo:include={}", include.display());
}

fn link_shared(lib_dirs: &[PathBuf]) {
    for dir in lib_dirs {
        println!("cargo:rustc-link-search=native={}", dir.display());
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
    }
    println!("cargo:rustc-link-lib=dylib=tether");
}

/// The directory holding tether/tether.h: `TETHER_INCLUDE_DIR`, then pkg-config's, then
/// the bundled copy (the header of the library's own sources).
fn find_include(mut dirs: Vec<PathBuf>, bundled: &Path) -> PathBuf {
    if let Ok(inc) = env::var("TETHER_INCLUDE_DIR") {
        dirs.insert(0, PathBuf::from(inc));
    }
    dirs.push(bundled.to_path_buf());
    let include = dirs
        .into_iter()
        .find(|d| d.join("tether/tether.h").exists())
        .expect("tether-sys: cannot find tether/tether.h (set TETHER_INCLUDE_DIR)");
    include.canonicalize().unwrap_or(include)
}

/// Runs `pkg-config --libs --cflags tether` and picks out -L and -I directories.
fn pkg_config() -> (Vec<PathBuf>, Vec<PathBuf>) {
    let out = Command::new("pkg-config")
        .args(["--libs", "--cflags", "tether"])
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "tether-sys: running pkg-config failed ({e}); enable the `bundled` feature, \
                 or set TETHER_LIB_DIR or PKG_CONFIG_PATH"
            )
        });
    if !out.status.success() {
        panic!(
            "tether-sys: `pkg-config --libs --cflags tether` failed: {}\n\
             enable the `bundled` feature (the default) to build the library from this \
             crate's sources, set PKG_CONFIG_PATH to the directory holding tether.pc, or \
             TETHER_LIB_DIR to the directory holding libtether.so",
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
    (libs, incs)
}

/// Compiles every `.cpp` under `core/src` into `libtether.a` and links it statically.
///
/// The archive is cached by a hash of the compiler, the flags and every source and header
/// under `target/<profile>/build/tether-core-<hash>/`: one level above this package's own
/// OUT_DIR, so that every build of these sources in one target directory (tests, clippy,
/// a consumer project, the packaged crate) compiles the C++ once. It is written to a
/// temporary directory and renamed into place, so concurrent builds never see half of it.
fn build_bundled(core: &Path) {
    let src = core.join("src");
    let include = core.join("include");
    if !src.join("capi").is_dir() || !include.join("tether/tether.h").is_file() {
        panic!(
            "tether-sys: the bundled C++ sources are missing under {} (they ship inside the \
             crate; in a checkout, core/src and core/include link to the repository's src/ and \
             include/). Build with `--no-default-features` to use an installed libtether.",
            core.display()
        );
    }
    println!("cargo:rerun-if-changed={}", src.display());
    println!("cargo:rerun-if-changed={}", include.display());

    let target = env::var("TARGET").unwrap();
    if target.contains("msvc") {
        panic!(
            "tether-sys: the bundled build needs a GCC-compatible C++20 compiler (MinGW on \
             Windows); build with `--no-default-features` to link an installed tether.dll"
        );
    }
    let cxx = tool("CXX", &target, "c++");
    let ar = tool("AR", &target, "ar");
    let mut flags: Vec<String> = [
        "-std=c++20",
        "-O2",
        "-fPIC",
        "-pthread",
        "-fvisibility=hidden",
        "-fvisibility-inlines-hidden",
        "-DTETHER_BUILDING",
    ]
    .map(String::from)
    .to_vec();
    flags.extend(
        env::var("TETHER_CXXFLAGS")
            .unwrap_or_default()
            .split_whitespace()
            .map(String::from),
    );
    flags.push(format!("-I{}", include.display()));
    flags.push(format!("-I{}", src.display()));

    let mut sources = Vec::new();
    let mut inputs = Vec::new();
    collect(&src, &target, &mut sources, &mut inputs);
    collect(&include, &target, &mut Vec::new(), &mut inputs);
    sources.sort();
    inputs.sort();

    let mut key = Fnv::new();
    key.add(cxx.as_bytes());
    key.add(
        &Command::new(&cxx)
            .arg("--version")
            .output()
            .map(|o| o.stdout)
            .unwrap_or_default(),
    );
    for f in &flags[..flags.len() - 2] {
        key.add(f.as_bytes()); // the two -I paths differ by checkout, the contents do not
    }
    for f in &inputs {
        key.add(
            f.strip_prefix(core)
                .unwrap_or(f)
                .to_string_lossy()
                .as_bytes(),
        );
        key.add(
            &fs::read(f).unwrap_or_else(|e| panic!("tether-sys: reading {}: {e}", f.display())),
        );
    }
    let out_dir = PathBuf::from(env::var("OUT_DIR").unwrap());
    let cache_root = out_dir.parent().and_then(Path::parent).unwrap_or(&out_dir);
    let cache = cache_root.join(format!("tether-core-{:016x}", key.finish()));
    if !cache.join("libtether.a").is_file() {
        compile_into(&cache, &cxx, &ar, &flags, &src, &sources);
    }
    println!("cargo:rustc-link-search=native={}", cache.display());
    // Whole archive: fork_guard.cpp and asymmetric_fence.cpp register themselves at load.
    println!("cargo:rustc-link-lib=static:+whole-archive=tether");
    let stdlib = env::var("CXXSTDLIB").unwrap_or_else(|_| {
        if target.contains("apple") || target.contains("freebsd") || target.contains("openbsd") {
            "c++".into()
        } else {
            "stdc++".into()
        }
    });
    if !stdlib.is_empty() {
        println!("cargo:rustc-link-lib=dylib={stdlib}");
    }
}

/// `VAR_<target>` (dashes as underscores), then `VAR`, then `default`.
fn tool(var: &str, target: &str, default: &str) -> String {
    env::var(format!("{var}_{}", target.replace('-', "_")))
        .or_else(|_| env::var(var))
        .unwrap_or_else(|_| default.into())
}

/// Every file under `dir` into `inputs`, the `.cpp` ones also into `sources`. A directory
/// named after another OS family (`win32`/`windows` off Windows, `posix`/`unix` on it) is
/// skipped: that is where per-OS implementations of the platform layer live.
fn collect(dir: &Path, target: &str, sources: &mut Vec<PathBuf>, inputs: &mut Vec<PathBuf>) {
    let other_os: &[&str] = if target.contains("windows") {
        &["posix", "unix", "linux"]
    } else {
        &["win32", "windows"]
    };
    let entries =
        fs::read_dir(dir).unwrap_or_else(|e| panic!("tether-sys: {}: {e}", dir.display()));
    for entry in entries {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if !other_os.contains(&name.as_str()) {
                collect(&path, target, sources, inputs);
            }
        } else if name.ends_with(".cpp") || name.ends_with(".h") || name.ends_with(".hpp") {
            if name.ends_with(".cpp") {
                sources.push(path.clone());
            }
            inputs.push(path);
        }
    }
}

/// Compiles `sources` in parallel (cargo's NUM_JOBS workers) and archives them as
/// `cache/libtether.a`, building in a temporary sibling renamed into place at the end.
fn compile_into(
    cache: &Path,
    cxx: &str,
    ar: &str,
    flags: &[String],
    src: &Path,
    sources: &[PathBuf],
) {
    let tmp = cache.with_extension(format!("tmp{}", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir_all(&tmp).unwrap_or_else(|e| panic!("tether-sys: {}: {e}", tmp.display()));
    let objects: Vec<PathBuf> = sources
        .iter()
        .map(|s| {
            let rel = s
                .strip_prefix(src)
                .unwrap()
                .to_string_lossy()
                .replace(['/', '\\'], "_");
            tmp.join(rel.replace(".cpp", ".o"))
        })
        .collect();
    let jobs: usize = env::var("NUM_JOBS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1);
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, sources.len()) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= sources.len() {
                    return;
                }
                let out = Command::new(cxx)
                    .args(flags)
                    .arg("-c")
                    .arg(&sources[i])
                    .arg("-o")
                    .arg(&objects[i])
                    .output();
                match out {
                    Ok(o) if o.status.success() => {}
                    Ok(o) => failures.lock().unwrap().push(format!(
                        "{}:\n{}",
                        sources[i].display(),
                        String::from_utf8_lossy(&o.stderr)
                    )),
                    Err(e) => failures
                        .lock()
                        .unwrap()
                        .push(format!("cannot run the C++ compiler `{cxx}`: {e}")),
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    if !failures.is_empty() {
        panic!(
            "tether-sys: compiling the bundled core failed:\n{}",
            failures.join("\n")
        );
    }
    let archive = tmp.join("libtether.a");
    let st = Command::new(ar)
        .arg("crs")
        .arg(&archive)
        .args(&objects)
        .status()
        .unwrap_or_else(|e| panic!("tether-sys: cannot run `{ar}`: {e}"));
    assert!(st.success(), "tether-sys: `{ar} crs` failed");
    if fs::rename(&tmp, cache).is_err() {
        // Another build renamed its identical archive into place first: use that one.
        let _ = fs::remove_dir_all(&tmp);
        assert!(
            cache.join("libtether.a").is_file(),
            "tether-sys: cannot place {}",
            cache.display()
        );
    }
}

/// FNV-1a, 64 bits: a cache key, not a defence against anyone.
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn add(&mut self, bytes: &[u8]) {
        for b in bytes.iter().chain(&[0xff]) {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
}
