package notebook

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// goldenNotebooks lists the nbformat-written notebooks in testdata.
func goldenNotebooks(t testing.TB) []string {
	paths, err := filepath.Glob("testdata/*.ipynb")
	if err != nil || len(paths) < 10 {
		t.Fatalf("want the generated notebooks in testdata (run python3 gen.py there): %v %v", paths, err)
	}
	return paths
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

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
	want := readFile(t, path)
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden (rerun with -update if intended)\n got: %q\nwant: %q", name, got, want)
	}
}

var (
	nbformatOnce sync.Once
	nbformatOK   bool
)

// needNbformat skips the test when Python's nbformat package is missing.
func needNbformat(t testing.TB) {
	t.Helper()
	nbformatOnce.Do(func() {
		nbformatOK = exec.Command("python3", "-c", "import nbformat").Run() == nil
	})
	if !nbformatOK {
		t.Skip("python3 with the nbformat package is not available (pip install nbformat)")
	}
}

// nbformatCheck validates each file named in argv with nbformat and prints
// what nbformat writes for it (nbformat.writes of what it read, plus the
// final newline nbformat.write adds), each result followed by a NUL.
const nbformatCheck = `
import sys, nbformat
for path in sys.argv[1:]:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    sys.stdout.buffer.write((nbformat.writes(nb) + "\n").encode("utf-8") + b"\0")
`

// validateWithNbformat fails the test unless nbformat accepts every
// notebook; it returns nbformat's own serialisation of each. One Python
// process checks them all, as importing nbformat is the slow part.
func validateWithNbformat(t *testing.T, notebooks ...[]byte) [][]byte {
	t.Helper()
	needNbformat(t)
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
	parts := bytes.Split(out, []byte{0})
	return parts[:len(notebooks)]
}
func mustParse(t testing.TB, data []byte) *Notebook {
	t.Helper()
	nb, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return nb
}
