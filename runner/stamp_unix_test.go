//go:build unix

package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func changeTime(t testing.TB, path string) time.Time {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return time.Unix(st.Ctim.Unix())
}

// TestStampRefused forges a stamp that vouches for a changed core.py, in
// each way but the one Path trusts: the change must still be repaired.
func TestStampRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, stamp, text string)
	}{
		{"others may write it", func(t *testing.T, stamp, text string) {
			writeMode(t, stamp, text, 0o666)
		}},
		{"another user owns it", func(t *testing.T, stamp, text string) {
			writeMode(t, stamp, text, 0o600)
			chown(t, stamp, nobody)
		}},
		{"it is a symlink", func(t *testing.T, stamp, text string) {
			other := filepath.Join(t.TempDir(), "stamp")
			writeMode(t, other, text, 0o600)
			if err := os.Symlink(other, stamp); err != nil {
				t.Fatal(err)
			}
		}},
		{"it names another runner", func(t *testing.T, stamp, text string) {
			writeMode(t, stamp, strings.Replace(text, embeddedHash, "0123456789abcdef", 1), 0o600)
		}},
		{"it is a directory", func(t *testing.T, stamp, text string) {
			if err := os.Mkdir(stamp, 0o700); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := t.TempDir()
			dir := filepath.Dir(mustPath(t, cache))
			core := filepath.Join(dir, "core.py")
			b := []byte(embedded("core.py"))
			b[len(b)/2] ^= 1
			if err := os.WriteFile(core, b, 0o600); err != nil {
				t.Fatal(err)
			}
			text, ok := stampOf(dir, time.Time{})
			if !ok {
				t.Fatal("no stamp of the changed copy")
			}
			stamp := filepath.Join(dir, stampName)
			os.Remove(stamp)
			tc.plant(t, stamp, text)
			mustPath(t, cache)
			checkCopy(t, dir)
		})
	}
}

func writeMode(t *testing.T, path, text string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// TestStampWaitsOutTheRacyWindow: the copy a start has just written is
// compared, not stamped, until its files are older than racyWindow.
func TestStampWaitsOutTheRacyWindow(t *testing.T) {
	dir := filepath.Dir(mustPath(t, t.TempDir()))
	mustPath(t, filepath.Dir(dir))
	if _, err := os.Lstat(filepath.Join(dir, stampName)); !os.IsNotExist(err) {
		t.Fatalf("a stamp of files written just now: %v", err)
	}
}
