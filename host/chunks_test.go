package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/evalhost/evalhost/frames"
)

// bulkLetters writes n 64 KiB chunks to fd 1, chunk i all of one letter, so
// a chunk read into a buffer that was reused would show the wrong letters.
const bulkLetters = "import sys\nfor i in range(%d): sys.stdout.buffer.write(bytes([65 + i %% 26]) * 65536)\nsys.stdout.flush()\n"

func wantLetters(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(strings.Repeat(string(rune(65+i%26)), 65536))
	}
	return b.String()
}

// Frames that Execute emits are the caller's to keep: text lent from a
// reader's chunk is copied before it goes out.
func TestEmittedTextIsKept(t *testing.T) {
	checkClean(t, time.Minute)
	p := startPy(t, nil)
	const n = 4 * chunkCount
	r := execute(t, p, context.Background(), fmt.Sprintf(bulkLetters, n))
	if r.err != nil || r.done.Status != frames.StatusOK {
		t.Fatalf("done = %+v, err = %v", r.done, r.err)
	}
	if got := r.stdout(); got != wantLetters(n) {
		t.Fatalf("kept stdout differs from what was written (%d bytes, want %d)", len(got), n*65536)
	}
}

// ExecuteStreams hands stdout and stderr to streams, in order with the
// frames, and no stream frames to emit.
func TestExecuteStreams(t *testing.T) {
	checkClean(t, time.Minute)
	p := startPy(t, nil)
	const n = 4 * chunkCount
	code := "import sys\nprint('a')\ndisplay('D1')\nprint('e', file=sys.stderr)\ndisplay('D2')\n" + fmt.Sprintf(bulkLetters, n) + "display('D3')\n"
	var got []string
	var bulk strings.Builder
	done, err := p.ExecuteStreams(context.Background(), frames.Request{Code: code}, func(f frames.Frame) {
		switch f.Type {
		case frames.TypeStdout, frames.TypeStderr:
			t.Errorf("emit got a %s frame", f.Type)
		case frames.TypeDisplay:
			s, _ := f.Bundle.Text("text/plain")
			got = append(got, s)
		}
	}, func(typ frames.Type, b []byte) {
		switch {
		case typ == frames.TypeStdout && len(got) == 4:
			bulk.Write(b) // a copy: b is only lent
		case typ == frames.TypeStdout:
			got = append(got, "out:"+string(b))
		default:
			got = append(got, "err:"+string(b))
		}
	})
	if err != nil || done.Status != frames.StatusOK {
		t.Fatalf("done = %+v, err = %v", done, err)
	}
	want := []string{"out:a\n", "'D1'", "err:e\n", "'D2'", "'D3'"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
	if bulk.String() != wantLetters(n) {
		t.Errorf("bulk text differs from what was written (%d bytes, want %d)", bulk.Len(), n*65536)
	}
}

// Text a cell's thread writes while no cell runs is kept for the next cell,
// a copy: the reader reads on meanwhile (more than the pipe holds, so a
// writer would block otherwise), and what the bound keeps is intact.
func TestTextBetweenCellsIsKept(t *testing.T) {
	checkClean(t, time.Minute)
	p := startPy(t, nil)
	const n = (pipeSize + pendingMaxBytes) >> 16 * 2 // more than the pipe and the bound hold
	written := filepath.Join(t.TempDir(), "written")
	first := "import sys, threading, time\ngo = threading.Event()\n" +
		"def later():\n    go.wait()\n    time.sleep(0.1)\n    " +
		strings.ReplaceAll(strings.TrimSuffix(fmt.Sprintf(bulkLetters, n), "\n"), "\n", "\n    ") +
		fmt.Sprintf("\n    open(%q, 'w').close()\n", written) +
		"th = threading.Thread(target=later)\nth.start()\n"
	for _, code := range []string{first, "go.set()"} {
		if r := execute(t, p, context.Background(), code); r.err != nil || r.stdout() != "" {
			t.Fatalf("stdout %d bytes, err %v", len(r.stdout()), r.err)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(written); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatal("the thread could not write: the reader stopped reading")
		}
	}
	r := execute(t, p, context.Background(), "th.join()")
	if got := r.stdout(); r.err != nil || got == "" || !strings.HasSuffix(wantLetters(n), got) {
		t.Fatalf("the %d bytes kept are not the end of what was written, err %v", len(got), r.err)
	}
	if w, ok := r.first(frames.TypeWarning); !ok || !strings.Contains(w.Message, "dropped") {
		t.Errorf("no warning that earlier output was dropped: %+v", w)
	}
}

// The loan rules without a process: a chunk comes back once however often
// its text is given back, own copies, and the reader waits while all are lent.
func TestChunkLoans(t *testing.T) {
	c := newChunks()
	var lent []string
	for range chunkCount {
		i, b := c.take(false)
		copy(b, "text")
		lent = append(lent, c.lend(i, 4))
	}
	got := make(chan string)
	go func() {
		i, b := c.take(false) // waits: every chunk is lent
		copy(b, "next")
		got <- c.lend(i, 4)
	}()
	kept := c.own(lent[0])
	if kept != "text" || unsafe.StringData(kept) == unsafe.StringData(lent[0]) {
		t.Fatalf("own gave %q at the chunk's own address", kept)
	}
	next := <-got // lent[0]'s chunk came back and was reused
	if unsafe.StringData(next) != unsafe.StringData(lent[0]) || kept != "text" {
		t.Fatalf("the chunk given back was not the one reused, or the copy changed: %q", kept)
	}
	c.giveBack(next)
	c.giveBack(next) // a second return is ignored: the chunk is free once
	c.giveBack("not lent")
	c.mu.Lock()
	free := len(c.free)
	c.mu.Unlock()
	if free != 1 {
		t.Fatalf("%d chunks free, want 1", free)
	}
}

// A quiet reader reuses the small first chunk; bulk output takes the large
// ones while any is free.
func TestChunkSizes(t *testing.T) {
	c := newChunks()
	i, b := c.take(false)
	if i != 0 || len(b) != firstChunk {
		t.Fatalf("a quiet read got chunk %d of %d bytes, want the first (%d)", i, len(b), firstChunk)
	}
	c.put(i) // not lent: stays taken
	c.giveBack(c.lend(i, 1))
	if i, b = c.take(true); i == 0 || len(b) != readSize {
		t.Fatalf("a bulk read got chunk %d of %d bytes, want a large one (%d)", i, len(b), readSize)
	}
	if i, _ = c.take(false); i != 0 {
		t.Fatalf("a quiet read got chunk %d, want the first", i)
	}
}
