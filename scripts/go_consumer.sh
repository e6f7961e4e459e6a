#!/usr/bin/env bash
# go_consumer.sh — builds and runs bindings/go/testdata/consumer as a fresh Go module in a
# temporary directory: `go mod init`, a `replace` to bindings/go, `go run .`, with every
# CGO_* and PKG_CONFIG_PATH variable unset (issue 10, acceptance 4).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
app="$(mktemp -d)"
trap 'rm -rf "$app"' EXIT
cp "$root/bindings/go/testdata/consumer/main.go" "$app/"
cd "$app"
for v in $(env | sed -n 's/^\(CGO_[A-Z_]*\)=.*/\1/p') PKG_CONFIG_PATH; do unset "$v"; done
go mod init example.com/tether-consumer >/dev/null 2>&1
go mod edit -require tether.dev/tether@v0.0.0 -replace "tether.dev/tether=$root/bindings/go"
GOFLAGS=-mod=mod go run . | tee run.txt
grep -q "runner error caught, actor call returned 1" run.txt
