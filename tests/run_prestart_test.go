package tests

import (
	"os/exec"
	"slices"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// A one-shot run's spare reaper gets its head start only if package
// prestart's init runs as soon as package reap's has (reaper/launch's
// doc.go), not after the standard library's reflect, flag and
// encoding/json, which every fmt or strings import waits behind.
func TestPrestartInitComesEarly(t *testing.T) {
	ran := testkit.InitOrder(t, exec.Command(binary, "version"))
	at := slices.Index(ran, "github.com/evalhost/evalhost/cmd/evalhost/internal/prestart")
	if at < 0 {
		t.Fatalf("prestart's init did not run: %v", ran)
	}
	for _, late := range []string{"reflect", "flag", "encoding/json"} {
		if i := slices.Index(ran, late); i >= 0 && i < at {
			t.Errorf("%s was initialised before prestart; what ran first: %v", late, ran[:at+1])
		}
	}
}
