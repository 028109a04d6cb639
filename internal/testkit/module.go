package testkit

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
)

// RequireModulesEnv, set to 1, turns NeedModule's skip into a failure. make
// test sets it once test-deps has installed every module the tests use:
// there a skipped test would hide what it checks behind a green run.
const RequireModulesEnv = "EVALHOST_TEST_REQUIRE_MODULES"

var modules sync.Map // "<python>\x00<module>" -> *probed

type probed struct {
	once sync.Once
	err  error // why the module does not import, nil when it does
}

// NeedModule skips tb unless Python(tb) imports module, saying which
// interpreter lacks it and the pip package (pip) that provides it; under
// RequireModulesEnv=1 it fails tb instead.
func NeedModule(tb testing.TB, module, pip string) {
	tb.Helper()
	NeedModuleIn(tb, Python(tb), module, pip)
}

// NeedModuleIn is NeedModule for another interpreter than Python(tb): the
// python3 on PATH a session runs, say.
func NeedModuleIn(tb testing.TB, python, module, pip string) {
	tb.Helper()
	v, _ := modules.LoadOrStore(python+"\x00"+module, &probed{})
	p := v.(*probed)
	p.once.Do(func() { p.err = importable(python, module) })
	if p.err == nil {
		return
	}
	Unavailable(tb, fmt.Sprintf("%s cannot import %s (%v): pip install %s into it, or make test-deps", python, module, p.err, pip))
}

// Unavailable skips tb for want of what test-deps installs (a module, a
// venv), saying why; under RequireModulesEnv=1 it fails tb instead.
func Unavailable(tb testing.TB, why string) {
	tb.Helper()
	if os.Getenv(RequireModulesEnv) == "1" {
		tb.Fatalf("%s (%s=1: what test-deps installs must be there)", why, RequireModulesEnv)
	}
	tb.Skip(why)
}

// importable imports module in python: the import the tests need, not only
// a package found on the path (a broken install skips too, saying why).
func importable(python, module string) error {
	var stderr bytes.Buffer
	cmd := exec.Command(python, "-c", NbformatPrelude+"import "+module)
	// From /: in the checkout, `import mcp` finds the Go package's directory.
	cmd.Dir = "/"
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err == nil {
		return nil
	}
	// The exception's line, e.g. "ModuleNotFoundError: No module named 'IPython'".
	if lines := bytes.Split(bytes.TrimSpace(stderr.Bytes()), []byte("\n")); len(lines[len(lines)-1]) > 0 {
		return errors.New(string(lines[len(lines)-1]))
	}
	return err
}
