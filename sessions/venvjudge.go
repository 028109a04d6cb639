package sessions

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/evalhost/evalhost/internal/trustdir"
)

// judgeVenv judges what of cwd/dir another user could use to run code as
// whoever starts its python, as code is judged (trustdir): in a directory
// others may write (/tmp), a .venv another user made would run as whoever
// starts evalhost there, unless the user listed the project among their
// safe directories. Judged: bin/ and bin/python; pyvenv.cfg and
// bin/pyvenv.cfg, and the home they name (judgeHome); each lib*/ and
// lib*/*/ directory, each lib*/*/site-packages, and what in it runs at
// start (judgeSitePackages): its .pth files and customize modules, what
// the .pth import lines import, what their path lines name. Not judged:
// the rest of site-packages (its packages, below it), which would cost a
// walk of thousands of files per resolution; a site-packages no one else
// may write keeps another user from adding a package there, not from
// changing one a third user owns.
func judgeVenv(cwd, dir string, safe *trustdir.Safe) error {
	bin, err := trustdir.CodeDir(cwd, filepath.Join(dir, "bin"), safe)
	if err != nil {
		return err
	}
	if _, err := trustdir.CodeFile(bin.Real, "python", safe); err != nil {
		return err
	}
	root, err := trustdir.CodeDir(cwd, dir, safe)
	if err != nil {
		return err
	}
	named, err := filepath.Abs(filepath.Join(cwd, dir, "bin"))
	if err != nil {
		return err
	}
	if err := judgePth(bin.Real, named, safe); err != nil {
		return err
	}
	// Python reads home from bin/pyvenv.cfg when the root has none.
	for _, d := range []string{root.Real, bin.Real} {
		cfg, err := trustdir.CodeFile(d, "pyvenv.cfg", safe)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return err
		default:
			if err := judgeHome(cwd, cfg.Real, safe); err != nil {
				return err
			}
		}
	}
	return judgeSitePackages(cwd, dir, root.Real, safe)
}

// judgeSitePackages judges each lib*/*/site-packages of the venv at
// cwd/dir (real: its real path) and the files in it that run at start:
// the start files of each (judgeStartFiles), then in each what their .pth
// import lines may import, which python finds in any of them, and the
// bytecode cached for either (judgeImports), and where an editable
// install's finder maps them (judgeEditables), then what their path lines
// name (judgePathLines).
func judgeSitePackages(cwd, dir, real string, safe *trustdir.Safe) error {
	sites, err := siteDirs(cwd, dir, real, safe)
	if err != nil {
		return err
	}
	entries := make([][]os.DirEntry, len(sites))
	start := &startImports{names: map[string]bool{}}
	seen := map[string]bool{}
	for i, site := range sites {
		seen[site.real] = true
		if entries[i], err = os.ReadDir(site.real); err != nil {
			return err
		}
		if err := judgeStartFiles(site, entries[i], start, safe); err != nil {
			return err
		}
	}
	for i, site := range sites {
		if err := judgeImports(site.real, entries[i], start.names, safe, seen); err != nil {
			return err
		}
		if err := judgeEditables(site.real, entries[i], start.names, safe, seen); err != nil {
			return err
		}
	}
	return judgePathLines(start.lines, start.names, safe, seen)
}

// startImports is where a venv's .pth files lead python at start: the
// names their import lines may import, and the paths their other lines
// name.
type startImports struct {
	names map[string]bool
	lines []pathLine
}

// siteDir is a site-packages: where it is, and the paths python may name
// it by (the venv's, through links), which its .pth relative lines are
// joined to.
type siteDir struct {
	real  string
	named []string
}

