#!/usr/bin/env bash
# consumer-test.sh — the crate as a new user meets it, with nothing installed or set:
#  1. a fresh Cargo project (in a temporary directory) whose only dependency is
#     `tether = { path = ".../bindings/rust/tether" }`; `cargo run` with TETHER_LIB_DIR,
#     PKG_CONFIG_PATH and LD_LIBRARY_PATH unset must print the runner's value, and the
#     binary must not need libtether.so (the bundled core is linked statically);
#  2. `cargo package -p tether-sys`, unpacked outside the repository, must build and pass
#     its layout test from the packaged files alone (no links back into the checkout).
# CARGO_TARGET_DIR, when set (ctest sets it), only says where objects are cached: the
# bundled core is compiled once per target directory.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unset TETHER_LIB_DIR TETHER_INCLUDE_DIR PKG_CONFIG_PATH LD_LIBRARY_PATH
target=${CARGO_TARGET_DIR:-$work/target}
export CARGO_TARGET_DIR=$target

echo "== a fresh project depending on the crate by path"
cargo new --quiet --vcs none --name consumer "$work/consumer"
cat >>"$work/consumer/Cargo.toml" <<TOML
tether = { path = "$here/tether" }
TOML
cat >"$work/consumer/src/main.rs" <<'RUST'
use std::time::Duration;

fn main() {
    let t = Duration::from_secs(10);
    let runner = tether::Runner::spawn(&tether::RunnerOptions::new().name("consumer"), move |scope| {
        let nested = scope.spawn("nested", |_| Ok::<u32, String>(41))?;
        Ok::<_, tether::Error>(nested.join_timeout(t)? + 1)
    })
    .expect("starting the runner");
    let value = runner.join_timeout(t).expect("joining the runner");
    println!("tether {} answered {value}", tether::version());
}
RUST
out=$(cd "$work/consumer" && cargo run --quiet --offline)
echo "$out"
[ "$out" = "tether $(sed -n 's/^version = "\(.*\)"/\1/p' "$here/Cargo.toml") answered 42" ] ||
  { echo "consumer-test: unexpected output" >&2; exit 1; }
bin="$target/debug/consumer"
if readelf -d "$bin" | grep -q 'NEEDED.*libtether'; then
  echo "consumer-test: $bin needs libtether.so; the bundled core should be linked statically" >&2
  exit 1
fi

echo "== the packaged tether-sys builds from its own files"
(cd "$here" && cargo package --quiet --offline --no-verify --allow-dirty -p tether-sys)
crate=$(ls "$target"/package/tether-sys-*.crate)
mkdir "$work/pkg"
tar -xzf "$crate" -C "$work/pkg"
pkg=$(echo "$work"/pkg/tether-sys-*)
if [ -n "$(find "$pkg" -type l)" ]; then
  echo "consumer-test: the package holds symbolic links" >&2; exit 1
fi
for f in core/include/tether/tether.h core/src/capi/boundary.cpp; do
  [ -f "$pkg/$f" ] || { echo "consumer-test: the package lacks $f" >&2; exit 1; }
done
(cd "$pkg" && cargo test --quiet --offline)
echo "consumer-test: ok"
