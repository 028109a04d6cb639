package config

import (
	"errors"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// nobody is a uid that is not the test's; tests that chown to it need root.
const nobody = 65534

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("changing a file's owner needs root")
	}
}

func TestHomeCreatedPrivate(t *testing.T) {
	home := filepath.Join(t.TempDir(), "new", "home")
	t.Setenv("EVALHOST_HOME", home)
	got, err := Home()
	if err != nil || got != home {
		t.Fatalf("Home() = %q, %v; want %q", got, err, home)
	}
	st, err := os.Stat(home)
	if err != nil {
		t.Fatal(err)
	}
	if perm := st.Mode().Perm(); perm != 0o700 {
		t.Fatalf("new home has mode %04o, want 0700", perm)
	}
}

func TestHomeRelativeIsMadeAbsolute(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("EVALHOST_HOME", "rel")
	got, err := Home()
	if err != nil || !filepath.IsAbs(got) || filepath.Base(got) != "rel" {
		t.Fatalf("Home() = %q, %v; want an absolute path ending in rel", got, err)
	}
}

// TestHomeRefusesUnsafe: a home or modules directory another user owns or
// can write to is refused, naming the path, the problem and the fix.
func TestHomeRefusesUnsafe(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, home string)
		want  []string
	}{
		{"home mode 0777", func(t *testing.T, home string) { chmod(t, home, 0o777) },
			[]string{"evalhost home", "writable by group or others (mode 0777)", "chmod go-w"}},
		{"home group-writable", func(t *testing.T, home string) { chmod(t, home, 0o770) },
			[]string{"evalhost home", "mode 0770"}},
		{"home owned by another user", func(t *testing.T, home string) { needRoot(t); chown(t, home, nobody) },
			[]string{"evalhost home", "owned by uid 65534, not by you", "set EVALHOST_HOME"}},
		{"modules mode 0777", func(t *testing.T, home string) { chmod(t, mkdir(t, home, "modules"), 0o777) },
			[]string{"modules directory", "modules: it is writable by group or others"}},
		{"modules owned by another user", func(t *testing.T, home string) {
			needRoot(t)
			chown(t, mkdir(t, home, "modules"), nobody)
		}, []string{"modules directory", "owned by uid 65534"}},
		{"parent writable by everyone", func(t *testing.T, home string) { chmod(t, filepath.Dir(home), 0o777) },
			[]string{"evalhost home", "above it is writable by everyone (mode 0777) without the sticky bit", "chmod o-w"}},
		{"parent owned by another user", func(t *testing.T, home string) { needRoot(t); chown(t, filepath.Dir(home), nobody) },
			[]string{"evalhost home", "above it is owned by uid 65534"}},
		{"home a link another user owns", func(t *testing.T, home string) {
			needRoot(t)
			real := mkdir(t, filepath.Dir(home), "real")
			os.Remove(home)
			if err := os.Symlink(real, home); err != nil {
				t.Fatal(err)
			}
			if err := os.Lchown(home, nobody, nobody); err != nil {
				t.Fatal(err)
			}
		}, []string{"evalhost home", "symbolic link owned by uid 65534"}},
		{"home is a file", func(t *testing.T, home string) {
			os.Remove(home)
			os.WriteFile(home, nil, 0o600)
		}, []string{"create evalhost home"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := mkdir(t, t.TempDir(), "home")
			tt.setup(t, home)
			t.Setenv("EVALHOST_HOME", home)
			_, err := Home()
			if err == nil {
				t.Fatal("Home() accepted an unsafe directory")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if tt.name != "home is a file" && !errors.Is(err, ErrUnsafe) {
				t.Errorf("error %v does not match ErrUnsafe", err)
			}
		})
	}
}

// A world-writable parent with the sticky bit (/tmp) lets no one else
// rename the home: it is accepted.
func TestHomeUnderStickyDir(t *testing.T) {
	parent := t.TempDir()
	chmod(t, parent, 0o777|os.ModeSticky)
	home := filepath.Join(parent, "home")
	t.Setenv("EVALHOST_HOME", home)
	if got, err := Home(); err != nil || got != home {
		t.Fatalf("Home() = %q, %v; want %q", got, err, home)
	}
}

func TestCheckDirSymlinkJudgedByTarget(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	target := mkdir(t, dir, "theirs")
	chown(t, target, nobody)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := CheckDir(link, "evalhost home"); !errors.Is(err, ErrUnsafe) {
		t.Fatalf("CheckDir(link to another user's dir) = %v, want ErrUnsafe", err)
	}
}

// With HOME unset the home is under the password database's home, never a
// shared temporary directory.
func TestHomeWithoutHOMEUsesPasswd(t *testing.T) {
	u, err := user.Current()
	if err != nil || u.HomeDir == "" {
		t.Skipf("no password entry for the test's user: %v", err)
	}
	t.Setenv("HOME", "")
	t.Setenv("EVALHOST_HOME", "")
	got, err := HomePath()
	if want := filepath.Join(u.HomeDir, ".evalhost"); err != nil || got != want {
		t.Fatalf("HomePath() = %q, %v; want %q", got, err, want)
	}
}

