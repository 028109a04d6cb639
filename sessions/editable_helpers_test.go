package sessions

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/testkit"
)

// editableVenv makes dir/.venv with the test python (python -m venv, pip
// too when withPip) and installs dir/proj, a tiny setuptools project
// (package mypkg), into it editable: pip install -e, offline. Where pip
// cannot build that offline (setuptools 64-70.0 needs the wheel package,
// which a bare interpreter lacks) it writes the files setuptools writes
// instead, and says so in the log. It returns the finder module's name
// (__editable___my_pkg_0_1_finder), after checking that the venv's python
// imports it at start: the code a .pth import line runs.
func editableVenv(tb testing.TB, dir string, withPip bool) string {
	tb.Helper()
	py := testkit.Python(tb)
	proj := filepath.Join(dir, "proj")
	writeFiles(tb, proj, map[string]string{
		"pyproject.toml": "[build-system]\nrequires = [\"setuptools>=64\"]\nbuild-backend = \"setuptools.build_meta\"\n\n" +
			"[project]\nname = \"my-pkg\"\nversion = \"0.1\"\n",
		"mypkg/__init__.py": "X = 1\n",
	})
	venv := filepath.Join(dir, ".venv")
	args := []string{"-m", "venv", "--system-site-packages"}
	if !withPip {
		args = append(args, "--without-pip")
	}
	mustRun(tb, py, append(args, venv)...)
	// --python runs the base's pip for the venv; --system-site-packages
	// lends the build the base's setuptools (and wheel, where it has it).
	out, err := quietRun(py, "-m", "pip", "--python", filepath.Join(venv, "bin", "python"), "install",
		"--quiet", "--no-index", "--no-build-isolation", "--no-deps", "--editable", proj)
	if err != nil {
		tb.Logf("pip cannot install editable offline here (%v: %s); writing the files setuptools writes", err, errorLines(out))
		fakeEditable(tb, venv, proj)
	}
	finders, _ := filepath.Glob(filepath.Join(sitePackages(tb, venv), "__editable___*_finder.py"))
	if len(finders) != 1 {
		tb.Fatalf("editable install made finders %v, want one", finders)
	}
	finder := strings.TrimSuffix(filepath.Base(finders[0]), ".py")
	got, err := quietRun(filepath.Join(venv, "bin", "python"), "-c", "import sys; print("+quote(finder)+" in sys.modules)")
	if err != nil || strings.TrimSpace(got) != "True" {
		tb.Fatalf("the venv's python did not import %s at start: %q, %v", finder, got, err)
	}
	return finder
}

// fakeEditable writes what setuptools' editable_wheel (64+, its "lenient"
// mode) installs for proj: a .pth whose import line installs a finder
// module beside it, and the dist-info.
func fakeEditable(tb testing.TB, venv, proj string) {
	tb.Helper()
	const finder = "__editable___my_pkg_0_1_finder"
	writeFiles(tb, sitePackages(tb, venv), map[string]string{
		"__editable__.my_pkg-0.1.pth": "import " + finder + "; " + finder + ".install()",
		finder + ".py": fmt.Sprintf(`import sys
from importlib.util import spec_from_file_location

MAPPING = {'mypkg': %s}


class _EditableFinder:
    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        if fullname in MAPPING:
            return spec_from_file_location(fullname, MAPPING[fullname] + "/__init__.py")
        return None


def install():
    if not any(finder == _EditableFinder for finder in sys.meta_path):
        sys.meta_path.append(_EditableFinder)
`, quote(filepath.Join(proj, "mypkg"))),
		"my_pkg-0.1.dist-info/METADATA":  "Metadata-Version: 2.1\nName: my-pkg\nVersion: 0.1\n",
		"my_pkg-0.1.dist-info/INSTALLER": "pip\n",
	})
	// As pip compiles what it installs.
	mustRun(tb, filepath.Join(venv, "bin", "python"), "-m", "py_compile", filepath.Join(sitePackages(tb, venv), finder+".py"))
}

// sitePackages is venv's lib/pythonX.Y/site-packages.
func sitePackages(tb testing.TB, venv string) string {
	tb.Helper()
	sites, _ := filepath.Glob(filepath.Join(venv, "lib", "python*", "site-packages"))
	if len(sites) != 1 {
		tb.Fatalf("site-packages of %s: %v", venv, sites)
	}
	return sites[0]
}

// copyVenv copies the tree at from to to, links as links, every file and
// directory the test's and writable by it alone whatever the umask.
func copyVenv(tb testing.TB, from, to string) {
	tb.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, dst)
		case d.IsDir():
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return err
			}
			return os.Chmod(dst, 0o755)
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(dst, b, 0o600); err != nil {
			return err
		}
		return os.Chmod(dst, fi.Mode().Perm()&^0o022)
	})
	if err != nil {
		tb.Fatal(err)
	}
}

func writeFiles(tb testing.TB, dir string, files map[string]string) {
	tb.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// quietRun runs name offline and quietly, returning its combined output.
func quietRun(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_NO_INPUT=1", "PIP_NO_CACHE_DIR=1")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func mustRun(tb testing.TB, name string, args ...string) {
	tb.Helper()
	if out, err := quietRun(name, args...); err != nil {
		tb.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// errorLines are pip's output's lines that name an error, else its last.
func errorLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	var errs []string
	for _, l := range lines {
		if strings.Contains(strings.ToLower(l), "error:") {
			errs = append(errs, strings.TrimSpace(l))
		}
	}
	if len(errs) == 0 {
		return strings.TrimSpace(lines[len(lines)-1])
	}
	return strings.Join(errs, " / ")
}
