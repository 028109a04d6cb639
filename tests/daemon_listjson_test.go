package tests

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"
)

// sessions --json and jobs --json write the same line shape whether a
// background process runs or not: the keys of serve's reply, without the
// request id the command used to ask (which showed only when one ran).
func TestDaemonListJSONShapes(t *testing.T) {
	h := newDaemonHome(t)
	keys := func(args ...string) []string {
		t.Helper()
		out, stderr, code := h.run(args...)
		var line map[string]any
		if err := json.Unmarshal([]byte(out), &line); code != 0 || err != nil {
			t.Fatalf("%v: exit %d, stdout %q (%v), stderr %s", args, code, out, err, stderr)
		}
		return slices.Sorted(maps.Keys(line))
	}
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"sessions", []string{"sessions", "--json"}, []string{"sessions", "type"}},
		{"jobs", []string{"jobs", "--json"}, []string{"jobs", "type"}},
	}
	for _, tt := range tests {
		if got := keys(tt.args...); !slices.Equal(got, tt.want) {
			t.Errorf("%s, none running: keys %v, want %v", tt.name, got, tt.want)
		}
	}
	if _, stderr, code := h.run("run", "--session", "s", "-c", "1"); code != 0 {
		t.Fatalf("run --session: exit %d, stderr %s", code, stderr)
	}
	for _, tt := range tests {
		if got := keys(tt.args...); !slices.Equal(got, tt.want) {
			t.Errorf("%s, one running: keys %v, want %v", tt.name, got, tt.want)
		}
	}
}