// A user with neither HOME nor a password entry is told to set
// EVALHOST_HOME. The check runs in a child under a uid with no entry.
func TestHomeWithoutAnyHomeRefuses(t *testing.T) {
	if os.Getenv("CONFIG_HELPER_NOHOME") == "1" {
		_, err := HomePath()
		if err == nil {
			os.Exit(3)
		}
		os.Stderr.WriteString(err.Error())
		if !errors.Is(err, ErrNoHome) {
			os.Exit(4)
		}
		os.Exit(0)
	}
	needRoot(t)
	const uid = 54321
	if _, err := user.LookupId("54321"); err == nil {
		t.Skip("uid 54321 has a password entry here")
	}
	// The child must be able to execute a copy of the test binary.
	dir, err := os.MkdirTemp("", "config-nohome-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	chmod(t, dir, 0o755)
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "config.test")
	if err := os.WriteFile(exe, self, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestHomeWithoutAnyHomeRefuses$")
	cmd.Env = []string{"CONFIG_HELPER_NOHOME=1", "PATH=/usr/bin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "set EVALHOST_HOME") {
		t.Fatalf("error %q does not say to set EVALHOST_HOME", out)
	}
}

func mkdir(t *testing.T, parent, name string) string {
	t.Helper()
	p := filepath.Join(parent, name)
	if err := os.Mkdir(p, 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}

func chmod(t *testing.T, p string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

func chown(t *testing.T, p string, uid int) {
	t.Helper()
	if err := os.Chown(p, uid, uid); err != nil {
		t.Fatal(err)
	}
}

// A relative HOME gives an absolute home: a relative one made the runner's
// path relative, and an interpreter started in a project's directory ran
// the runner.py found there under that path.
func TestHomeRelativeHOMEIsMadeAbsolute(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("EVALHOST_HOME", "")
	t.Setenv("HOME", "hh")
	got, err := HomePath()
	if want := filepath.Join(dir, "hh", ".evalhost"); err != nil || got != want {
		t.Fatalf("HomePath() = %q, %v; want %q", got, err, want)
	}
}

// A user whose home does not exist (HOME=/nonexistent, as system users
// have) is told to set EVALHOST_HOME, and nothing is made there: Home
// made the missing home too (as root, /nonexistent/.evalhost). An
// EVALHOST_HOME is still made with what is missing above it: the user
// named it.
func TestHomeMissingUserHomeRefuses(t *testing.T) {
	tests := []struct {
		name string
		home func(t *testing.T) string // HOME's value
	}{
		{"missing", func(t *testing.T) string { return filepath.Join(t.TempDir(), "nonexistent") }},
		{"missing deeper", func(t *testing.T) string { return filepath.Join(t.TempDir(), "no", "such") }},
		{"a link to nowhere", func(t *testing.T) string {
			dir := t.TempDir()
			link := filepath.Join(dir, "home")
			if err := os.Symlink(filepath.Join(dir, "no", "such"), link); err != nil {
				t.Fatal(err)
			}
			return link
		}},
		{"a file", func(t *testing.T) string {
			f := filepath.Join(t.TempDir(), "file")
			if err := os.WriteFile(f, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			return f
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := tt.home(t)
			t.Setenv("HOME", home)
			t.Setenv("EVALHOST_HOME", "")
			got, err := Home()
			if err == nil || !errors.Is(err, ErrNoHome) || !strings.Contains(err.Error(), "set EVALHOST_HOME") || !strings.Contains(err.Error(), home) {
				t.Fatalf("Home() = %q, %v; want ErrNoHome naming %s and saying to set EVALHOST_HOME", got, err, home)
			}
			if _, err := os.Lstat(filepath.Join(home, ".evalhost")); !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
				t.Fatalf("Home made %s/.evalhost: %v", home, err)
			}
		})
	}
}

// A user's home that goes, or becomes a link to nowhere, between Home's
// finding it and the making of ~/.evalhost gets nothing made: Home looked
// for the home, then made ~/.evalhost with MkdirAll, which made the home
// again (as root, with its parents). One mkdir in the home leaves the
// race nothing to make. EVALHOST_HOME is still made with its parents.
func TestHomeGoneBeforeMkdirMakesNothing(t *testing.T) {
	tests := []struct {
		name  string
		swap  func(t *testing.T, home string) // what happens to HOME before the mkdir
		gone  string                          // HOME's path relative to the test's dir, which must not be there
		check string                          // what must not exist after, relative to the test's dir
	}{
		{"removed", func(t *testing.T, home string) {
			if err := os.RemoveAll(filepath.Dir(home)); err != nil {
				t.Fatal(err)
			}
		}, "parent/user", "parent"},
		{"a link to nowhere", func(t *testing.T, home string) {
			if err := os.Remove(home); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(filepath.Dir(home), "no", "such"), home); err != nil {
				t.Fatal(err)
			}
		}, "parent/user", "parent/no"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			home := filepath.Join(dir, tt.gone)
			if err := os.MkdirAll(home, 0o700); err != nil {
				t.Fatal(err)
			}
			t.Setenv("HOME", home)
			t.Setenv("EVALHOST_HOME", "")
			beforeMakeHome = func(string) { tt.swap(t, home) }
			t.Cleanup(func() { beforeMakeHome = func(string) {} })
			got, err := Home()
			if !errors.Is(err, ErrNoHome) || !strings.Contains(err.Error(), home+" (from HOME) does not exist") || !strings.Contains(err.Error(), "set EVALHOST_HOME") {
				t.Fatalf("Home() = %q, %v; want ErrNoHome saying %s does not exist and to set EVALHOST_HOME", got, err, home)
			}
			if _, err := os.Lstat(filepath.Join(dir, tt.check)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("Home made %s: %v", filepath.Join(dir, tt.check), err)
			}
		})
	}
}
