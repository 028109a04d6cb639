package remotetest

import (
	"encoding/binary"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/leakcheck"
)

// framePair is a connected pair of files that keep message boundaries, as
// a TAP device's file does: one end for the wire, one for the test.
func framePair(t *testing.T) (wireEnd, testEnd *os.File) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	testEnd = os.NewFile(uintptr(fds[1]), "test end")
	t.Cleanup(func() { testEnd.Close() })
	return os.NewFile(uintptr(fds[0]), "wire end"), testEnd
}

// TestWireBurst: a burst of frames crosses the wire in order, none before
// its delay, and the delay holds the burst once, not frame after frame.
func TestWireBurst(t *testing.T) {
	const d, n = 50 * time.Millisecond, 100
	t.Cleanup(leakcheck.Watchdog(t, time.Minute))
	leakcheck.Check(t, leakcheck.Options{FDs: true})
	a, in := framePair(t)
	b, out := framePair(t)
	w := newWire(a, b)
	t.Cleanup(func() {
		if err := w.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	w.setDelay(0, d)
	sent := make([]time.Time, n)
	for i := range n {
		var f [64]byte
		binary.BigEndian.PutUint32(f[:], uint32(i))
		sent[i] = time.Now()
		if _, err := in.Write(f[:]); err != nil {
			t.Fatal(err)
		}
	}
	buf := make([]byte, 1<<16)
	for i := range n {
		k, err := out.Read(buf)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if got := time.Since(sent[i]); got < d {
			t.Errorf("frame %d crossed in %v, before its %v delay", i, got, d)
		}
		if k != 64 || binary.BigEndian.Uint32(buf) != uint32(i) {
			t.Fatalf("frame %d: got frame %d of %d bytes: out of order", i, binary.BigEndian.Uint32(buf), k)
		}
	}
	// Held one after another the burst would take n*d (5 s); held once,
	// d and the copying. The bound is a quarter of that, far from both.
	if took := time.Since(sent[0]); took > n*d/4 {
		t.Errorf("the burst took %v to cross: its frames were held one after another", took)
	}
	// The other direction has no delay of its own.
	if _, err := out.Write([]byte("back")); err != nil {
		t.Fatal(err)
	}
	if k, err := in.Read(buf); err != nil || string(buf[:k]) != "back" {
		t.Errorf("the way back: %q, %v", buf[:k], err)
	}
}

// TestWireCloseWhileHolding: Close ends a wire that holds frames for an
// hour and returns once its goroutines are done; a second Close is safe.
func TestWireCloseWhileHolding(t *testing.T) {
	t.Cleanup(leakcheck.Watchdog(t, time.Minute))
	leakcheck.Check(t, leakcheck.Options{FDs: true})
	a, in := framePair(t)
	b, _ := framePair(t)
	w := newWire(a, b)
	w.setDelay(0, time.Hour)
	for range 3 {
		if _, err := in.Write([]byte("held")); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if err := w.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
}

// TestWireReportsAFailedEnd: an end that fails (its peer gone) is Close's
// error, not silence.
func TestWireReportsAFailedEnd(t *testing.T) {
	t.Cleanup(leakcheck.Watchdog(t, time.Minute))
	leakcheck.Check(t, leakcheck.Options{FDs: true})
	a, in := framePair(t)
	b, _ := framePair(t)
	w := newWire(a, b)
	in.Close() // end 0 now reads EOF
	<-w.failed
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), "reading end 0") {
		t.Errorf("Close: %v, want the failed read of end 0", err)
	}
}
