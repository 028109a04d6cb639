package gateway

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
)

// TestFlushFromASignalHandler: a signal handler that prints with flush=True,
// run while the main thread waits in a flush of its own, neither deadlocks
// nor loses either line. The IOPub thread sends the signal only once the
// main thread is inside that flush (it cannot finish the flush meanwhile:
// the thread is busy sending it). Before sync_flushes took a reentrant lock,
// the handler's flush waited forever for the lock its own thread held.
func TestFlushFromASignalHandler(t *testing.T) {
	k := ownKernel(t, KernelOptions{})
	code := `import os, signal, sys, threading, time
main = threading.main_thread().ident
def in_flush():
    f = sys._current_frames().get(main)
    while f is not None:
        if f.f_code.co_name.startswith("flush"):
            return True
        f = f.f_back
    return False
def poke():
    while not in_flush():
        time.sleep(0.001)
    os.kill(os.getpid(), signal.SIGUSR1)
signal.signal(signal.SIGUSR1, lambda *_: print("handler", flush=True))
sys.stdout.pub_thread.schedule(poke)
print("outer", flush=True)
signal.signal(signal.SIGUSR1, signal.SIG_DFL)
print("after", flush=True)`
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got, _, err := run(t, k, ctx, frames.Request{ID: "sig", Code: code})
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	want := []string{"started", "stdout:outer\nhandler\nafter\n", "done:ok"}
	if got = joinStreams(got); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("frames:\n got %q\nwant %q", got, want)
	}
}
