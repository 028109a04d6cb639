package notebook

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

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
	testkit.Golden(t, filepath.Join("testdata", name), got)
}

// needNbformat skips the test when Python's nbformat package is missing.
func needNbformat(t testing.TB) { t.Helper(); testkit.NeedNbformat(t) }

// validateWithNbformat fails the test unless nbformat accepts every
// notebook; it returns nbformat's own serialisation of each.
func validateWithNbformat(t *testing.T, notebooks ...[]byte) [][]byte {
	t.Helper()
	return testkit.Nbformat(t, notebooks...)
}
func mustParse(t testing.TB, data []byte) *Notebook {
	t.Helper()
	nb, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return nb
}
