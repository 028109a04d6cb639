package runner

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// interruptedWriteCell points the cell's %[1]s (fd %[2]d) at a pipe of one
// page for a moment and prints a line much longer than the pipe holds, but
// short enough to sit whole in the stream's buffer, with flush=True. The
// buffer's flush blocks in write(2) once the pipe is full; a thread of the
// cell, woken by the first bytes, sends the real SIGINT to the main thread
// then, so write(2) returns a short count with a KeyboardInterrupt due: every
// time, not when a race is won. The thread drains the pipe once the cell has
// the KeyboardInterrupt. %[3]s is what the cell does then; %[4]s what it
// prints once the fd is back.
const interruptedWriteCell = `
import fcntl, os, select, signal, sys, termios, threading
stream, FD, N = sys.%[1]s, %[2]d, 60000
print("before", file=stream, flush=True)  # the stream's marks and syncs now, not into the pipe
r, w = os.pipe()
fcntl.fcntl(w, 1031, 4096)  # F_SETPIPE_SZ: one page
assert fcntl.fcntl(w, 1032) < N  # F_GETPIPE_SZ
got, main, go, landed = [], threading.get_ident(), threading.Event(), -1

def unread():
    return int.from_bytes(fcntl.ioctl(r, termios.FIONREAD, b"\0\0\0\0"), sys.byteorder)

def interrupt_then_drain():
    select.select([r], [], [])  # the write has begun: it fills the pipe and waits
    signal.pthread_kill(main, signal.SIGINT)
    go.wait()  # read nothing before the interrupt lands, so the write stays short
    while True:
        b = os.read(r, 1 << 16)
        if not b:
            break
        got.append(b)

t = threading.Thread(target=interrupt_then_drain)
t.start()
saved = os.dup(FD)
os.dup2(w, FD)
try:
    try:
        print("x" * N, file=stream, flush=True)
    except KeyboardInterrupt:
        landed = unread()
        go.set()
%[3]s
finally:
    go.set()
    os.dup2(saved, FD)
    os.close(saved)
    os.close(w)
    t.join()
    os.close(r)
    piped = b"".join(got)
    print("piped", piped.count(b"x"), piped.count(b"after\n"), landed, file=stream)
%[4]s
`

// TestInterruptedFlushWritesOnce: a KeyboardInterrupt that lands inside a
// flush, after write(2) put part of the buffer on the pipe, leaves the rest
// in the buffer and nothing of it twice (the runner's end-of-cell flush, or
// the cell's next one, wrote the whole buffer again, because the interrupt
// was raised in the runner's Python raw write after write(2), before the
// buffer counted the bytes). Each stream, with the interrupt uncaught (the
// cell's end flushes the rest) and caught (the cell flushes and prints on,
// losing nothing).
func TestInterruptedFlushWritesOnce(t *testing.T) {
	if os.Getpagesize() > 16384 {
		t.Skipf("a pipe holds at least a %d-byte page: more than the stream's buffer, so no flush blocks part way", os.Getpagesize())
	}
	for _, stream := range []struct {
		name string
		fd   int
	}{{"stdout", 1}, {"stderr", 2}} {
		for _, tc := range []struct {
			name        string
			handle      string // the rest of the cell's except clause
			after       string // printed once the fd is back
			wantStatus  string
			wantAfter   int // "after" lines that reached the pipe
			wantTrailer string
		}{
			{"uncaught", "        raise", "", frames.StatusError, 0, ""},
			{"caught", "    for i in range(3):\n        print('after', file=stream)\n    stream.flush()",
				"print('then', file=stream)", frames.StatusOK, 3, "then\n"},
		} {
			t.Run(stream.name+"/"+tc.name, func(t *testing.T) {
				p := start(t, startOpts{})
				c := p.run(fmt.Sprintf(interruptedWriteCell, stream.name, stream.fd, tc.handle, tc.after))
				if d := c.done(); d.Status != tc.wantStatus {
					t.Fatalf("done %+v, want status %s; frames %s; stderr %q", d, tc.wantStatus, frameTypes(c), c.stderr)
				}
				text := c.stdout
				if stream.fd == 2 {
					text = c.stderr
				}
				// What the pipe got and what reached the host after it add up
				// to the line once: x's in both, or twice over, mean a rewrite.
				var piped, after, landed int
				i := strings.Index(text, "piped ")
				if i < 0 {
					t.Fatalf("no piped line in %s: %q", stream.name, text)
				}
				if _, err := fmt.Sscanf(text[i:], "piped %d %d %d", &piped, &after, &landed); err != nil {
					t.Fatalf("piped line in %q: %v", text, err)
				}
				if landed <= 0 || landed >= 60000 {
					t.Fatalf("%d bytes in the pipe as the KeyboardInterrupt landed: not inside the write", landed)
				}
				rest := strings.Count(text, "x")
				if piped+rest != 60000 {
					t.Errorf("%d x's in the pipe + %d after it = %d, want 60000 (each once)", piped, rest, piped+rest)
				}
				if after != tc.wantAfter {
					t.Errorf("%d 'after' lines in the pipe, want %d", after, tc.wantAfter)
				}
				head := "before\n" + strings.Repeat("x", rest)
				tail := text[i:]
				if j := strings.Index(tail, "\n"); j >= 0 {
					tail = tail[j+1:]
				}
				if mid := strings.TrimPrefix(strings.TrimPrefix(text, head), "\n"); !strings.HasPrefix(text, head) || !strings.HasPrefix(mid, "piped ") || tail != tc.wantTrailer {
					t.Errorf("%s = %q, want before, the rest of the line, the piped line, %q", stream.name, text, tc.wantTrailer)
				}
			})
		}
	}
}
