package nbrun_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/config"
	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/internal/testkit"
	"github.com/evalhost/evalhost/nbrun"
	"github.com/evalhost/evalhost/notebook"
	"github.com/evalhost/evalhost/sessions"
)

// newRegistry is what a Go program does to run notebooks: the library's
// configuration under a private home, and a registry.
func newRegistry(t *testing.T) *sessions.Registry {
	t.Helper()
	t.Setenv("EVALHOST_HOME", t.TempDir())
	return testkit.Registry(t, 2*time.Minute, leakcheck.Options{}, func() *sessions.Registry {
		cfg, err := config.Sessions(config.Backend{Name: config.BackendRunner})
		if err != nil {
			t.Fatal(err)
		}
		return sessions.New(cfg)
	})
}

func newNotebook(t *testing.T, cells ...string) *notebook.Notebook {
	t.Helper()
	nb := notebook.New()
	for i, src := range cells {
		typ := notebook.Code
		if md, ok := strings.CutPrefix(src, "md:"); ok {
			typ, src = notebook.Markdown, md
		} else if raw, ok := strings.CutPrefix(src, "raw:"); ok {
			typ, src = notebook.Raw, raw
		}
		if err := nb.Insert(i, typ, src); err != nil {
			t.Fatal(err)
		}
	}
	return nb
}

func texts(nb *notebook.Notebook, i int) []string {
	var out []string
	for _, o := range nb.Outputs(i) {
		out = append(out, o.Type()+":"+o.Text())
	}
	return out
}

// TestRunThroughTheLibrary runs a notebook with nothing of cmd/evalhost:
// outputs, results, a display updated from a later cell, a failing cell
// that stops the run, and OnCellEnd seeing each cell's outputs.
func TestRunThroughTheLibrary(t *testing.T) {
	reg := newRegistry(t)
	nb := newNotebook(t,
		"md:# Title",
		"x = 41\nprint('hello')",
		"from IPython.display import display\nh = display('working', display_id=True)\nx + 1",
		"h.update('done')",
		"",
		"1/0",
		"print('never')")
	var ended []string
	res, err := nbrun.Run(context.Background(), reg, nb, nbrun.Options{Cwd: t.TempDir(),
		OnCellEnd: func(cell int, r sessions.CellResult) {
			ended = append(ended, string(r.Status)+":"+strings.Join(texts(nb, cell), ","))
		}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != sessions.StatusError || res.FailedCell() != 5 || len(res.Notebook) != 5 || res.Python == "" {
		t.Fatalf("result %+v", res)
	}
	want := [][]string{
		nil,
		{"stream:hello\n"},
		{"display_data:'done'", "execute_result:42"},
		nil,
		nil,
		{"error:ZeroDivisionError: division by zero"},
		nil,
	}
	for i, w := range want {
		if got := texts(nb, i); strings.Join(got, "|") != strings.Join(w, "|") {
			t.Errorf("cell %d outputs %q, want %q", i, got, w)
		}
	}
	if got := strings.Join(ended, "|"); !strings.HasPrefix(got, "ok:stream:hello\n|ok:display_data:'working',execute_result:42|ok:|error:") ||
		!strings.HasSuffix(got, "|skipped:") {
		t.Errorf("OnCellEnd saw %q", got)
	}
	if !strings.Contains(string(nb.Bytes()), `"language_info"`) {
		t.Error("language_info was not set")
	}
}

// A cancelled run keeps what the finished cells wrote; the running cell
// keeps its KeyboardInterrupt and cells that never started are left as
// they were.
func TestRunCancelled(t *testing.T) {
	reg := newRegistry(t)
	cwd := t.TempDir()
	fifo := filepath.Join(cwd, "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	nb := newNotebook(t, "print('one')",
		"import time\nprint('two', flush=True)\nopen('started', 'w').close()\ntime.sleep(60)",
		"print('three')")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// Opening the FIFO returns once the second cell opens it.
		if f, err := os.Open(fifo); err == nil {
			f.Close()
		}
		cancel()
	}()
	res, err := nbrun.Run(ctx, reg, nb, nbrun.Options{Cwd: cwd})
	if res.Status != sessions.StatusCancelled {
		// Unblock the goroutine if the cell never opened the FIFO.
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	}
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != sessions.StatusCancelled || res.FailedCell() != 1 {
		t.Fatalf("result %+v", res.Result)
	}
	if got := texts(nb, 0); len(got) != 1 || got[0] != "stream:one\n" {
		t.Errorf("finished cell: %q", got)
	}
	// One error output, the interpreter's, as Jupyter's interrupt records it.
	if got := texts(nb, 1); len(got) != 2 || got[0] != "stream:two\n" || got[1] != "error:KeyboardInterrupt: " {
		t.Errorf("cancelled cell: %q", got)
	}
	if got := texts(nb, 2); got != nil {
		t.Errorf("a cell that never started was changed: %q", got)
	}
}

// A stopped cell gets one error output, as Jupyter and papermill record
// an interrupted or timed-out cell: the interpreter's own (its
// KeyboardInterrupt) when it raised one, else one of nbrun's naming why.
func TestRunTimeout(t *testing.T) {
	tests := []struct {
		name, code string
		want       []string // the cell's outputs, each "type:text" as texts gives them
	}{
		{"interrupted", "print('partial', flush=True)\nwhile True: pass",
			[]string{"stream:partial\n", "error:KeyboardInterrupt: ", "stream:Command timed out after 1 seconds\n"}},
		{"caught the interrupt", "import time\ntry:\n    time.sleep(60)\nexcept KeyboardInterrupt:\n    print('caught')",
			[]string{"stream:caught\n", "stream:Command timed out after 1 seconds\n", "error:CellTimeoutError: "}},
		{"ignored the interrupt", "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('deaf', flush=True)\ntime.sleep(60)",
			[]string{"stream:deaf\n", "stream:Command timed out after 1 seconds\n", "error:CellTimeoutError: timed out; the interpreter did not stop within the grace window and was killed"}},
	}
	reg := newRegistry(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nb := newNotebook(t, tt.code)
			res, err := nbrun.Run(context.Background(), reg, nb, nbrun.Options{Cwd: t.TempDir(), Timeout: time.Second})
			if err != nil || res.Status != sessions.StatusTimeout {
				t.Fatalf("Run: %+v, %v", res.Result, err)
			}
			got := texts(nb, 0)
			if len(got) != len(tt.want) {
				t.Fatalf("outputs %q, want %q", got, tt.want)
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("output %d is %q, want %q (all: %q)", i, got[i], w, got)
				}
			}
		})
	}
}

func TestRunRefusals(t *testing.T) {
	nb := newNotebook(t, "md:x", "1")
	if _, err := nbrun.Run(context.Background(), nil, nb, nbrun.Options{}); !errors.Is(err, nbrun.ErrNoRegistry) {
		t.Errorf("nil registry: %v", err)
	}
	reg := sessions.New(sessions.Config{Home: t.TempDir()})
	defer reg.Close()
	if _, err := nbrun.Run(context.Background(), reg, nb, nbrun.Options{Cells: []int{0}}); !errors.Is(err, nbrun.ErrCellSpec) {
		t.Errorf("markdown cell selected: %v", err)
	}
}
