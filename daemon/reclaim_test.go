package daemon

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/sessions"
)

// What a crashed process left is told once: its sessions go to lost.json
// for their next cells, and the command that found it says nothing more
// (it said "the state of its sessions (...) is lost" as well), unless
// lost.json cannot take them; ToldEnded leaves out the session its
// command told, and does nothing for another process's state.
func TestReclaimTellsOnce(t *testing.T) {
	a := sessions.Key{Session: "a", Cwd: "/x"}
	b := sessions.Key{Session: "b", Cwd: "/y"}
	tests := []struct {
		name      string
		pid       int // the pid ToldEnded names; 0: reclaim
		blockLost bool
		notice    string // "" none
		lost      []string
	}{
		{"reclaim", 0, false, "", []string{"a", "b"}},
		{"lost.json cannot be written", 0, true, "the state of its sessions (a, b) is lost", nil},
		{"a's command was told", 4242, false, "", []string{"b"}},
		{"another process's state", 1, false, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			paths := PathsFor(t.TempDir())
			if err := ensureDir(paths.Dir); err != nil {
				t.Fatal(err)
			}
			st, _ := json.Marshal(State{PID: 4242, Sessions: []string{"a", "b"},
				Held: []sessions.Loss{{Key: a, Languages: []string{"py"}}, {Key: b, Languages: []string{"py"}}}})
			if err := os.WriteFile(paths.State, st, 0o600); err != nil {
				t.Fatal(err)
			}
			if tt.blockLost {
				if err := os.Mkdir(paths.Lost, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			var notices []string
			var err error
			if tt.pid == 0 {
				notices, err = reclaim(paths, nil)
			} else {
				err = ToldEnded(paths, tt.pid, "a", "/x")
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(notices, "\n"); (tt.notice == "") != (got == "") || !strings.Contains(got, tt.notice) {
				t.Fatalf("notices %q, want %q", got, tt.notice)
			}
			var lost []string
			for _, l := range readLost(openRoot(t, paths.Dir), "lost.json") {
				lost = append(lost, l.Key.Session)
			}
			if strings.Join(lost, ",") != strings.Join(tt.lost, ",") {
				t.Fatalf("lost.json holds %v, want %v", lost, tt.lost)
			}
		})
	}
}
