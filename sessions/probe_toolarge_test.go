package sessions

import (
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/testkit"
)

// A candidate interpreter that cannot be run because this process's
// environment is more than execve takes (E2BIG) is said so, naming the
// largest variable and what to do, not "argument list too long".
func TestProbeEnvironmentTooLarge(t *testing.T) {
	python := testkit.Python(t)
	t.Setenv("LC_PROBE_BIG", strings.Repeat("a", 200_000))
	res := runProbe(python, t.TempDir(), time.Minute)
	const want = "cannot be started: this environment is too large to start a program with (its largest variable, LC_PROBE_BIG, is 200013 bytes); unset or shorten it"
	if res.err == nil || !strings.Contains(res.err.Error(), want) || strings.Contains(res.err.Error(), "argument list too long") {
		t.Fatalf("probe: %v\nwant %q", res.err, want)
	}
}
