package faults

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/evalhost/evalhost/internal/heappeak"
	"github.com/evalhost/evalhost/sessions"
)

var floodMiB = flag.Int("flood.mib", 1024, "size of the output flood in MiB (in -short mode at most 64)")

// fileSHA returns a file's size and SHA-256.
func fileSHA(t *testing.T, path string) (int64, string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("artifact: %v", err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		t.Fatal(err)
	}
	return n, hex.EncodeToString(h.Sum(nil))
}

// patternSHA is the hash of n repetitions of block.
func patternSHA(block string, n int) string {
	h := sha256.New()
	b := []byte(block)
	for range n {
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// The host's heap stays flat whatever a cell prints, and the spilled
// artifact holds every byte the cell wrote.
func TestOutputFlood(t *testing.T) {
	mib := *floodMiB
	if testing.Short() {
		mib = min(mib, 64)
	}
	r := newRegistry(t, sessions.Config{})
	const block = 64 << 10
	line := strings.Repeat("x", block-1) + "\n"
	tests := []struct {
		name   string
		code   string
		want   int64  // bytes printed
		sha    string // of what was printed
		stream func(c *collector) bool
	}{
		{"flood of 64 KiB lines",
			"import sys\nb = 'x' * 65535 + '\\n'\nw = sys.stdout.write\nfor _ in range(" + strconv.Itoa(mib*16) + "):\n    w(b)",
			int64(mib) << 20, patternSHA(line, mib*16), nil},
		{"100 MB line without newline",
			"import sys\n_ = sys.stdout.write('y' * 100_000_000)",
			100_000_000, patternSHA(strings.Repeat("y", 1_000_000), 100), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCollector()
			c.keep = false
			hp := heappeak.Start()
			start := time.Now()
			res, err := r.Eval(context.Background(), sessions.Request{Cells: []sessions.Cell{pyT(tc.code, 10*time.Minute)}}, c.emit)
			el := time.Since(start)
			growth := hp.Stop()
			if err != nil {
				t.Fatal(err)
			}
			cell := res.Cells[0]
			if cell.Status != sessions.StatusOK {
				t.Fatalf("cell: %+v", cell)
			}
			t.Logf("%d MB in %v (%.0f MB/s), host heap peak +%.1f MB", tc.want/1e6, el.Round(time.Millisecond),
				float64(tc.want)/1e6/el.Seconds(), float64(growth)/1e6)
			if c.bytes != tc.want {
				t.Errorf("streamed %d bytes, want %d", c.bytes, tc.want)
			}
			if cell.Output.TotalBytes != tc.want {
				t.Errorf("summary counts %d bytes, want %d", cell.Output.TotalBytes, tc.want)
			}
			if cell.Output.KeptBytes > 64<<10 || !cell.Output.Truncated {
				t.Errorf("tail keeps %d bytes (truncated %v); want a bounded tail", cell.Output.KeptBytes, cell.Output.Truncated)
			}
			// Bounded: the sink's tail and a few frames in flight, never the
			// output; 64 MB leaves room for the race detector's shadow.
			if growth > 64<<20 {
				t.Errorf("host heap grew by %d MB printing %d MB", growth>>20, tc.want>>20)
			}
			if cell.Output.ArtifactPath == "" {
				t.Fatalf("no artifact; notices %q", cell.Output.Notices)
			}
			n, sum := fileSHA(t, cell.Output.ArtifactPath)
			if n != tc.want || sum != tc.sha {
				t.Errorf("artifact has %d bytes sha %s…, want %d bytes sha %s…", n, sum[:12], tc.want, tc.sha[:12])
			}
			_ = os.Remove(cell.Output.ArtifactPath)
		})
	}
}

// Invalid UTF-8 written straight to fd 1 and through sys.stdout.buffer
// becomes U+FFFD in the frames and the summary; the interpreter and the host
// carry on, and the artifact keeps the raw bytes.
func TestInvalidUTF8(t *testing.T) {
	r := newRegistry(t, sessions.Config{})
	tests := []struct {
		name string
		code string
		want string
	}{
		{"os.write", `import os; os.write(1, b'a\xff\xfeb\n')`, "a\uFFFD\uFFFDb\n"},
		{"buffer write", `import sys; sys.stdout.buffer.write(b'c\xc3(d\n'); sys.stdout.flush()`, "c\uFFFD(d\n"},
		{"truncated sequence at the end", `import os; _ = os.write(1, b'e\xe2\x82')`, "e\uFFFD"},
		{"surrogate encoded", `import os; os.write(1, b'f\xed\xa0\x80g\n')`, "f\uFFFD"},
		{"stderr too", `import os; os.write(2, b'h\x80i\n')`, "h\uFFFDi\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, c := eval(t, r, context.Background(), sessions.Request{Cells: []sessions.Cell{py(tc.code), py("print('next ok')")}})
			if res.Status != sessions.StatusOK {
				t.Fatalf("result: %+v\n%q", res, c.text())
			}
			if !c.valid || !utf8.ValidString(res.Cells[0].Output.Text) {
				t.Errorf("invalid UTF-8 reached a frame or the summary: %q", c.text())
			}
			if !strings.Contains(c.text(), tc.want) || !strings.Contains(res.Cells[0].Output.Text, tc.want) {
				t.Errorf("frames %q, summary %q; want %q in both", c.text(), res.Cells[0].Output.Text, tc.want)
			}
			if !strings.Contains(c.text(), "next ok") {
				t.Errorf("the next cell did not run: %q", c.text())
			}
		})
	}
}
