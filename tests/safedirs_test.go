package tests

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// teamProject makes root/srv/proj, a project another user (nobody) owns,
// with an extension module and, with venv, a .venv; it returns the
// project's directory.
func teamProject(t *testing.T, root string, venv bool) string {
	t.Helper()
	proj := filepath.Join(root, "srv", "proj")
	mkdirAs(t, filepath.Join(root, "srv"), 0o755, 0)
	mkdirAs(t, filepath.Join(proj, ".evalhost", "modules"), 0o755, 0)
	writeAs(t, filepath.Join(proj, ".evalhost", "modules", "team.py"), "TEAM = 'team'\n", 0)
	if venv {
		if out, err := exec.Command("python3", "-m", "venv", "--without-pip", filepath.Join(proj, ".venv")).CombinedOutput(); err != nil {
			t.Skipf("python3 -m venv: %v: %s", err, out)
		}
	}
	err := filepath.WalkDir(proj, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, nobody, nobody)
	})
	if err != nil {
		t.Fatal(err)
	}
	return proj
}

// TestSafeDirectories: a team's project another user owns has its .venv
// and .evalhost/modules refused, and the refusal says how to list it as a
// safe directory in the home; listed (or under a listed D/*, or with *),
// its venv's python is the one run and its modules load. A listed project
// everyone may write is still refused, a sibling of a listed one is, and a
// relative entry is refused saying what is wrong.
func TestSafeDirectories(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a project to another user needs root")
	}
	tests := []struct {
		name   string
		venv   bool   // the project has a .venv (else --python python3)
		safe   string // the home's safe-directories; %PROJ%, %SRV%; "" for none
		spoil  func(t *testing.T, proj string)
		stdout string // %PROJ%; "" when refused
		stderr string // in stderr
	}{
		{"venv and modules, not listed", true, "", nil, "",
			"refusing the .venv interpreter %PROJ%/.venv/bin/python, which another user could have put there"},
		{"venv and modules, listed", true, "%PROJ%\n", nil, "%PROJ%/.venv/bin/python team\n", ""},
		{"venv and modules, every directory", true, "*\n", nil, "%PROJ%/.venv/bin/python team\n", ""},
		{"venv and modules, under a listed D/*", true, "# the team's projects\n%SRV%/*\n", nil, "%PROJ%/.venv/bin/python team\n", ""},
		{"venv, listed, writable by everyone", true, "%PROJ%\n", func(t *testing.T, proj string) {
			if err := os.Chmod(proj, 0o777); err != nil {
				t.Fatal(err)
			}
		}, "", "the directory %PROJ% above it is writable by everyone (mode 0777) without the sticky bit"},
		{"venv, a sibling listed", true, "%SRV%/proj2\n", func(t *testing.T, proj string) {
			mkdirAs(t, filepath.Join(filepath.Dir(proj), "proj2"), 0o755, nobody)
		}, "", "the directory %PROJ% above it is owned by uid 65534"},
		{"venv, listed relative", true, "srv/proj\n", nil, "",
			`safe-directories:1: safe directory "srv/proj" is not an absolute path: write the directory's full path`},
		{"modules, not listed", false, "", nil, "",
			"[warning: extension module dir %PROJ%/.evalhost/modules and its modules were not loaded: the directory %PROJ% above it is owned by uid 65534"},
		{"modules, listed", false, "%PROJ%\n", nil, "team\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, home := t.TempDir(), t.TempDir()
			proj := teamProject(t, root, tt.venv)
			if tt.spoil != nil {
				tt.spoil(t, proj)
			}
			subst := strings.NewReplacer("%PROJ%", proj, "%SRV%", filepath.Dir(proj), "%HOME%", home)
			list := filepath.Join(home, "safe-directories")
			if tt.safe != "" {
				if err := os.WriteFile(list, []byte(subst.Replace(tt.safe)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			args := []string{"run", "-c", "import sys; print(sys.executable, TEAM)"}
			if !tt.venv {
				args = []string{"run", "--python", "python3", "-c", "print(TEAM)"}
			}
			cmd := exec.Command(binary, args...)
			cmd.Dir = proj
			cmd.Env = append(os.Environ(), "EVALHOST_HOME="+home)
			stdout, stderr, code := runCaptured(t, cmd, false)
			if want := subst.Replace(tt.stdout); want != "" && (code != 0 || stdout != want) {
				t.Errorf("exit %d, stdout %q; want 0 and %q; stderr %s", code, stdout, want, stderr)
			}
			if tt.stdout == "" && code == 0 {
				t.Errorf("exit 0, stdout %q; want the project refused; stderr %s", stdout, stderr)
			}
			if want := subst.Replace(tt.stderr); !strings.Contains(stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}
			if tt.safe == "" && !strings.Contains(stderr, "list it as a safe directory: echo "+proj+" >> "+list) {
				t.Errorf("the refusal does not say how to list the project:\n%s", stderr)
			}
		})
	}
}

// TestSafeDirectoriesAcrossCommands: run --session's background process,
// started before the project was listed, reads the list when it judges,
// so the listing applies to the next command without restarting it.
func TestSafeDirectoriesAcrossCommands(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a project to another user needs root")
	}
	h := newDaemonHome(t)
	proj := teamProject(t, t.TempDir(), true)
	in := func(session string) (string, string, int) {
		cmd := h.cmd("run", "--session", session, "-c", "import sys; print(sys.executable, TEAM)")
		cmd.Dir = proj
		return runCaptured(t, cmd, false)
	}
	if _, stderr, code := h.run("run", "--session", "warm", "-c", "1"); code != 0 {
		t.Fatalf("starting the background process: exit %d: %s", code, stderr)
	}
	if stdout, stderr, code := in("team"); code == 0 || !strings.Contains(stderr, "refusing the .venv interpreter") {
		t.Fatalf("not listed: exit %d, stdout %q, stderr %s; want the venv refused", code, stdout, stderr)
	}
	if err := os.WriteFile(filepath.Join(h.home, "safe-directories"), []byte(proj+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if stdout, stderr, code := in("team"); code != 0 || stdout != proj+"/.venv/bin/python team\n" {
		t.Fatalf("listed: exit %d, stdout %q, stderr %s; want the venv's python with the team's module", code, stdout, stderr)
	}
}

// TestSafeDirectoriesDoctor: doctor lists each entry with whom it trusts
// now (an exact entry's owner, which the line does not say) or why it
// waives nothing.
func TestSafeDirectoriesDoctor(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a project to another user needs root")
	}
	root, home := t.TempDir(), t.TempDir()
	proj := teamProject(t, root, false)
	srv := filepath.Dir(proj)
	list := proj + "\n" + srv + "/*\n*\n" + filepath.Join(root, "missing") + "\n"
	if err := os.WriteFile(filepath.Join(home, "safe-directories"), []byte(list), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "doctor", "--python", "python3")
	cmd.Env = append(os.Environ(), "EVALHOST_HOME="+home)
	stdout, stderr, _ := runCaptured(t, cmd, false)
	for _, want := range []string{
		"  " + proj + ": trusts uid 65534",
		"  " + srv + "/*: trusts every owner under it\n",
		"  *: trusts every owner, everywhere\n",
		"  " + filepath.Join(root, "missing") + ": waives nothing: ",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("doctor's stdout lacks %q:\n%s%s", want, stdout, stderr)
		}
	}
}
