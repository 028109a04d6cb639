//go:build unix

package runner

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestBytecodeCacheSeesAnInPlaceEdit: core.py written in place after its
// cache was, the same inode and size, in a later tick of the file clock, is
// compiled afresh: the cache's key holds the file's times, not only its
// inode and size. (Path would replace such a file at the next start; this
// runner is started without it.)
func TestBytecodeCacheSeesAnInPlaceEdit(t *testing.T) {
	path, err := Path(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	coreCache(t, path)
	core := filepath.Join(filepath.Dir(path), "core.py")
	old, edit := `RUNNER_VERSION = "1.1"`, `RUNNER_VERSION = "1.2"`
	at := strings.Index(embedded("core.py"), old)
	if at < 0 {
		t.Fatalf("core.py has no %s", old)
	}
	before, err := os.Stat(core)
	if err != nil {
		t.Fatal(err)
	}
	written := changeTime(t, core)
	f, err := os.OpenFile(core, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Written again until the clock ticks: an event awaited, not a time.
	for deadline := time.Now().Add(watchdog); changeTime(t, core).Equal(written); runtime.Gosched() {
		if time.Now().After(deadline) {
			t.Fatalf("watchdog: core.py's change time still %v", written)
		}
		if _, err := f.WriteAt([]byte(edit), int64(at)); err != nil {
			t.Fatal(err)
		}
	}
	after, err := os.Stat(core)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) || before.Size() != after.Size() {
		t.Fatalf("core.py replaced or resized: %v, %v", before, after)
	}
	if got := start(t, startOpts{runner: path}).ready.Runner; got != "1.2" {
		t.Errorf("ready runner version %q after the edit, want 1.2: the stale cache ran", got)
	}
}
