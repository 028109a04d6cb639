package sessions

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// A session's cwd removed and made again is another directory: the next
// request there starts a fresh session in it, as python3 started there
// would, and its first cell says the old state is gone and why (stateLost
// and the notice). The old interpreter sat in the removed directory, where
// os.getcwd() fails and every relative path is gone. The case runs with
// the key cache checking by stats (the key's second use) and watching
// (later uses), and with the old session busy: its running cell ends in
// its own interpreter, and the new request does not wait for it.
func TestRecreatedCwdStartsFresh(t *testing.T) {
	for _, tt := range []struct {
		name string
		uses int // requests in the old directory before it goes
		busy bool
	}{
		{"stat-checked key", 1, false},
		{"watched key", 4, false},
		{"old session busy", 2, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newTestRegistry(t, Config{})
			d := filepath.Join(t.TempDir(), "d")
			if err := os.Mkdir(d, 0o700); err != nil {
				t.Fatal(err)
			}
			for range tt.uses {
				if res, c := eval(t, r, Request{Session: "s", Cwd: d, Cells: []Cell{py("x = 1")}}); res.Status != StatusOK {
					t.Fatalf("x = 1: %+v %s", res, c.Output())
				}
			}
			var old sync.WaitGroup
			var oldRes Result
			if tt.busy {
				flag := filepath.Join(filepath.Dir(d), "flag")
				started := make(chan struct{})
				old.Add(1)
				go func() {
					defer old.Done()
					var once sync.Once
					oldRes, _ = r.Eval(context.Background(), Request{Session: "s", Cwd: d, Cells: []Cell{py(
						"import os, time\nprint('started', flush=True)\nwhile not os.path.exists(" + quote(flag) + "): time.sleep(0.01)\nprint(x)")}},
						func(_ int, f frames.Frame) {
							if f.Type == frames.TypeStdout {
								once.Do(func() { close(started) })
							}
						})
				}()
				<-started
				defer old.Wait()
				defer os.WriteFile(flag, nil, 0o600)
			}
			if err := os.RemoveAll(d); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(d, 0o700); err != nil {
				t.Fatal(err)
			}
			res, c := eval(t, r, Request{Session: "s", Cwd: d,
				Cells: []Cell{py("import os\nprint(os.getcwd(), 'x' in dir())")}})
			cell := res.Cells[0]
			if res.Status != StatusOK || !strings.Contains(c.Output(), d+" False") || !cell.StateLost ||
				!strings.Contains(c.Output(), "[state lost: session s's py interpreter") || !strings.Contains(c.Output(), "was left in "+d+", a directory since removed") {
				t.Fatalf("in the new directory: %s %+v, output %q; want a fresh session there, told why", res.Status, cell, c.Output())
			}
			if n := len(r.Sessions()); n != 1 {
				t.Fatalf("%d sessions listed, want 1: %+v", n, r.Sessions())
			}
			if tt.busy {
				os.WriteFile(filepath.Join(filepath.Dir(d), "flag"), nil, 0o600)
				old.Wait()
				if oldRes.Status != StatusOK {
					t.Fatalf("the old session's running cell: %+v, want it to end ok in its own interpreter", oldRes)
				}
			}
		})
	}
}