// siteDirs judges each lib*/ and lib*/*/ directory of the venv at cwd/dir
// (real: its real path) and each lib*/*/site-packages, and returns the
// site-packages. A lib64 that links to lib (as venv makes it) is judged
// once, as lib, and named both ways.
func siteDirs(cwd, dir, real string, safe *trustdir.Safe) ([]siteDir, error) {
	libs, err := os.ReadDir(real)
	if err != nil {
		return nil, err
	}
	// site.py names site-packages from sys.prefix, the venv as the path
	// evalhost starts its python by names it: cwd/dir, links unresolved.
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return nil, err
	}
	var sites []siteDir
	seen := map[string]int{}
	for _, lib := range libs {
		if !strings.HasPrefix(lib.Name(), "lib") {
			continue
		}
		if ok, err := isDir(filepath.Join(real, lib.Name())); !ok {
			if err != nil {
				return nil, err
			}
			continue // a file named lib*: nothing python reads
		}
		// Judged whether or not a site-packages is in it yet: one others
		// may write could be given one after this judgement.
		if _, err := trustdir.CodeDir(cwd, filepath.Join(dir, lib.Name()), safe); err != nil {
			return nil, err
		}
		pys, err := os.ReadDir(filepath.Join(real, lib.Name()))
		if err != nil {
			return nil, err
		}
		for _, py := range pys {
			if ok, err := isDir(filepath.Join(real, lib.Name(), py.Name())); !ok {
				if err != nil {
					return nil, err
				}
				continue // pythonX.Y files, not a site directory's parent
			}
			rel := filepath.Join(dir, lib.Name(), py.Name())
			if _, err := trustdir.CodeDir(cwd, rel, safe); err != nil {
				return nil, err
			}
			rel = filepath.Join(rel, "site-packages")
			if ok, err := isDir(filepath.Join(cwd, rel)); !ok {
				if err != nil {
					return nil, err
				}
				continue // not a site directory
			}
			site, err := trustdir.CodeDir(cwd, rel, safe)
			if err != nil {
				return nil, err
			}
			named := filepath.Join(abs, rel)
			if i, ok := seen[site.Real]; ok {
				sites[i].named = append(sites[i].named, named)
				continue
			}
			seen[site.Real] = len(sites)
			sites = append(sites, siteDir{real: site.Real, named: []string{named}})
		}
	}
	return sites, nil
}

// isDir reports whether p is a directory, and refuses a symbolic link to
// nothing there (a *danglingLinkError): python reads the directory once
// whoever may make where it leads makes it.
func isDir(p string) (bool, error) {
	fi, err := os.Stat(p)
	if err == nil {
		return fi.IsDir(), nil
	}
	if fi, lerr := os.Lstat(p); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(p)
		if err != nil {
			return false, err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(p), target)
		}
		return false, &danglingLinkError{Link: p, Target: target}
	}
	return false, nil
}

// danglingLinkError refuses a venv directory python reads at start that
// is a symbolic link to what does not exist.
type danglingLinkError struct{ Link, Target string }

func (e *danglingLinkError) Error() string {
	return fmt.Sprintf("%s is a symbolic link to %s, which does not exist: whoever makes it gets code run at python's start",
		trustdir.Shown(e.Link), trustdir.Shown(e.Target))
}

func (e *danglingLinkError) fix() string {
	return fmt.Sprintf("remove the link %s if it is stale, or make %s yourself", trustdir.Shown(e.Link), trustdir.Shown(e.Target))
}

// judgeStartFiles judges what in a site directory (its entries read)
// python's site module runs at start: each *.pth, and sitecustomize and
// usercustomize in any form import finds (.py, .pyc, an extension module,
// a package, whole; the cached __pycache__ one is judgeImports'). It adds
// to start what the .pth files lead to (pthImports, pthPaths).
func judgeStartFiles(site siteDir, entries []os.DirEntry, start *startImports, safe *trustdir.Safe) error {
	for _, e := range entries {
		n := e.Name()
		switch {
		case strings.HasSuffix(n, ".pth"):
			if err := judgeDotPth(site, n, start, safe); err != nil {
				return err
			}
		case isCustomize(n):
			if err := judgeTree(site.real, n, safe); err != nil {
				return err
			}
		}
	}
	return nil
}

// judgeDotPth judges site/n, a .pth file (a directory of that name, which
// site.py cannot read, whole), and adds to start what its lines lead to.
func judgeDotPth(site siteDir, n string, start *startImports, safe *trustdir.Safe) error {
	if fi, err := os.Stat(filepath.Join(site.real, n)); err == nil && fi.IsDir() {
		return judgeTree(site.real, n, safe)
	}
	f, err := trustdir.CodeFile(site.real, n, safe)
	if err != nil {
		return err
	}
	// Read where judged, which no one else may change.
	b, err := os.ReadFile(f.Real)
	if err != nil {
		return err
	}
	pthImports(b, start.names)
	start.lines = pthPaths(b, site.named, f.Real, start.lines)
	return nil
}

