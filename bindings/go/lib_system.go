//go:build tether_system

package tether

// With the build tag tether_system the package links the installed library, found by
// pkg-config (`go build -tags tether_system`; a build tree's tether.pc carries an rpath).

/*
#cgo pkg-config: tether
*/
import "C"
