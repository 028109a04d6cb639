package sessions

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evalhost/evalhost/streamsink"
)

// Eight sessions each run a detached job while 1,000 polls read their
// output by offset: every job ends exactly once, and each job's output read
// page by page is its whole output, no line lost or doubled (checked line
// by line and by a checksum against the job's artifact).
func TestJobsUnderLoad(t *testing.T) {
	const sessions, polls = 8, 1000
	var ends jobEnds
	store := streamsink.NewStore(t.TempDir())
	// A small tail makes pages cut and the output spill to an artifact.
	r := newTestRegistry(t, Config{MaxSessions: sessions, OnJobEnd: ends.hook, Sink: streamsink.Options{MaxBytes: 2048, Store: store}})
	dir := t.TempDir()
	ids := make([]string, sessions)
	releases := make([]string, sessions)
	var wg sync.WaitGroup
	for i := range sessions {
		releases[i] = filepath.Join(dir, fmt.Sprintf("release%d", i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := r.Eval(context.Background(), Request{Session: fmt.Sprintf("load%d", i), Cwd: dir,
				Cells: []Cell{ticker(releases[i], 2*time.Millisecond)}}, nil)
			if err != nil || res.Cells[0].Status != StatusDetached {
				t.Errorf("session %d: %+v %v; want detached", i, res, err)
				return
			}
			ids[i] = res.Cells[0].Job
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	texts := make([]strings.Builder, sessions)
	offsets := make([]int64, sessions)
	read := func(i int) JobInfo {
		info, err := r.Job(ids[i], offsets[i])
		if err != nil {
			t.Errorf("job %s at %d: %v", ids[i], offsets[i], err)
			return JobInfo{Output: &JobOutput{}}
		}
		if out := info.Output; out.Offset != offsets[i] || out.Elided != 0 {
			t.Errorf("job %s read from %d: offset %d, elided %d", ids[i], offsets[i], out.Offset, out.Elided)
		}
		texts[i].WriteString(info.Output.Text)
		offsets[i] = info.Output.Next
		return info
	}
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range polls / sessions {
				read(i)
				time.Sleep(2 * time.Millisecond) // pace the polls across the output; nothing is asserted on time
			}
		}()
	}
	wg.Wait()
	for _, rel := range releases {
		release(t, rel)
	}
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := r.WaitJob(context.Background(), ids[i]); err != nil {
				t.Errorf("wait %s: %v", ids[i], err)
			}
			for info := read(i); info.Output.Next < info.OutputBytes; info = read(i) {
			}
		}()
	}
	wg.Wait()

	for i, id := range ids {
		got := ends.of(id)
		if len(got) != 1 || got[0].Status != StatusOK || got[0].Result == nil {
			t.Errorf("job %s ended %d times: %+v; want once, ok", id, len(got), got)
			continue
		}
		text := texts[i].String()
		n := checkLines(t, text, 0)
		if !strings.HasSuffix(text, fmt.Sprintf("end %d\n", n)) {
			t.Errorf("job %s: read output ends %q; want its end line", id, text[max(0, len(text)-40):])
		}
		res := got[0].Result
		if res.Output.ArtifactID == "" {
			t.Errorf("job %s: %d bytes and no artifact", id, len(text))
			continue
		}
		raw, err := os.ReadFile(res.Output.ArtifactPath)
		if err != nil {
			t.Fatal(err)
		}
		if sha256.Sum256([]byte(text)) != sha256.Sum256(raw) || int64(len(text)) != res.Output.TotalBytes {
			t.Errorf("job %s: %d bytes read by offset, %d in its artifact (%d counted): checksums differ", id, len(text), len(raw), res.Output.TotalBytes)
		}
	}
	for _, info := range r.Jobs() {
		if info.State != JobDone {
			t.Errorf("job %s still %s", info.ID, info.State)
		}
	}
}
