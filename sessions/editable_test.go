package sessions

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/testkit"
)

// TestEditableInstallJudged: pip install -e (setuptools 64+) puts a .pth
// in site-packages whose import line imports a finder module beside it,
// so the venv's python runs that module at every start. A finder another
// user owns or may write, or its cached bytecode, is refused as the .pth
// would be; the one pip made is not.
func TestEditableInstallJudged(t *testing.T) {
	testkit.Clean(t, 5*time.Minute)
	template := t.TempDir()
	finder := editableVenv(t, template, false)
	site := func(t *testing.T, cwd string) string { return sitePackages(t, filepath.Join(cwd, ".venv")) }
	third := func(name string) func(t *testing.T, cwd string) {
		return func(t *testing.T, cwd string) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to give a file to another user")
			}
			paths, _ := filepath.Glob(filepath.Join(site(t, cwd), name))
			if len(paths) != 1 {
				t.Fatalf("%s in site-packages: %v", name, paths)
			}
			if err := os.Lchown(paths[0], 54321, 54321); err != nil {
				t.Fatal(err)
			}
		}
	}
	theirs := giveProject
	// later makes the finder map mypkg to cwd/proj's copy of the project,
	// and a .pth sorted after the finder's import it at start, as a
	// package's start-up hook would; then spoils cwd/proj.
	later := func(spoil func(t *testing.T, cwd string)) func(t *testing.T, cwd string) {
		return func(t *testing.T, cwd string) {
			copyVenv(t, filepath.Join(template, "proj"), filepath.Join(cwd, "proj"))
			p := filepath.Join(site(t, cwd), finder+".py")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			b = []byte(strings.ReplaceAll(string(b), filepath.Join(template, "proj"), filepath.Join(cwd, "proj")))
			if !strings.Contains(string(b), filepath.Join(cwd, "proj", "mypkg")) {
				t.Fatalf("the finder maps no mypkg to the project: %s", b)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(site(t, cwd), "zz_hook.pth"), []byte("import mypkg\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			spoil(t, cwd)
		}
	}
	cases := []struct {
		name  string
		spoil func(t *testing.T, cwd string) // nil for none
		safe  string                         // the home's safe-directories; %CWD% is the cwd
		want  string                         // in the refusal; "" for the venv used
	}{
		{"as pip made it", nil, "", ""},
		{"the finder another user's", third(finder + ".py"), "", finder + ".py: it is owned by uid 54321"},
		{"the finder others may write", func(t *testing.T, cwd string) {
			if err := os.Chmod(filepath.Join(site(t, cwd), finder+".py"), 0o666); err != nil {
				t.Fatal(err)
			}
		}, "", finder + ".py: it is writable by group and others (mode 0666)"},
		{"the finder's bytecode another user's", third(filepath.Join("__pycache__", finder+".*.pyc")), "", ".pyc: it is owned by uid 54321"},
		{"the finder a link to another user's file", func(t *testing.T, cwd string) {
			p := filepath.Join(site(t, cwd), finder+".py")
			if err := os.Rename(p, filepath.Join(cwd, "finder.py")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(cwd, "finder.py"), p); err != nil {
				t.Fatal(err)
			}
			if os.Geteuid() != 0 {
				t.Skip("needs root to give a file to another user")
			}
			if err := os.Lchown(filepath.Join(cwd, "finder.py"), 54321, 54321); err != nil {
				t.Fatal(err)
			}
		}, "", finder + ".py: it leads to %CWD%/finder.py, which is owned by uid 54321"},
		{"a later import line's package, as the finder maps it", later(func(*testing.T, string) {}), "", ""},
		{"a later import line's package, where the finder maps it, another user's", later(func(t *testing.T, cwd string) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to give a file to another user")
			}
			if err := os.Lchown(filepath.Join(cwd, "proj", "mypkg", "__init__.py"), 54321, 54321); err != nil {
				t.Fatal(err)
			}
		}), "", finder + ".py maps a module python imports at start to %CWD%/proj/mypkg, where python looks for code at start: " +
			"%CWD%/proj/mypkg/__init__.py: it is owned by uid 54321"},
		{"a later import line's package, where the finder maps it, others may write", later(func(t *testing.T, cwd string) {
			if err := os.Chmod(filepath.Join(cwd, "proj", "mypkg"), 0o777); err != nil {
				t.Fatal(err)
			}
		}), "", "%CWD%/proj/mypkg: it is writable by group and others (mode 0777)"},
		{"another user's project, listed", theirs, "%CWD%\n", ""},
		{"another user's project, listed, the finder a third user's", func(t *testing.T, cwd string) {
			theirs(t, cwd)
			third(finder+".py")(t, cwd)
		}, "%CWD%\n", finder + ".py: it is owned by uid 54321"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cwd, home := t.TempDir(), t.TempDir()
			copyVenv(t, filepath.Join(template, ".venv"), filepath.Join(cwd, ".venv"))
			if tc.spoil != nil {
				tc.spoil(t, cwd)
			}
			subst := strings.NewReplacer("%CWD%", cwd)
			if tc.safe != "" {
				if err := os.WriteFile(filepath.Join(home, SafeDirectoriesFile), []byte(subst.Replace(tc.safe)), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			py, err := ResolveInterpreter("", cwd, home, func(string) string { return "" }, 0)
			var untrusted *UntrustedVenvError
			switch {
			case tc.want != "" && !errors.As(err, &untrusted):
				t.Fatalf("resolved %+v, %v; want the venv refused", py, err)
			case tc.want != "" && !strings.Contains(err.Error(), subst.Replace(tc.want)):
				t.Fatalf("error %q does not say %q", err, subst.Replace(tc.want))
			case tc.want == "" && (err != nil || py.Source != ".venv"):
				t.Fatalf("resolved %+v, %v; want the cwd's .venv", py, err)
			}
		})
	}
}
