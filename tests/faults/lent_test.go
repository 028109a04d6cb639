package faults

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/heappeak"
	"github.com/evalhost/evalhost/sessions"
	"github.com/evalhost/evalhost/streamsink"
)

// Output lent to the caller's writer (Request.Streams, as run takes it)
// arrives whole and in order, passed through as written, with the host's
// heap flat: no copy is made of it, and no artifact.
func TestOutputFloodLent(t *testing.T) {
	mib := *floodMiB
	if testing.Short() {
		mib = min(mib, 64)
	}
	line := strings.Repeat("x", 64<<10-1) + "\n"
	home := t.TempDir()
	r := newRegistry(t, sessions.Config{Home: home, Sink: streamsink.Options{Passthrough: true, NoSpill: true}})
	code := "import sys\nb = 'x' * 65535 + '\\n'\nw = sys.stdout.write\nfor _ in range(" + strconv.Itoa(mib*16) + "):\n    w(b)"
	h := sha256.New()
	var n int64
	req := sessions.Request{Cells: []sessions.Cell{pyT(code, 10*time.Minute)},
		Streams: func(_ int, typ frames.Type, p []byte) {
			if typ == frames.TypeStdout {
				n += int64(len(p))
				h.Write(p)
			}
		}}
	c := newCollector()
	hp := heappeak.Start()
	start := time.Now()
	res, err := r.Eval(context.Background(), req, c.emit)
	el := time.Since(start)
	growth := hp.Stop()
	if err != nil || res.Cells[0].Status != sessions.StatusOK {
		t.Fatalf("status %+v, err %v", res.Cells[0], err)
	}
	t.Logf("%d MiB in %v (%.0f MB/s), host heap peak +%.1f MB", mib, el.Round(time.Millisecond),
		float64(n)/1e6/el.Seconds(), float64(growth)/1e6)
	if want := int64(mib) << 20; n != want || res.Cells[0].Output.TotalBytes != want {
		t.Errorf("lent %d bytes, counted %d, want %d", n, res.Cells[0].Output.TotalBytes, want)
	}
	if sum := hex.EncodeToString(h.Sum(nil)); sum != patternSHA(line, mib*16) {
		t.Errorf("what was lent differs from what was written")
	}
	if c.bytes != 0 {
		t.Errorf("%d bytes also came as frames", c.bytes)
	}
	// The chunks (1 MiB per stream) and a few frames; 16 MB leaves room
	// for the race detector's shadow.
	if growth > 16<<20 {
		t.Errorf("host heap grew by %d MB printing %d MiB", growth>>20, mib)
	}
	if left, _ := filepath.Glob(filepath.Join(home, "artifacts", "*")); len(left) > 0 {
		t.Errorf("left %v in the artifacts directory", left)
	}
}
