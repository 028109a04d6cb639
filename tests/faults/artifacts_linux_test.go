package faults

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/evalhost/evalhost/sessions"
	"github.com/evalhost/evalhost/streamsink"
)

// mountTmpfs mounts a tmpfs at dir with the given options, or skips the
// case when this process may not mount (not root, no CAP_SYS_ADMIN).
func mountTmpfs(t *testing.T, dir, opts string) {
	t.Helper()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, opts); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v); the parent-is-a-file case covers unwritable stores", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
}

// An artifacts directory that cannot be written never fails the cell: the
// output spills nowhere, the cell keeps its tail and says the full output
// was not saved. (Root ignores permission bits, so the cases use places
// even root cannot write.)
func TestArtifactsUnwritable(t *testing.T) {
	tests := []struct {
		name  string
		store func(t *testing.T) string
	}{
		{"parent is a regular file", func(t *testing.T) string {
			file := filepath.Join(t.TempDir(), "file")
			if err := os.WriteFile(file, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(file, "artifacts")
		}},
		{"full filesystem", func(t *testing.T) string {
			dir := t.TempDir()
			mountTmpfs(t, dir, "size=64k")
			return dir
		}},
		{"read-only filesystem", func(t *testing.T) string {
			dir := t.TempDir()
			mountTmpfs(t, dir, "size=1m")
			if err := syscall.Mount("", dir, "", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
				t.Skipf("cannot remount read-only: %v", err)
			}
			return dir
		}},
	}
	// 2 MB in numbered lines: far past the tail, so the sink must spill.
	const code = "for i in range(200000): print('line %06d' % i)"
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := tc.store(t)
			r := newRegistry(t, sessions.Config{Sink: streamsink.Options{Store: streamsink.NewStore(store)}})
			res, c := eval(t, r, context.Background(), sessions.Request{Cells: []sessions.Cell{py(code), py("print('next')")}})
			cell := res.Cells[0]
			if res.Status != sessions.StatusOK {
				t.Fatalf("result %+v", res)
			}
			if c.bytes < 2_000_000 {
				t.Errorf("streamed %d bytes, want all 2 MB live", c.bytes)
			}
			if !strings.HasSuffix(cell.Output.Text, "line 199999\n") || !cell.Output.Truncated {
				t.Errorf("tail does not end with the last line (truncated %v): …%q", cell.Output.Truncated,
					cell.Output.Text[max(len(cell.Output.Text)-40, 0):])
			}
			notices := strings.Join(cell.Output.Notices, "\n")
			if !strings.Contains(notices, "full output not saved") {
				t.Errorf("notices lack the unsaved-output notice: %q", notices)
			}
			if cell.Output.ArtifactID != "" && strings.Contains(notices, "[full output: ") {
				t.Errorf("claims a full artifact %s while it could not be written: %q", cell.Output.ArtifactID, notices)
			}
		})
	}
}

// TestArtifactsStayPrivateAndCapped (issue 19 item 6): a long-running
// registry (as serve keeps one) whose cells spill again and again keeps its
// artifacts directory under EVALHOST_ARTIFACTS_MAX, removing the oldest as
// each spill ends; artifacts are 0600 in a 0700 directory, and each cell's
// notice names the file its full output went to.
func TestArtifactsStayPrivateAndCapped(t *testing.T) {
	home := t.TempDir()
	t.Setenv("PI_ARTIFACTS_DIR", "")
	t.Setenv(streamsink.MaxTotalEnv, "1M")
	store, err := streamsink.StoreFromEnv(home)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(home, "artifacts")
	r := newRegistry(t, sessions.Config{Home: home, Sink: streamsink.Options{Store: store}})
	// 280 kB per cell: three cells fit the 1 MiB cap, a fourth does not.
	const code = "for i in range(20000): print('line %08d' % i)"
	var paths []string
	for i := range 6 {
		res, _ := eval(t, r, context.Background(), sessions.Request{Cells: []sessions.Cell{py(code)}})
		out := res.Cells[0].Output
		if res.Status != sessions.StatusOK || out.ArtifactPath == "" {
			t.Fatalf("cell %d: %+v", i, res)
		}
		paths = append(paths, out.ArtifactPath)
		if notices := strings.Join(out.Notices, "\n"); !strings.Contains(notices, " at "+out.ArtifactPath+"]") {
			t.Errorf("cell %d: the notices do not name %s: %q", i, out.ArtifactPath, notices)
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var total int64
		for _, e := range entries {
			fi, err := e.Info()
			if err != nil {
				t.Fatal(err)
			}
			total += fi.Size()
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("%s has mode %v, want 0600", e.Name(), fi.Mode().Perm())
			}
		}
		if total > 1<<20 {
			t.Errorf("cell %d: %d bytes in %s, over the 1 MiB cap", i, total, dir)
		}
		for j, p := range paths {
			_, err := os.Stat(p)
			if kept := err == nil; kept != (j > i-3) {
				t.Errorf("after cell %d: artifact of cell %d kept=%v; want the last three kept, older ones removed", i, j, kept)
			}
		}
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("%s: mode %v (%v), want 0700", dir, fi.Mode().Perm(), err)
	}
}