// isCustomize: n is a form of sitecustomize or usercustomize.
func isCustomize(n string) bool {
	m, _, _ := strings.Cut(n, ".")
	return m == "sitecustomize" || m == "usercustomize"
}

// judgeTree judges dir/name, a file or a package directory and all in it;
// a link to a directory is refused (not a regular file), not followed into
// a loop.
func judgeTree(dir, name string, safe *trustdir.Safe) error {
	if fi, err := os.Lstat(filepath.Join(dir, name)); err != nil || !fi.IsDir() {
		_, err := trustdir.CodeFile(dir, name, safe)
		return err
	}
	pkg, err := trustdir.CodeDirIn(dir, name, safe)
	if err != nil {
		return err
	}
	entries, err := os.ReadDir(pkg.Real)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := judgeTree(pkg.Real, e.Name(), safe); err != nil {
			return err
		}
	}
	return nil
}

// judgeHome judges the directories a pyvenv.cfg's home names: python takes
// its standard library from the prefix above home (home's parent) even
// when bin/python links to another python, so a home of another user's
// runs their os.py and site.py. A relative home is python's working
// directory's, the cwd's. Python searches further up for the library
// only when the prefix has none; that search is not judged.
func judgeHome(cwd, cfg string, safe *trustdir.Safe) error {
	b, err := os.ReadFile(cfg)
	if err != nil {
		return err
	}
	for _, line := range strings.Split(string(b), "\n") {
		// As getpath reads it: key.strip().lower() == 'home', value.strip().
		k, home, ok := strings.Cut(line, "=")
		if !ok || !strings.EqualFold(strings.TrimFunc(k, pySpace), "home") {
			continue
		}
		home = strings.TrimFunc(home, pySpace)
		if !filepath.IsAbs(home) {
			home = filepath.Join(cwd, home)
		}
		home = filepath.Clean(home)
		prefix := filepath.Dir(home)
		if prefix == home {
			continue
		}
		rel := filepath.Base(home)
		if prefix != filepath.Dir(prefix) {
			rel = filepath.Join(filepath.Base(prefix), rel)
		}
		if _, err := trustdir.CodeDir(filepath.Dir(prefix), rel, safe); err != nil {
			return err
		}
		if err := judgeStdlib(prefix, safe); err != nil {
			return err
		}
	}
	return nil
}

// judgeStdlib judges prefix's lib*/python* directories, where the standard
// library a home leads to is; the modules in them are not (a walk).
func judgeStdlib(prefix string, safe *trustdir.Safe) error {
	libs, err := filepath.Glob(filepath.Join(prefix, "lib*", "python*"))
	if err != nil {
		return err
	}
	for _, l := range libs {
		if fi, err := os.Stat(l); err != nil || !fi.IsDir() {
			continue
		}
		rel, err := filepath.Rel(prefix, l)
		if err != nil {
			return err
		}
		if _, err := trustdir.CodeDir(prefix, rel, safe); err != nil {
			return err
		}
	}
	return nil
}

// judgePth judges the ._pth files in bin (python._pth, next to the
// executable, replaces sys.path on Linux too, 3.11) and the directories
// they name, relative ones joined to bin as python names it (named, the
// venv's links unresolved), missing ones as a missing .pth path line; a
// venv has none, so this is strict: a name that is not a directory (a
// zip) is refused.
func judgePth(bin, named string, safe *trustdir.Safe) error {
	pths, err := filepath.Glob(filepath.Join(bin, "*._pth"))
	if err != nil {
		return err
	}
	for _, p := range pths {
		f, err := trustdir.CodeFile(bin, filepath.Base(p), safe)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(f.Real)
		if err != nil {
			return err
		}
		// As getpath reads it: line.partition('#')[0].strip(), lines
		// split at \n alone.
		for _, line := range strings.Split(string(b), "\n") {
			line, _, _ = strings.Cut(line, "#")
			line = strings.TrimFunc(line, pySpace)
			if line == "" || strings.HasPrefix(line, "import ") {
				continue
			}
			if !filepath.IsAbs(line) {
				line = filepath.Join(named, line)
			}
			if line = filepath.Clean(line); line == filepath.Dir(line) {
				continue
			}
			_, err := trustdir.CodeDir(filepath.Dir(line), filepath.Base(line), safe)
			if errors.Is(err, fs.ErrNotExist) {
				// On sys.path all the same, for whoever makes it.
				err = judgeMissing(pathLine{pth: f.Real, path: line})
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}
