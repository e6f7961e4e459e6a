package tether

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestAmalgamationFresh: tether_core.cpp and include/ are what scripts/amalgamate_go.sh
// makes of today's src/ and include/. Skipped outside the repository (a module copy has
// no src/ to compare with).
func TestAmalgamationFresh(t *testing.T) {
	script := filepath.Join("..", "..", "scripts", "amalgamate_go.sh")
	if _, err := os.Stat(script); err != nil {
		t.Skip("not in the tether repository: no scripts/amalgamate_go.sh")
	}
	out, err := exec.Command("bash", script, "--check").CombinedOutput()
	if err != nil {
		t.Fatalf("the Go package's copy of the core is stale: run scripts/amalgamate_go.sh "+
			"from the repository root and commit bindings/go/tether_core.cpp and bindings/go/include "+
			"(%v)\n%s", err, out)
	}
}
