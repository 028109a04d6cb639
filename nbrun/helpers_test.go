package nbrun

import (
	"path/filepath"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
	"github.com/evalhost/evalhost/notebook"
)

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	testkit.Golden(t, filepath.Join("testdata", name), got)
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

// validateWithNbformat fails the test unless nbformat accepts every
// notebook; it returns nbformat's own serialisation of each.
func validateWithNbformat(t *testing.T, notebooks ...[]byte) [][]byte {
	t.Helper()
	return testkit.Nbformat(t, notebooks...)
}
