package main

import (
	"archive/zip"
	"errors"
	"os"
)

// mainPathModule is the module a directory or zip application FILE runs,
// as python3 DIR and python3 APP.pyz run its __main__.py (runpy, the path
// itself first on sys.path: runner/argv.py main_path).
const mainPathModule = "__main__"

// isMainPath says whether source (run's FILE) is one python3 runs by its
// __main__ module: a directory, or a zip file (a zip application, a
// shebang line before it included), rather than a script to read.
func isMainPath(source string) bool {
	if source == "" || source == "-" {
		return false
	}
	fi, err := os.Stat(source)
	if err != nil {
		return false
	}
	if fi.IsDir() {
		return true
	}
	if !fi.Mode().IsRegular() {
		return false
	}
	r, err := zip.OpenReader(source)
	if err != nil {
		return false
	}
	r.Close()
	return true
}

// errMainPathParams: a directory or zip application has no cell to put
// parameters in, as a module has none.
var errMainPathParams = errors.New("parameters (-p, -r, -f, -y, -P) and a directory or zip application: it has no parameters cell; give it arguments after FILE")
