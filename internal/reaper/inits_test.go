package reaper_test

import (
	"os"
	"os/exec"
	"slices"
	"testing"

	"github.com/evalhost/evalhost/internal/reaper/reap"
	"github.com/evalhost/evalhost/internal/testkit"
)

// A reaper's init takes over as soon as its own imports are initialised
// only if none of them becomes ready together with most of the standard
// library (strings did: reap/strs.go). This test binary, started as a spare
// with no socket, runs reap's init and exits there, so the inits
// GODEBUG=inittrace lists are the ones every reaper waits for. (Not in
// package reap: its own test binary has reap import what its tests do.)
func TestReaperInitComesEarly(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = []string{reap.EnvVar + "=" + reap.Spare}
	ran := testkit.InitOrder(t, cmd)
	if len(ran) == 0 || slices.Contains(ran, "testing") {
		t.Fatalf("the reaper's init did not take over; what ran: %v", ran)
	}
	// reflect is what fmt, and so flag and encoding/*, wait for; testing
	// links them all into this binary.
	for _, late := range []string{"reflect", "flag", "encoding/json"} {
		if slices.Contains(ran, late) {
			t.Errorf("%s was initialised before the reaper's init; what ran first: %v", late, ran)
		}
	}
}
