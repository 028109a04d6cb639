package nbrun

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/notebook"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden (rerun with -update if intended)\n got: %q\nwant: %q", name, got, want)
	}
}

// baseNotebook is a markdown cell and a code cell, with fixed ids so that
// recordings compare with golden files.
func baseNotebook(t testing.TB) *notebook.Notebook {
	t.Helper()
	nb, err := notebook.Load("testdata/base.ipynb")
	if err != nil {
		t.Fatal(err)
	}
	return nb
}

// nbformatCheck validates each file named in argv with nbformat and prints
// what nbformat writes for it, each result followed by a NUL.
const nbformatCheck = `
import sys, nbformat
for path in sys.argv[1:]:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    sys.stdout.buffer.write((nbformat.writes(nb) + "\n").encode("utf-8") + b"\0")
`

// validateWithNbformat fails the test unless nbformat accepts every
// notebook, and returns nbformat's own serialisation of each; it skips
// without nbformat.
func validateWithNbformat(t *testing.T, notebooks ...[]byte) [][]byte {
	t.Helper()
	if exec.Command("python3", "-c", "import nbformat").Run() != nil {
		t.Skip("python3 with the nbformat package is not available (pip install nbformat)")
	}
	dir := t.TempDir()
	args := []string{"-c", nbformatCheck}
	for i, data := range notebooks {
		path := filepath.Join(dir, fmt.Sprintf("check%d.ipynb", i))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, path)
	}
	var stderr strings.Builder
	cmd := exec.Command("python3", args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("nbformat rejects a notebook: %v\n%s", err, stderr.String())
	}
	return bytes.Split(out, []byte{0})[:len(notebooks)]
}
