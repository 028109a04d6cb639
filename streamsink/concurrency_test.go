package streamsink

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// Stores of several "processes" on one directory, creating at once, never
// hand out the same id.
func TestStoreConcurrentIDs(t *testing.T) {
	dir := t.TempDir()
	const workers, each = 4, 25
	ids := make([][]string, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			st := NewStore(dir)
			for range each {
				id, _, err := st.WriteFile("eval.log", []byte("x"))
				if err != nil {
					errs[w] = err
					return
				}
				ids[w] = append(ids[w], id)
			}
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for w := range workers {
		if errs[w] != nil {
			t.Fatalf("worker %d: %v", w, errs[w])
		}
		for _, id := range ids[w] {
			if seen[id] {
				t.Fatalf("id %s handed out twice", id)
			}
			seen[id] = true
		}
	}
	if len(seen) != workers*each {
		t.Errorf("%d ids, want %d", len(seen), workers*each)
	}
}

// Writers on both streams, frames and dumps at once: run with -race. Each
// stream's lines arrive whole and in order.
func TestSinkConcurrentUse(t *testing.T) {
	s := newSink(t, Options{Store: NewStore(t.TempDir()), MaxLines: 100000, MaxBytes: 1 << 20})
	const lines = 500
	var wg sync.WaitGroup
	for _, typ := range []frames.Type{frames.TypeStdout, frames.TypeStderr} {
		wg.Go(func() {
			for i := range lines {
				s.Frame(frames.Frame{Type: typ, Data: fmt.Sprintf("%s %d\n", typ, i)})
			}
		})
	}
	wg.Go(func() {
		for range 50 {
			_ = s.Dump()
		}
	})
	wg.Wait()
	d := closeDump(t, s)
	if d.TotalLines != 2*lines {
		t.Fatalf("total lines %d, want %d", d.TotalLines, 2*lines)
	}
	next := map[string]int{}
	for _, line := range strings.Split(strings.TrimSuffix(d.Text, "\n"), "\n") {
		var name string
		var n int
		if _, err := fmt.Sscanf(line, "%s %d", &name, &n); err != nil {
			t.Fatalf("torn line %q: %v", line, err)
		}
		if n != next[name] {
			t.Fatalf("%s line %d after %d", name, n, next[name]-1)
		}
		next[name]++
	}
}
