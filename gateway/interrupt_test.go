package gateway

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
)

// A SIGINT that comes just before a blocking call (time.sleep, a read)
// stays pending until the call returns: CPython runs its handler in the
// main thread, between bytecodes. The kernel wakes its main thread until
// the handler ran. Here the main thread blocks SIGINT, so that another
// thread takes it, and the cell announces itself only once the main
// thread sleeps in time.sleep (on that line, in a blocking system call):
// the race, made certain. The traceback shows the cell, not the handler.
func TestInterruptWakesTheMainThread(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the cell reads /proc, and the wake is a real-time signal")
	}
	k := ownKernel(t, KernelOptions{Grace: 10 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const code = `import os, signal, sys, threading, time
main = threading.main_thread().ident
def announce():
    stat = '/proc/self/task/%d/stat' % os.getpid()
    while sys._current_frames()[main].f_lineno != 11 or open(stat).read().rsplit(')', 1)[1].split()[0] != 'S':
        time.sleep(0.001)
    print('running', flush=True)
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
threading.Thread(target=announce).start()
try:
    time.sleep(60)
finally:
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})`
	var got []string
	var tb string
	done, err := k.Execute(ctx, frames.Request{ID: "blocked", Code: code}, func(f frames.Frame) {
		switch f.Type {
		case frames.TypeStdout:
			cancel()
		case frames.TypeError:
			tb = ansi.ReplaceAllString(strings.Join(f.Traceback, "\n"), "")
		}
		got = append(got, summary(f))
	})
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	want := "started,stdout:running\n,error:KeyboardInterrupt:,done:error:cancelled"
	if s := strings.Join(append(got, summary(done)), ","); s != want {
		t.Errorf("frames %q, want %q", s, want)
	}
	if !strings.Contains(tb, "time.sleep(60)") || strings.Contains(tb, "evalhost") || strings.Contains(tb, "on_sigint") {
		t.Errorf("traceback:\n%s", tb)
	}
}
