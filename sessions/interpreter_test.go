package sessions

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// Concurrent first requests resolve the interpreter once: each used to
// start the interpreter to probe it, as many times as there were requests.
func TestConcurrentFirstRequestsProbeOnce(t *testing.T) {
	const n = 6
	real, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not on PATH")
	}
	dir := t.TempDir()
	count, release := filepath.Join(dir, "probes"), filepath.Join(dir, "release")
	// A fake interpreter that records each start and holds until released,
	// so every request is resolving while the first probe runs. Only the
	// probe passes -c; the runner it starts later is not counted.
	fake := filepath.Join(dir, "python")
	script := fmt.Sprintf("#!/bin/sh\nif [ \"$1\" = -c ]; then echo probe >> %q; while [ ! -e %q ]; do sleep 0.01; done; fi\nexec %q \"$@\"\n", count, release, real)
	if err := os.WriteFile(fake, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	r := newTestRegistry(t, Config{Python: fake, MaxSessions: n})
	var calling, wg sync.WaitGroup
	results := make([]Result, n)
	errs := make([]error, n)
	for i := range n {
		calling.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			calling.Done()
			results[i], errs[i] = r.Eval(context.Background(), Request{Session: fmt.Sprint("p", i), Cwd: dir, Cells: []Cell{py("print('ran')")}}, nil)
		}()
	}
	calling.Wait()
	waitFor(t, func() bool { _, err := os.Stat(count); return err == nil })
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || results[i].Status != StatusOK {
			t.Errorf("request %d: %v %+v", i, errs[i], results[i])
		}
	}
	data, err := os.ReadFile(count)
	if err != nil {
		t.Fatal(err)
	}
	if probes := strings.Count(string(data), "probe"); probes != 1 {
		t.Errorf("the interpreter was probed %d times for %d concurrent first requests, want once", probes, n)
	}
}

// A candidate that cannot be opened is "not found" only when it is not
// there: out of file descriptors (a flood of connections to the tool
// bridge) read as a missing interpreter.
func TestOpenErrorSaysWhy(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"missing", &fs.PathError{Op: "open", Path: "/x", Err: syscall.ENOENT}, "not found"},
		{"a file on the way", &fs.PathError{Op: "open", Path: "/x/y", Err: syscall.ENOTDIR}, "not found"},
		{"out of descriptors", &fs.PathError{Op: "open", Path: "/x", Err: syscall.EMFILE}, "too many open files"},
		{"no permission", &fs.PathError{Op: "open", Path: "/x", Err: syscall.EACCES}, "permission denied"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := openError(tc.err).Error(); got != tc.want {
				t.Fatalf("openError = %q, want %q", got, tc.want)
			}
		})
	}
}
