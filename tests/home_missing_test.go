package tests

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A user whose HOME does not exist (/nonexistent, as system users have)
// is told to set EVALHOST_HOME, by a one-shot run and by run --session
// alike, and nothing is made there: as root, evalhost made
// /nonexistent/.evalhost.
func TestMissingHOMEIsRefused(t *testing.T) {
	home := filepath.Join(t.TempDir(), "nonexistent")
	t.Cleanup(func() { // a background process started there, had one been
		if _, err := os.Stat(filepath.Join(home, ".evalhost")); err == nil {
			stop := exec.Command(binary, "daemon", "stop")
			stop.Env = append(os.Environ(), "EVALHOST_HOME="+filepath.Join(home, ".evalhost"))
			stop.Run()
		}
	})
	for _, args := range [][]string{
		{"run", "-c", "print('ran')"},
		{"run", "--session", "s", "-c", "print('ran')"},
	} {
		t.Run(strings.Join(args[:len(args)-2], " "), func(t *testing.T) {
			cmd := exec.Command(binary, args...)
			cmd.Env = append(os.Environ(), "HOME="+home)
			out, stderr, code := runCaptured(t, cmd, false)
			want := "evalhost run: no home directory for evalhost: your home directory " + home + " (from HOME) does not exist, and evalhost does not make it; set EVALHOST_HOME to a private directory"
			if code != 2 || out != "" || !strings.Contains(stderr, want) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, stderr, want)
			}
			if _, err := os.Lstat(home); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("%s was made: %v", home, err)
			}
		})
	}
}
