package sessions

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

func TestJobLogRead(t *testing.T) {
	var l jobLog
	l.frame(frames.Frame{Type: frames.TypeStdout, Data: "one\ntwo\n"})
	l.frame(frames.Frame{Type: frames.TypeStderr, Data: "thr"})
	l.frame(frames.Frame{Type: frames.TypeError, Ename: "E", Evalue: "v"}) // a block starts on its own line
	l.frame(frames.Frame{Type: frames.TypeStdout, Data: "é" + strings.Repeat("x", 20)})
	const all = "one\ntwo\nthr\nE: v\né" + "xxxxxxxxxxxxxxxxxxxx"
	tests := []struct {
		name            string
		offset          int64
		maxBytes, lines int
		text            string
		next            int64
		more            bool
	}{
		{"everything", 0, 1000, 100, all, int64(len(all)), false},
		{"from an offset", 4, 1000, 100, all[4:], int64(len(all)), false},
		{"cut after a line by bytes", 0, 10, 100, "one\ntwo\n", 8, true},
		{"cut by lines", 0, 1000, 2, "one\ntwo\n", 8, true},
		{"a bound narrower than a character still progresses", 17, 1, 100, "é", 19, true},
		{"a long line cut within it", 17, 5, 100, "éxxx", 22, true},
		{"mid-character offset starts at the next character", 18, 1000, 100, strings.Repeat("x", 20), int64(len(all)), false},
		{"at the end", int64(len(all)), 1000, 100, "", int64(len(all)), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := l.read(tt.offset, tt.maxBytes, tt.lines)
			if err != nil {
				t.Fatal(err)
			}
			if p.Text != tt.text || p.Next != tt.next || p.More != tt.more || p.Total != int64(len(all)) {
				t.Fatalf("read(%d) = %+v; want text %q next %d more %v", tt.offset, p, tt.text, tt.next, tt.more)
			}
		})
	}
	for _, bad := range []int64{-1, int64(len(all)) + 1} {
		if _, err := l.read(bad, 100, 100); !errors.Is(err, ErrBadRequest) {
			t.Errorf("read(%d) = %v; want ErrBadRequest", bad, err)
		}
	}
}

// Past the window, old output is dropped and a reader behind it learns how
// much it missed; offsets keep counting from the start.
func TestJobLogWindow(t *testing.T) {
	var l jobLog
	line := strings.Repeat("y", 1023) + "\n"
	for range 3 * jobWindow / len(line) {
		l.frame(frames.Frame{Type: frames.TypeStdout, Data: line})
	}
	total := int64(3 * jobWindow)
	p, err := l.read(0, 4096, 100)
	if err != nil {
		t.Fatal(err)
	}
	if p.Total != total || p.Elided == 0 || p.Offset != p.Elided || p.Text != line+line+line+line || p.Next != p.Offset+4096 {
		t.Fatalf("read(0) = offset %d elided %d next %d total %d; want the held output's start, %d bytes total", p.Offset, p.Elided, p.Next, p.Total, total)
	}
	if held := total - p.Offset; held < jobWindow || held > 2*jobWindow {
		t.Fatalf("%d bytes held; want between one and two windows", held)
	}
}

// Reading a log page by page from 0, passing each Next back, gives all of
// its text once, whatever the chunks and the bounds.
func FuzzJobLogPages(f *testing.F) {
	f.Add("one\ntwo\nthree\n", "é€😀 partial", uint8(4), uint8(2))
	f.Add("", "\n\n\n", uint8(1), uint8(1))
	f.Fuzz(func(t *testing.T, a, b string, maxBytes, maxLines uint8) {
		// The log holds the sink's output: always valid UTF-8.
		a, b = strings.ToValidUTF8(a, "\uFFFD"), strings.ToValidUTF8(b, "\uFFFD")
		var l jobLog
		l.frame(frames.Frame{Type: frames.TypeStdout, Data: a})
		l.frame(frames.Frame{Type: frames.TypeStderr, Data: b})
		var got strings.Builder
		for offset := int64(0); ; {
			p, err := l.read(offset, 4+int(maxBytes), int(maxLines))
			if err != nil {
				t.Fatal(err)
			}
			if p.Offset != offset || p.Next <= offset && p.Next != p.Total {
				t.Fatalf("read(%d) = %+v: no progress", offset, p)
			}
			got.WriteString(p.Text)
			if offset = p.Next; offset == p.Total {
				break
			}
		}
		if got.String() != a+b {
			t.Fatalf("pages gave %q, want %q", got.String(), a+b)
		}
	})
}

// Ended jobs beyond the newest keptLogs let go of their output; a read of
// one finds it elided, its size still known.
func TestEndedJobsDropTheirOutput(t *testing.T) {
	var table jobTable
	var jobs []*detachedJob
	for range keptLogs + 2 {
		d := &detachedJob{}
		d.log.frame(frames.Frame{Type: frames.TypeStdout, Data: "out\n"})
		d.id = table.add(d, &Config{})
		table.retire(d)
		jobs = append(jobs, d)
	}
	for i, d := range jobs {
		p, err := d.log.read(0, 100, 100)
		if err != nil {
			t.Fatal(err)
		}
		dropped := i < 2
		if p.Total != 4 || (p.Elided == 4) != dropped || (p.Text == "out\n") == dropped {
			t.Errorf("job %d: %+v; want its output dropped = %v", i, p, dropped)
		}
	}
}

// Job numbers start at Config.FirstJob and OnJobID hears each one, so a
// process that keeps them (the background process) never reuses an id.
func TestJobNumbersFromFirstJob(t *testing.T) {
	var heard []uint64
	cfg := &Config{FirstJob: 7, OnJobID: func(n uint64) { heard = append(heard, n) }}
	var table jobTable
	var ids []string
	for range 2 {
		ids = append(ids, table.add(&detachedJob{}, cfg))
	}
	if fmt.Sprint(ids) != "[job-7 job-8]" || fmt.Sprint(heard) != "[7 8]" {
		t.Errorf("ids %v, heard %v; want job-7, job-8 and 7, 8", ids, heard)
	}
}

// A job's display text is the sink's: an escape sequence inside HTML is
// removed whole (evalhost jobs showed "]52;c;aGk=").
func TestJobLogDisplayTextIsSanitised(t *testing.T) {
	var l jobLog
	b := frames.Bundle{}
	b.SetText("text/html", "<b>a\x1b]52;c;aGk=\x07b</b> &#27;[2Jc")
	l.frame(frames.Frame{Type: frames.TypeDisplay, Bundle: b})
	if got := string(l.buf); got != "ab c\n" {
		t.Errorf("job log %q, want %q", got, "ab c\n")
	}
}
