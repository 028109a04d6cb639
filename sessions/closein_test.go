package sessions

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// CloseSessionIn and KillSessionIn end the session of an id in one cwd
// (any interpreter) and leave the same id in other cwds alone; cwd ""
// is every cwd, as CloseSession and KillSession, which ended the id in
// every cwd even when one command's second Ctrl-C or one evalhost kill
// meant its own. A removed cwd can still be named.
func TestCloseAndKillSessionIn(t *testing.T) {
	tests := []struct {
		name   string
		end    func(r *Registry, a, b string) bool
		keptIn []string // of "a", "b"
	}{
		{"close in a", func(r *Registry, a, b string) bool { return r.CloseSessionIn("s", a) }, []string{"b"}},
		{"kill in a", func(r *Registry, a, b string) bool { return r.KillSessionIn("s", a) }, []string{"b"}},
		{"close in a, relative", func(r *Registry, a, b string) bool { return r.CloseSessionIn("s", relTo(t, a)) }, []string{"b"}},
		{"close in every cwd", func(r *Registry, a, b string) bool { return r.CloseSessionIn("s", "") }, nil},
		{"kill in every cwd", func(r *Registry, a, b string) bool { return r.KillSession("s") }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newTestRegistry(t, Config{})
			dirs := map[string]string{"a": t.TempDir(), "b": t.TempDir()}
			for name, d := range dirs {
				eval(t, r, Request{Session: "s", Cwd: d, Cells: []Cell{py("x = " + quote(name))}})
			}
			if !tt.end(r, dirs["a"], dirs["b"]) {
				t.Fatal("no session found")
			}
			for name, d := range dirs {
				_, c := eval(t, r, Request{Session: "s", Cwd: d, Cells: []Cell{py("print(globals().get('x'))")}})
				kept := strings.Contains(c.Output(), name)
				if want := slices.Contains(tt.keptIn, name); kept != want {
					t.Errorf("session s in %s kept its state: %v, want %v (output %q)", name, kept, want, c.Output())
				}
			}
		})
	}
	t.Run("a removed cwd", func(t *testing.T) {
		r := newTestRegistry(t, Config{})
		d := filepath.Join(t.TempDir(), "gone")
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		eval(t, r, Request{Session: "s", Cwd: d, Cells: []Cell{py("x = 1")}})
		if err := os.Remove(d); err != nil {
			t.Fatal(err)
		}
		if !r.CloseSessionIn("s", d) || len(r.Sessions()) != 0 {
			t.Fatalf("the session of a removed cwd was not closed: %+v", r.Sessions())
		}
	})
}

// relTo is dir relative to the test's working directory.
func relTo(t *testing.T, dir string) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, dir)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}
