package sessions

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/leakcheck"
)

// BenchmarkJobPoll reads a running job's new output by offset, as an agent
// polling it does: one Registry.Job call per iteration, with a full tail
// (50 KiB) behind it.
func BenchmarkJobPoll(b *testing.B) {
	leakcheck.Check(b, leaks)
	r := New(Config{Home: b.TempDir()})
	defer r.Close()
	dir := b.TempDir()
	rel := filepath.Join(dir, "release")
	res, err := r.Eval(context.Background(), Request{Cwd: dir, Cells: []Cell{ticker(rel, time.Millisecond)}}, nil)
	if err != nil || res.Cells[0].Status != StatusDetached {
		b.Fatalf("%+v %v", res, err)
	}
	job := res.Cells[0].Job
	var offset int64
	for b.Loop() {
		info, err := r.Job(job, offset)
		if err != nil {
			b.Fatal(err)
		}
		offset = info.Output.Next
	}
	b.StopTimer()
	if err := releaseFile(rel); err != nil {
		b.Fatal(err)
	}
	if _, err := r.WaitJob(context.Background(), job); err != nil {
		b.Fatal(err)
	}
}
