package sessions

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// More first requests at once than MaxSessions: each session is busy, so
// none may be evicted. The new session used to be evicted the moment it was
// created (it was the only idle one), and 12 of 16 requests failed with
// "the session was closed", a retry too.
func TestLimitNeverEvictsNewOrBusySessions(t *testing.T) {
	const n = 16
	r := newTestRegistry(t, Config{MaxSessions: 4})
	dir := t.TempDir()
	release := filepath.Join(dir, "release")
	hold := fmt.Sprintf("while [ ! -e %s ]; do sleep 0.02; done; echo \"done $S\"", release)
	type outcome struct {
		id  string
		res Result
		c   *collector
		err error
	}
	outcomes := make(chan outcome, n)
	var wg sync.WaitGroup
	for i := range n {
		id := fmt.Sprintf("s%02d", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &collector{}
			res, err := r.Eval(context.Background(), Request{Session: id, Cwd: dir,
				Env: map[string]string{"S": id}, Cells: []Cell{sh(hold)}}, c.Cell)
			outcomes <- outcome{id, res, c, err}
		}()
	}
	// Every session is busy at once, or a request has already failed.
	waitFor(t, func() bool {
		busy := 0
		for _, s := range r.Sessions() {
			if s.Busy {
				busy++
			}
		}
		return busy == n || len(outcomes) > 0
	})
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(outcomes)
	for o := range outcomes {
		if o.err != nil {
			t.Errorf("%s: %v", o.id, o.err)
			continue
		}
		if o.res.Status != StatusOK || !strings.Contains(o.c.Output(), "done "+o.id) {
			t.Errorf("%s: %s %q", o.id, o.res.Status, o.c.Output())
		}
	}
	// As requests end, the idle sessions over the limit are shut down.
	if live := len(r.Sessions()); live != 4 {
		t.Errorf("%d sessions live after every request ended, want the limit, 4", live)
	}
}
