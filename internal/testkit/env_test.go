package testkit

import (
	"os"
	"slices"
	"strings"
	"testing"
)

func TestHermeticDropped(t *testing.T) {
	for _, tc := range []struct {
		name string
		drop bool
	}{
		{"PYTHONUNBUFFERED", true},
		{"PYTHONPATH", true},
		{"PYTHON_COLORS", true},
		{"EVALHOST_DEBUG", true},
		{"EVALHOST_HOME", true},
		{"EVALHOST_REAPER", true},
		{"PI_PY", true},
		{"VIRTUAL_ENV", true},
		{"CONDA_PREFIX", true},
		{"JUPYTER_PATH", true},
		{"MPLBACKEND", true},
		{"NO_COLOR", true},
		{"EVALHOST_TEST_PYTHON", false},
		{"EVALHOST_TEST_REQUIRE_MODULES", false},
		{"EVALHOST_SHARED_TEST_HELPER", false},
		{"EVALHOST_FAULTS_HOME", false},
		{"EVALHOST_EG_VENV", false},
		{"PATH", false},
		{"HOME", false},
		{"LANG", false},
		{"PYENV_ROOT", false},
	} {
		if got := hermeticDropped(tc.name); got != tc.drop {
			t.Errorf("%s: dropped %v, want %v", tc.name, got, tc.drop)
		}
	}
}

func TestScrub(t *testing.T) {
	for _, tc := range []struct {
		name   string
		helper bool // the mark set: a process a test started
		want   []string
	}{
		{"the test binary", false, []string{"EVALHOST_HOME", "PYTHONWARNINGS"}},
		{"a helper process", true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, kv := range os.Environ() {
				if name, _, _ := strings.Cut(kv, "="); hermeticDropped(name) {
					t.Setenv(name, "") // t.Setenv restores it after
					os.Unsetenv(name)
				}
			}
			t.Setenv(hermeticMark, "")
			os.Unsetenv(hermeticMark)
			if tc.helper {
				t.Setenv(hermeticMark, "1")
			}
			t.Setenv("EVALHOST_HOME", "/given")
			t.Setenv("PYTHONWARNINGS", "error")
			t.Setenv("EVALHOST_TEST_PYTHON", "python3")
			removed := scrub()
			slices.Sort(removed)
			if !slices.Equal(removed, tc.want) {
				t.Errorf("removed %v, want %v", removed, tc.want)
			}
			_, home := os.LookupEnv("EVALHOST_HOME")
			if home != tc.helper || os.Getenv("EVALHOST_TEST_PYTHON") != "python3" || os.Getenv(hermeticMark) == "" {
				t.Errorf("after scrub: EVALHOST_HOME set %v, EVALHOST_TEST_PYTHON %q, mark %q",
					home, os.Getenv("EVALHOST_TEST_PYTHON"), os.Getenv(hermeticMark))
			}
		})
	}
}
