package runner

import (
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// TestOwnFdsSpared: what a cell does to descriptors it did not open
// leaves the runner's (fds.py) working: the next cells' text, display,
// result and done arrive in order, whatever the one before closed,
// replaced or forked.
func TestOwnFdsSpared(t *testing.T) {
	const own = "import os, sys\nown = sorted(sys.modules['_evalhost_wire']._own_fds)\n"
	for _, c := range []struct{ name, cell, stdout string }{
		{"closerange of everything above 2", "import os\nos.closerange(3, 1 << 20)\nprint('closed')", "closed\n"},
		{"os.close of each refuses", own + "for fd in own:\n    try:\n        os.close(fd)\n    except OSError as e:\n        print(e)",
			strings.Repeat("[Errno 9] Bad file descriptor\n", 4)},
		{"os.fdopen of one refuses", own + "try:\n    os.fdopen(own[0], 'rb')\nexcept OSError as e:\n    print(e)", "[Errno 9] Bad file descriptor\n"},
		{"os.dup2 from one refuses", own + "try:\n    os.dup2(own[0], 50)\nexcept OSError as e:\n    print(e)", "[Errno 9] Bad file descriptor\n"},
		// The cell gets the number it named; the runner's moves elsewhere.
		{"os.dup2 onto each", own + "r, w = os.pipe()\nfor fd in own:\n    assert os.dup2(w, fd) == fd\n    os.write(fd, b'x')\n" +
			"print(os.read(r, 10), sorted(sys.modules['_evalhost_wire']._own_fds) != own)", "b'xxxx' True\n"},
		{"os.dup2 onto one from a bad fd", own + "try:\n    os.dup2(999999, own[0])\nexcept OSError as e:\n    print(e)\n" +
			"try:\n    os.fstat(own[0])\nexcept OSError as e:\n    print('gone:', e)", "[Errno 9] Bad file descriptor\ngone: [Errno 9] Bad file descriptor\n"},
		{"a fork child holds none of them", own + "r, w = os.pipe()\npid = os.fork()\nif pid == 0:\n" +
			"    bad = sum(1 for fd in own if not os.path.exists('/proc/self/fd/%d' % fd))\n    os.write(w, b'%d' % bad)\n    os._exit(0)\n" +
			"os.waitpid(pid, 0)\nprint(os.read(r, 10), sys.modules['_evalhost_wire']._own_fds == frozenset(own))", "b'4' True\n"},
		// A handler can cut into a send (which holds the send lock) or into
		// another handler's move: the move must neither wait for the lock there
		// nor leave a copy behind.
		{"a signal handler's os.dup2 onto the frames pipe", "import os, sys, signal\nw = sys.modules['_evalhost_wire']\n" +
			"def fds():\n    return {int(x) for x in os.listdir('/proc/self/fd') if os.path.exists('/proc/self/fd/' + x)} - w._own_fds\n" +
			"base = fds()\nn = os.open(os.devnull, os.O_WRONLY)\nhits = 0\ndef handler(*a):\n    global hits\n    fd = w._frames_fd\n" +
			"    os.dup2(n, fd)\n    os.close(fd)\n    hits += 1\nsignal.signal(signal.SIGALRM, handler)\n" +
			"signal.setitimer(signal.ITIMER_REAL, 0.0005, 0.0005)\nfor i in range(2000):\n    display(i)\n" +
			"signal.setitimer(signal.ITIMER_REAL, 0)\nsignal.signal(signal.SIGALRM, signal.SIG_DFL)\n" +
			"print(hits > 0, len(w._own_fds), fds() - base - {n})", "True 4 set()\n"},
		// A handler pending as the cell's os.dup2 blocks signals runs at the
		// next call, before the move: it moves the descriptor and closes its
		// number, so the outer move must find nothing of the runner's there.
		// The stand-in for that handler runs where it would, deterministically.
		{"a pending handler's move before the cell's own", "import os, sys\nw = sys.modules['_evalhost_wire']\n" +
			"n = os.open(os.devnull, os.O_WRONLY)\nfd = w._frames_fd\nlocker = w._lock_for_move\n" +
			"def pending():\n    w._lock_for_move = locker\n    os.dup2(n, fd)\n    os.close(fd)\n    return locker()\n" +
			"w._lock_for_move = pending\nprint(os.dup2(n, fd) == fd, fd in w._own_fds, w._lock_for_move is locker)", "True False True\n"},
		{"fd 1 pointed at a file", "import os, tempfile\nf = tempfile.TemporaryFile()\nkeep = os.dup(1)\nos.dup2(f.fileno(), 1)\n" +
			"print('into the file', flush=True)\ndisplay('a display')\nos.dup2(keep, 1)\nf.seek(0)\nprint(f.read())", "b'into the file\\n'\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := start(t, startOpts{})
			if r := p.run(c.cell); r.stdout != c.stdout || r.done().Status != "ok" {
				t.Fatalf("stdout %q, want %q; stderr %q; frames %+v", r.stdout, c.stdout, r.stderr, r.frames)
			}
			r := p.run("import sys\nprint('out')\nprint('err', file=sys.stderr)\ndisplay('shown')\nprint('after')\n6 * 7")
			if r.stdout != "out\nafter\n" || r.stderr != "err\n" || r.done().Status != "ok" {
				t.Errorf("the next cell: stdout %q, stderr %q, done %+v", r.stdout, r.stderr, r.done())
			}
			if d, ok := r.first(frames.TypeDisplay); !ok || text(t, d.Bundle, "text/plain") != "'shown'" {
				t.Errorf("the next cell's display: %+v", r.frames)
			}
			wantResult("42")(t, r)
		})
	}
}
