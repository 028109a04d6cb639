package sessions

import (
	"errors"
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
// safe directories. Judged: bin/ and bin/python; pyvenv.cfg (its home
// says where the standard library comes from); each lib*/python*/
// site-packages directory and the directories holding it, and the files
// in it that run at start (*.pth, sitecustomize.py, usercustomize.py).
// Not judged: the rest of site-packages (its packages, below it), which
// would cost a walk of thousands of files per resolution; a site-packages
// no one else may write keeps another user from adding a package there,
// not from changing one a third user owns.
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
	if _, err := trustdir.CodeFile(root.Real, "pyvenv.cfg", safe); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return judgeSitePackages(cwd, dir, root.Real, safe)
}

// judgeSitePackages judges each lib*/python*/site-packages of the venv at
// cwd/dir (real: its real path) and the files in it that run at start. A
// lib64 that links to lib (as venv makes it) is judged once, as lib.
func judgeSitePackages(cwd, dir, real string, safe *trustdir.Safe) error {
	libs, err := os.ReadDir(real)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, lib := range libs {
		if !strings.HasPrefix(lib.Name(), "lib") {
			continue
		}
		pys, err := os.ReadDir(filepath.Join(real, lib.Name()))
		if err != nil {
			continue // a file named lib*, or a link to nothing: nothing python reads
		}
		for _, py := range pys {
			if !strings.HasPrefix(py.Name(), "python") {
				continue
			}
			rel := filepath.Join(dir, lib.Name(), py.Name(), "site-packages")
			if _, err := os.Stat(filepath.Join(cwd, rel)); err != nil {
				continue // not a site directory: python3.11 of a lib with only pythonX.Y files
			}
			site, err := trustdir.CodeDir(cwd, rel, safe)
			if err != nil {
				return err
			}
			if seen[site.Real] {
				continue
			}
			seen[site.Real] = true
			if err := judgeStartFiles(site.Real, safe); err != nil {
				return err
			}
		}
	}
	return nil
}

// judgeStartFiles judges the files directly in a site directory that
// python's site module runs at start.
func judgeStartFiles(site string, safe *trustdir.Safe) error {
	entries, err := os.ReadDir(site)
	if err != nil {
		return err
	}
	for _, e := range entries {
		n := e.Name()
		if !strings.HasSuffix(n, ".pth") && n != "sitecustomize.py" && n != "usercustomize.py" {
			continue
		}
		if _, err := trustdir.CodeFile(site, n, safe); err != nil {
			return err
		}
	}
	return nil
}
