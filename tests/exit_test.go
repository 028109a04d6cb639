package tests

import (
	"os"
	"path/filepath"
	"testing"
)

// The interpreter leaves as Python's own exit does, though it skips the
// interpreter's teardown: what a cell left to the exit still happens.
func TestRunExitKeepsPythonExitSemantics(t *testing.T) {
	dir := t.TempDir()
	cells := []string{
		"f = open('unclosed.txt', 'w'); f.write('kept')",
		"import threading, time\nthreading.Thread(target=lambda: (time.sleep(0.3), open('thread.txt', 'w').write('joined'))).start()",
		"import atexit; atexit.register(lambda: open('atexit.txt', 'w').write('ran'))",
		"class Cycle:\n    def __del__(self): open('del.txt', 'w').write('finalized')\nc = Cycle(); c.me = c",
		"import sys, types\nm = types.ModuleType('held'); sys.modules['held'] = m\nm.f = open('module.txt', 'w'); m.f.write('flushed')",
	}
	args := []string{"run", "--cwd", dir}
	for _, c := range cells {
		args = append(args, "-c", c)
	}
	if out, err := command(t, args...).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, f := range []struct{ name, want string }{
		{"unclosed.txt", "kept"},  // a file the cell never closed is flushed
		{"thread.txt", "joined"},  // a non-daemon thread is waited for
		{"atexit.txt", "ran"},     // atexit handlers run
		{"del.txt", "finalized"},  // objects in a cycle are finalized
		{"module.txt", "flushed"}, // a file a module holds open is flushed
	} {
		b, err := os.ReadFile(filepath.Join(dir, f.name))
		if err != nil || string(b) != f.want {
			t.Errorf("%s: %q, %v; want %q", f.name, b, err, f.want)
		}
	}
}
