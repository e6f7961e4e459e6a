//go:build !tether_system

package tether

// The default build compiles the library into the package: tether_core.cpp is the core in
// one translation unit and include/ its public header, both written by
// scripts/amalgamate_go.sh, so `go build` needs nothing installed but a C++20 compiler.

/*
#cgo CFLAGS: -I${SRCDIR}/include
#cgo CXXFLAGS: -I${SRCDIR}/include -std=c++20 -fvisibility=hidden -pthread
#cgo LDFLAGS: -pthread
*/
import "C"
