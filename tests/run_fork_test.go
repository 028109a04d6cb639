package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// TestRunForkWarnsAsPython: 3.12+ warns at a fork in a process of several
// threads; a script's fork under evalhost run warns as python3's does, not
// of the runner's own threads (runner/forks.py): silent with none of the
// user's, under warnings as errors too, in or out of catch_warnings; shown,
// at the script's line, with one of the user's, and in a forked child that
// started one; os.forkpty too.
func TestRunForkWarnsAsPython(t *testing.T) {
	const wait = "if pid == 0:\n    os._exit(0)\nos.waitpid(pid, 0)\n"
	scripts := []struct{ name, src string }{
		{"alone", "import os\npid = os.fork()\n" + wait + "print('done')\n"},
		{"warnings as errors", "import os, warnings\nwarnings.simplefilter('error')\npid = os.fork()\n" + wait + "print('done')\n"},
		{"in catch_warnings", "import os, warnings\nwith warnings.catch_warnings():\n    warnings.simplefilter('error')\n    pid = os.fork()\n" +
			"    if pid == 0:\n        os._exit(0)\nos.waitpid(pid, 0)\nprint('done', len(warnings.filters))\n"},
		{"the filters after", "import os, warnings\npid = os.fork()\n" + wait + "print(warnings.filters)\n"},
		{"a thread of the user's", "import os, threading\ne = threading.Event()\nt = threading.Thread(target=e.wait)\nt.start()\n" +
			"pid = os.fork()\n" + wait + "e.set()\nt.join()\nprint('done')\n"},
		{"a child's thread", "import os, sys, threading\npid = os.fork()\nif pid == 0:\n    e = threading.Event()\n" +
			"    t = threading.Thread(target=e.wait)\n    t.start()\n    p2 = os.fork()\n    if p2 == 0:\n        os._exit(0)\n" +
			"    os.waitpid(p2, 0)\n    e.set()\n    t.join()\n    sys.stderr.flush()\n    os._exit(0)\nos.waitpid(pid, 0)\nprint('done')\n"},
		{"forkpty", "import os\npid, fd = os.forkpty()\n" + wait + "print('done')\n"},
	}
	pids := regexp.MustCompile(`pid=\d+`)
	norm := func(s string) string { return pids.ReplaceAllString(s, "pid=N") }
	// "": the interpreter under test (EVALHOST_TEST_PYTHON's: 3.14's lock
	// around its filters' version)
	for _, version := range []string{"", "3.12", "3.13"} {
		t.Run("python"+version, func(t *testing.T) {
			python := testkit.Python(t)
			if version != "" {
				python = testkit.PythonVersion(t, version)
			}
			dir := t.TempDir()
			for _, sc := range scripts {
				t.Run(sc.name, func(t *testing.T) {
					path := filepath.Join(dir, regexp.MustCompile(`\W`).ReplaceAllString(sc.name, "_")+".py")
					if err := os.WriteFile(path, []byte(sc.src), 0o600); err != nil {
						t.Fatal(err)
					}
					parityRunWith(t, python, dir, "", norm, path)
					parityRunWith(t, python, dir, "", norm, "-c", sc.src)
				})
			}
		})
	}
}
