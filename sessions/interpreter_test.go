package sessions

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
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
