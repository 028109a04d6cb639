package timeline

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// start approximates the process start: package initialisation runs before
// main, within a millisecond of exec for a Go binary.
var start = time.Now()

var (
	out atomic.Pointer[writer]
)

type writer struct {
	mu sync.Mutex
	w  io.Writer
}

// Enable writes every later Mark to w; nil turns the timeline off.
func Enable(w io.Writer) {
	if w == nil {
		out.Store(nil)
		return
	}
	out.Store(&writer{w: w})
}

// Enabled reports whether marks are written.
func Enabled() bool { return out.Load() != nil }

// Mark records that phase was reached now; detail is key, value pairs.
func Mark(phase string, detail ...any) { mark(time.Now(), phase, detail) }

// MarkAt records that phase was reached at t, for a phase that may come
// before Enable (work started during package initialisation): its line is
// written when MarkAt is called, with t's time.
func MarkAt(t time.Time, phase string, detail ...any) { mark(t, phase, detail) }

func mark(t time.Time, phase string, detail []any) {
	w := out.Load()
	if w == nil {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "evalhost: timeline %8.3fms %s", float64(t.Sub(start).Microseconds())/1000, phase)
	for i := 0; i+1 < len(detail); i += 2 {
		fmt.Fprintf(&b, " %v=%v", detail[i], detail[i+1])
	}
	b.WriteByte('\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	io.WriteString(w.w, b.String())
}
