package tests

import (
	"os/exec"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// A script whose first cell caps its own address space (RLIMIT_AS, just
// above what it uses: no room for another thread's stack) runs its next
// cell, as under python3. The runner started its warm-up's thread at its
// first wait for a request, after that cell, and died of "can't start new
// thread" there: the second cell never ran.
func TestRunAfterACellCappedThreads(t *testing.T) {
	const capped = "import resource\n" +
		"vm = next(int(l.split()[1]) * 1024 for l in open('/proc/self/status') if l.startswith('VmSize'))\n" +
		"resource.setrlimit(resource.RLIMIT_AS, (vm + (4 << 20), resource.RLIM_INFINITY))\n" +
		"print('capped')\n"
	const next = "print('next')\n"
	want, err := exec.Command(testkit.Python(t), "-c", capped+next).CombinedOutput()
	if err != nil || string(want) != "capped\nnext\n" {
		t.Skipf("python3 itself: %v, %q", err, want)
	}
	stdout, stderr, code := runEvalhost(t, "", "run", "-c", capped, "-c", next)
	if code != 0 || stdout != string(want) {
		t.Errorf("exit %d, stdout %q, want 0 and %q as python3's; stderr:\n%s", code, stdout, want, stderr)
	}
}
