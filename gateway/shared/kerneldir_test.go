package shared

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// shortDir is a new directory whose path is short enough for sockets in
// it (t.TempDir's, named after the test, may not be).
func shortDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("/tmp", "s")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// A new gateway's kernel directory is the state directory's run/ while
// its sockets' paths fit, else a new private directory of the temporary
// directory's, which a directory others may replace is not.
func TestKernelDir(t *testing.T) {
	long := filepath.Join(shortDir(t), strings.Repeat("d", 60))
	if err := os.Mkdir(long, 0o700); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		state   func(t *testing.T) string
		tmpdir  func(t *testing.T) string // TMPDIR, when set
		want    func(state string) string // "" for a new temporary one
		wantErr string
	}{
		{name: "short state dir", state: shortDir,
			want: func(s string) string { return filepath.Join(s, "run") }},
		{name: "run opened by hand is closed again", state: func(t *testing.T) string {
			s := shortDir(t)
			if err := os.Mkdir(filepath.Join(s, "run"), 0o755); err != nil {
				t.Fatal(err)
			}
			return s
		}, want: func(s string) string { return filepath.Join(s, "run") }},
		{name: "run is a link", state: func(t *testing.T) string {
			s := shortDir(t)
			if err := os.Symlink(shortDir(t), filepath.Join(s, "run")); err != nil {
				t.Fatal(err)
			}
			return s
		}, wantErr: "not a directory"},
		{name: "long state dir", state: func(*testing.T) string { return long }},
		{name: "TMPDIR others may replace things in", state: func(*testing.T) string { return long },
			tmpdir: func(t *testing.T) string {
				d := shortDir(t)
				if err := os.Chmod(d, 0o777); err != nil {
					t.Fatal(err)
				}
				return d
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			state := tc.state(t)
			tmp := ""
			if tc.tmpdir != nil {
				tmp = tc.tmpdir(t)
				t.Setenv("TMPDIR", tmp)
			}
			got, err := kernelDir(state)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("kernelDir = %q, %v; want an error saying %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.want != nil {
				real, err := filepath.EvalSymlinks(state) // macOS: /tmp is /private/tmp
				if err != nil {
					t.Fatal(err)
				}
				if w := tc.want(real); got != w {
					t.Errorf("kernelDir = %s, want %s", got, w)
				}
			} else {
				t.Cleanup(func() { os.RemoveAll(got) })
				if !strings.HasPrefix(filepath.Base(got), tempKernelDir) || strings.HasPrefix(got, state) ||
					(tmp != "" && strings.HasPrefix(got, tmp)) {
					t.Errorf("kernelDir = %s, want a new %s* directory of a temporary directory others cannot replace it in", got, tempKernelDir)
				}
			}
			if !fitsSocketPath(got) {
				t.Errorf("kernelDir = %s: too long for its sockets", got)
			}
			if err := kernelsPrivate(Info{KernelDir: got}); err != nil {
				t.Errorf("kernelDir = %s: %v", got, err)
			}
		})
	}
}

// removeKernelDir removes a gateway's temporary kernel directory, and
// leaves the state directory's run/, which the next gateway uses.
func TestRemoveKernelDir(t *testing.T) {
	state := shortDir(t)
	run, err := kernelDir(state)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := kernelDir(state); err != nil || again != run {
		t.Fatalf("kernelDir again = %s, %v; want %s", again, err, run)
	}
	removeKernelDir(Info{KernelDir: run})
	if _, err := os.Stat(run); err != nil {
		t.Errorf("the state directory's %s was removed: %v", run, err)
	}
	long := filepath.Join(state, strings.Repeat("d", 60))
	if err := os.Mkdir(long, 0o700); err != nil {
		t.Fatal(err)
	}
	tmp, err := kernelDir(long)
	if err != nil {
		t.Fatal(err)
	}
	removeKernelDir(Info{KernelDir: tmp})
	if _, err := os.Stat(tmp); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the temporary kernel directory %s is left: %v", tmp, err)
	}
}

// A recorded gateway whose kernels may be open to others is not used.
func TestKernelsPrivate(t *testing.T) {
	open := shortDir(t)
	if err := os.Chmod(open, 0o755); err != nil {
		t.Fatal(err)
	}
	private := shortDir(t)
	if err := os.Chmod(private, 0o700); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, dir, want string
	}{
		{"older evalhost's, on TCP", "", "TCP"},
		{"gone", filepath.Join(private, "gone"), "no such file"},
		{"open to others", open, "open to others"},
		{"private", private, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := kernelsPrivate(Info{KernelDir: tc.dir})
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("kernelsPrivate(%q) = %v, want %q", tc.dir, err, tc.want)
			}
		})
	}
}

// A recorded gateway whose kernels may be open to others is replaced, and
// ended, the next time a kernel is wanted: one started by an evalhost
// whose kernels listened on TCP (its record names no kernel directory), and
// one whose kernel directory was opened (its temporary directory is then
// removed). Stop removes the last one's.
func TestExposedGatewayIsReplaced(t *testing.T) {
	home := freshHome(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := dirFor(home, testPython)
	first, err := Acquire(ctx, home, testPython)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(first.KernelDir) }) // its record forgets it
	if !strings.HasPrefix(filepath.Base(first.KernelDir), tempKernelDir) {
		t.Fatalf("kernel directory %s: the test wants a home too long for run/, to see the directory removed", first.KernelDir)
	}
	cases := []struct {
		name   string
		expose func(t *testing.T, rec *Info)
	}{
		{"kernels on TCP", func(t *testing.T, rec *Info) { rec.KernelDir = "" }},
		{"kernel directory opened", func(t *testing.T, rec *Info) {
			if err := os.Chmod(rec.KernelDir, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
	}
	prev := first
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := prev.Info
			tc.expose(t, &rec)
			if err := writeInfo(dir, rec); err != nil {
				t.Fatal(err)
			}
			ep, err := Acquire(ctx, home, testPython)
			if err != nil {
				t.Fatal(err)
			}
			if ep.Reused || ep.PID == prev.PID || ep.KernelDir == "" || ep.KernelDir == prev.KernelDir {
				t.Fatalf("Acquire = %+v; want a new gateway with a kernel directory of its own", ep.Info)
			}
			waitDead(t, prev.PID)
			if _, err := os.Stat(rec.KernelDir); rec.KernelDir != "" && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the replaced gateway's kernel directory %s is left: %v", rec.KernelDir, err)
			}
			prev = ep
		})
	}
	if err := StopFor(ctx, home, testPython); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(prev.KernelDir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stop left the gateway's temporary kernel directory %s: %v", prev.KernelDir, err)
	}
}
