package notebook

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// nbformatV4 is what nbformat writes for each notebook file named in argv
// once it has read it as version 4 (nbformat.read(path, as_version=4)),
// the notebook nbclient and papermill run, each followed by a NUL.
const nbformatV4 = testkit.NbformatPrelude + `
import sys, nbformat
for path in sys.argv[1:]:
    nb = nbformat.read(path, as_version=4)
    sys.stdout.buffer.write((nbformat.writes(nb) + "\n").encode("utf-8") + b"\0")
`

var cellID = regexp.MustCompile(`"id": "[0-9a-f]{8}"`)

// An nbformat 3 notebook is read as nbformat reads it with as_version=4:
// the notebook Parse makes of it is byte for byte the one nbformat writes,
// but for the cells' ids, which both draw at random (eight hex digits).
func TestParseUpgradesV3AsNbformat(t *testing.T) {
	testkit.NeedNbformat(t)
	files, err := filepath.Glob("testdata/v3/*.ipynb")
	if err != nil || len(files) == 0 {
		t.Fatalf("no v3 fixtures: %v", err)
	}
	out, err := exec.Command(testkit.Python(t), append([]string{"-c", nbformatV4}, files...)...).Output()
	if err != nil {
		t.Fatalf("nbformat: %v", err)
	}
	want := strings.Split(string(out), "\x00")
	for i, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			nb, err := Parse(readFile(t, file))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			got := nb.Bytes()
			ids := cellID.FindAll(got, -1)
			seen := map[string]bool{}
			for _, id := range ids {
				seen[string(id)] = true
			}
			if len(ids) != nb.Len() || len(seen) != nb.Len() {
				t.Errorf("%d cells, %d ids, %d different; want one id per cell", nb.Len(), len(ids), len(seen))
			}
			g := cellID.ReplaceAllString(string(got), `"id": "ID"`)
			w := cellID.ReplaceAllString(want[i], `"id": "ID"`)
			if g != w {
				t.Errorf("converted notebook differs from nbformat's:\n--- got\n%s\n--- want\n%s", g, w)
			}
		})
	}
}
