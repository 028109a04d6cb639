package testkit

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// NeedNbformat skips tb when Python's nbformat package is missing (fails
// it under RequireModulesEnv=1, as NeedModule does).
func NeedNbformat(tb testing.TB) {
	tb.Helper()
	NeedModule(tb, "nbformat", "nbformat")
}

// NbformatPrelude goes first in a Python program of a test that imports
// nbformat, or jsonschema, which nbformat imports. Where rfc3987_syntax is
// installed (jupyter_events' jsonschema[format-nongpl] brings it),
// jsonschema imports it for its "iri" format check, and that import builds
// an Earley parser of RFC 3987's grammar: ~1.3 s of CPU, 85% of importing
// nbformat (0.2 s without it). nbformat never checks formats (it passes no
// format checker, and its schemas have no format keyword), so what it
// reads, writes and validates is the same without it.
const NbformatPrelude = "import sys; sys.modules.setdefault('rfc3987_syntax', None)  # testkit.NbformatPrelude\n"

// nbformatCheck validates each file named in argv with nbformat and prints
// what nbformat writes for it (nbformat.writes of what it read, plus the
// final newline nbformat.write adds), each result followed by a NUL. A
// notebook nbformat has to repair is refused: reading and validate fix
// missing and duplicate cell ids in place with only a warning, which would
// let such a notebook pass.
const nbformatCheck = NbformatPrelude + `
import json, sys, warnings, nbformat
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:
        raw = json.load(f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the count says it
        changes, _ = nbformat.validator.normalize(raw)
    if changes:
        sys.exit("%s: nbformat's normalize repairs %d cell ids of it" % (path, changes))
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    sys.stdout.buffer.write((nbformat.writes(nb) + "\n").encode("utf-8") + b"\0")
`

// Nbformat fails tb unless nbformat accepts every notebook as it is, and returns
// nbformat's own serialisation of each; it skips without nbformat. One
// Python process checks them all, as importing nbformat is the slow part.
func Nbformat(tb testing.TB, notebooks ...[]byte) [][]byte {
	tb.Helper()
	NeedNbformat(tb)
	dir := tb.TempDir()
	args := []string{"-c", nbformatCheck}
	for i, data := range notebooks {
		path := filepath.Join(dir, fmt.Sprintf("check%d.ipynb", i))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			tb.Fatal(err)
		}
		args = append(args, path)
	}
	var stderr strings.Builder
	cmd := exec.Command(Python(tb), args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("nbformat rejects a notebook: %v\n%s", err, stderr.String())
	}
	return bytes.Split(out, []byte{0})[:len(notebooks)]
}
