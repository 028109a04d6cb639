package testkit

import (
	"os"
	"strings"
	"sync"
)

// hermeticKeep are variables with a dropped prefix that the suite itself
// reads: its own switches and the interpreters .ci/run installed.
var hermeticKeep = []string{"EVALHOST_TEST_", "EVALHOST_SHARED_TEST_", "EVALHOST_FAULTS_", "EVALHOST_EG_VENV"}

// hermeticDrop are prefixes (ending in "_" or a name's whole) of what
// changes what python3, Jupyter or evalhost do without the tests asking:
// every PYTHON* (PYTHONUNBUFFERED, PYTHONWARNINGS, PYTHONPATH, ...);
// evalhost's own settings (EVALHOST_HOME, EVALHOST_DEBUG, ...) and the
// reference runtime's it honours (PI_*); an active venv or conda env, which
// resolution would pick; JUPYTER_* (kernelspec paths); the colour and
// Matplotlib backend switches.
var hermeticDrop = []string{"PYTHON", "EVALHOST_", "PI_", "VIRTUAL_ENV", "CONDA_PREFIX", "JUPYTER_",
	"MPLBACKEND", "NO_COLOR", "FORCE_COLOR"}

var hermeticOnce sync.Once

// hermeticMark says the environment was made hermetic by an ancestor.
const hermeticMark = "EVALHOST_TEST_HERMETIC"

// Hermetic unsets, once per test binary, the environment a developer's or
// a CI machine's shell may carry that would change what the code under
// test does (see hermeticDrop): the suite compares evalhost with python3
// byte for byte, and a PYTHONUNBUFFERED a container image sets, or an
// EVALHOST_DEBUG left in a shell, made tests fail on one machine and pass
// on another. TestMain calls it before anything reads the environment;
// [Python] calls it too, for packages without a TestMain. It returns the
// names it removed.
//
// A process the tests start inherits hermeticMark, and Hermetic leaves its
// environment alone: a helper process (a test binary re-executed) gets
// EVALHOST_HOME and the like from its parent on purpose.
func Hermetic() (removed []string) {
	hermeticOnce.Do(func() { removed = scrub() })
	return removed
}

// scrub is Hermetic's work, every time it is called.
func scrub() (removed []string) {
	if os.Getenv(hermeticMark) != "" {
		return nil
	}
	os.Setenv(hermeticMark, "1")
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if hermeticDropped(name) {
			os.Unsetenv(name)
			removed = append(removed, name)
		}
	}
	return removed
}

func hermeticDropped(name string) bool {
	for _, k := range hermeticKeep {
		if strings.HasPrefix(name, k) {
			return false
		}
	}
	for _, d := range hermeticDrop {
		if strings.HasPrefix(name, d) {
			return true
		}
	}
	return false
}
