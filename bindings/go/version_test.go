package tether

import (
	"errors"
	"strings"
	"testing"
)

// TestVersionMatchesHeader: the library this test binary runs with is the one its header
// describes, so the constructors work.
func TestVersionMatchesHeader(t *testing.T) {
	if versionErr != nil {
		t.Fatalf("versionErr = %v", versionErr)
	}
	if Version() == "" {
		t.Fatal("empty Version()")
	}
}

// TestCheckVersion: a library of another major, or an older minor, is a clear
// ErrWrongState naming both versions; a newer minor or patch is accepted.
func TestCheckVersion(t *testing.T) {
	const header = 0<<16 | 1<<8 | 0 // 0.1.0
	for _, tc := range []struct {
		lib  uint32
		name string
		ok   bool
	}{
		{0<<16 | 1<<8 | 0, "0.1.0", true},
		{0<<16 | 1<<8 | 7, "0.1.7", true},
		{0<<16 | 2<<8 | 0, "0.2.0", true},
		{0<<16 | 0<<8 | 9, "0.0.9", false},
		{1<<16 | 1<<8 | 0, "1.1.0", false},
	} {
		err := checkVersion(tc.lib, header, tc.name)
		if tc.ok != (err == nil) {
			t.Fatalf("checkVersion(%s) = %v, want ok=%v", tc.name, err, tc.ok)
		}
		if err != nil && (!errors.Is(err, ErrWrongState) || !strings.Contains(err.Error(), tc.name) ||
			!strings.Contains(err.Error(), "0.1.0 header")) {
			t.Fatalf("checkVersion(%s) = %q: want ErrWrongState naming both versions", tc.name, err)
		}
	}
}
