# 40-go.sh — the Go binding as its users get it: vet and the race suite of the bundled
# build (the core compiled from bindings/go/tether_core.cpp, nothing installed), the
# amalgamation's freshness, and a fresh module outside the package that uses it through a
# `replace` and runs with no CGO_* or PKG_CONFIG_PATH set.
tether_require_commands go:golang-go
scripts/amalgamate_go.sh --check
(cd bindings/go && go vet ./... && TETHER_TEST_SCALE="${TETHER_TEST_SCALE:-1}" go test -race -count=1 ./...)
scripts/go_consumer.sh
