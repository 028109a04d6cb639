package faults

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/evalhost/evalhost/internal/heappeak"
	"github.com/evalhost/evalhost/sessions"
	"github.com/evalhost/evalhost/streamsink"
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

// The host's heap stays flat whatever a cell prints. A sink that spills
// (serve's and mcp's bounds, run --max-output) leaves an artifact holding
// every byte the cell wrote; output the caller shows whole (run's live
// output, issue 16) leaves nothing in the artifacts directory.
func TestOutputFlood(t *testing.T) {
	mib := *floodMiB
	if testing.Short() {
		mib = min(mib, 64)
	}
	const block = 64 << 10
	line := strings.Repeat("x", block-1) + "\n"
	tests := []struct {
		name string
		code string
		want int64  // bytes printed
		sha  string // of what was printed
	}{
		{"flood of 64 KiB lines",
			"import sys\nb = 'x' * 65535 + '\\n'\nw = sys.stdout.write\nfor _ in range(" + strconv.Itoa(mib*16) + "):\n    w(b)",
			int64(mib) << 20, patternSHA(line, mib*16)},
		{"100 MB line without newline",
			"import sys\n_ = sys.stdout.write('y' * 100_000_000)",
			100_000_000, patternSHA(strings.Repeat("y", 1_000_000), 100)},
	}
	for _, whole := range []bool{false, true} {
		mode := "spilled"
		if whole {
			mode = "shown whole"
		}
		t.Run(mode, func(t *testing.T) {
			home := t.TempDir()
			dir := filepath.Join(home, "artifacts")
			// No cap, so a -flood.mib above the default cap still checks
			// every byte (the cap has tests of its own in streamsink).
			st := streamsink.NewStoreWith(dir, streamsink.StoreOptions{MaxTotal: -1})
			r := newRegistry(t, sessions.Config{Home: home, Sink: streamsink.Options{Store: st, NoSpill: whole}})
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					cell := flood(t, r, tc.code, tc.want)
					if whole {
						if cell.Output.ArtifactPath != "" || slices.ContainsFunc(cell.Output.Notices, func(n string) bool {
							return strings.Contains(n, streamsink.Scheme)
						}) {
							t.Errorf("output shown whole was also spilled: %s, notices %q", cell.Output.ArtifactPath, cell.Output.Notices)
						}
						if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) > 0 {
							t.Errorf("left %v in the artifacts directory", left)
						}
						return
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
		})
	}
}

// flood runs one cell that prints want bytes and checks what every sink
// mode keeps: each byte streamed and counted, a bounded tail, a flat heap.
func flood(t *testing.T, r *sessions.Registry, code string, want int64) sessions.CellResult {
	t.Helper()
	c := newCollector()
	c.keep = false
	hp := heappeak.Start()
	start := time.Now()
	res, err := r.Eval(context.Background(), sessions.Request{Cells: []sessions.Cell{pyT(code, 10*time.Minute)}}, c.emit)
	el := time.Since(start)
	growth := hp.Stop()
	if err != nil {
		t.Fatal(err)
	}
	cell := res.Cells[0]
	if cell.Status != sessions.StatusOK {
		t.Fatalf("cell: %+v", cell)
	}
	t.Logf("%d MB in %v (%.0f MB/s), host heap peak +%.1f MB", want/1e6, el.Round(time.Millisecond),
		float64(want)/1e6/el.Seconds(), float64(growth)/1e6)
	if c.bytes != want {
		t.Errorf("streamed %d bytes, want %d", c.bytes, want)
	}
	if cell.Output.TotalBytes != want {
		t.Errorf("summary counts %d bytes, want %d", cell.Output.TotalBytes, want)
	}
	if cell.Output.KeptBytes > 64<<10 || !cell.Output.Truncated {
		t.Errorf("tail keeps %d bytes (truncated %v); want a bounded tail", cell.Output.KeptBytes, cell.Output.Truncated)
	}
	// Bounded: the sink's tail and a few frames in flight, never the
	// output; 64 MB leaves room for the race detector's shadow.
	if growth > 64<<20 {
		t.Errorf("host heap grew by %d MB printing %d MB", growth>>20, want>>20)
	}
	return cell
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

// A flood larger than the artifacts cap never makes an artifact larger than
// the cap, also while it is written: it keeps the head and the last bytes,
// and the notice says it was capped.
func TestOutputFloodCappedArtifact(t *testing.T) {
	const limit = 8 << 20
	home := t.TempDir()
	dir := filepath.Join(home, "artifacts")
	st := streamsink.NewStoreWith(dir, streamsink.StoreOptions{MaxTotal: limit})
	r := newRegistry(t, sessions.Config{Home: home, Sink: streamsink.Options{Store: st}})
	var peak int64
	c := newCollector()
	c.keep = false
	c.onData = func(string) {
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, f := range files {
			if fi, err := os.Stat(f); err == nil {
				peak = max(peak, fi.Size())
			}
		}
	}
	const mib = 64
	code := "import sys\nb = 'x' * 65535 + '\\n'\nfor _ in range(" + strconv.Itoa(mib*16) + "):\n    sys.stdout.write(b)\nprint('the end')"
	res, err := r.Eval(context.Background(), sessions.Request{Cells: []sessions.Cell{pyT(code, 5*time.Minute)}}, c.emit)
	if err != nil {
		t.Fatal(err)
	}
	out := res.Cells[0].Output
	if res.Cells[0].Status != sessions.StatusOK || out.ArtifactPath == "" {
		t.Fatalf("cell %+v", res.Cells[0])
	}
	fi, err := os.Stat(out.ArtifactPath)
	if err != nil {
		t.Fatal(err)
	}
	if peak == 0 || peak > limit || fi.Size() > limit+200 {
		t.Errorf("artifact peaked at %d bytes while written and ends at %d; the cap is %d", peak, fi.Size(), limit)
	}
	data, _ := os.ReadFile(out.ArtifactPath)
	if !strings.HasPrefix(string(data), strings.Repeat("x", 65535)+"\n") || !strings.HasSuffix(string(data), "x\nthe end\n") ||
		!strings.Contains(string(data), "[ARTIFACT TRUNCATED: ") {
		t.Errorf("artifact lacks its head, its end or the truncation line")
	}
	if !slices.ContainsFunc(out.Notices, func(n string) bool {
		return strings.HasPrefix(n, "[head and tail of the output (artifact capped at 8.0 MiB): "+streamsink.Scheme+out.ArtifactID)
	}) {
		t.Errorf("notices %q do not say the artifact was capped", out.Notices)
	}
}
