package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNotebookRunSaysHowTheNotebookChanged: nb run --inplace of a notebook
// that is written, replaced by another file, removed or relinked while its
// cells run writes the executed notebook to FILE.nbconvert.ipynb and says
// which of those happened and what to do. It said "changed on disk" of
// each, a removed file included, with no way to keep the run's outputs.
func TestNotebookRunSaysHowTheNotebookChanged(t *testing.T) {
	const keep = "; the executed notebook is in nb.nbconvert.ipynb: "
	for _, tc := range []struct {
		name string
		cell string // run in the notebook's directory
		link bool   // nb.ipynb is a symlink to real.ipynb
		says []string
		kept bool // nb.ipynb holds what the cell left there (not the run's outputs)
	}{
		{"written in place", "open('nb.ipynb', 'a').write(' ')", false, []string{
			"nb.ipynb changed on disk while its cells ran (another edit or program wrote it); not overwriting it, which would undo that change" + keep +
				"compare the two, and keep the run's outputs with mv nb.nbconvert.ipynb nb.ipynb, or run nb.ipynb again"}, true},
		{"replaced by another file", "import os, shutil\nshutil.copy('other.ipynb', 'new.ipynb')\nos.replace('new.ipynb', 'nb.ipynb')", false, []string{
			"nb.ipynb was replaced by another file while its cells ran (one renamed over it, as an editor's save, mv or git checkout does, or a symlink on its way repointed); not overwriting it" + keep +
				"compare the two, and keep the run's outputs with mv nb.nbconvert.ipynb nb.ipynb, or run the new nb.ipynb"}, true},
		{"a link repointed", "import os\nos.remove('nb.ipynb')\nos.symlink('other.ipynb', 'nb.ipynb')", true, []string{
			"nb.ipynb was replaced by another file while its cells ran"}, true},
		{"removed", "import os\nos.remove('nb.ipynb')", false, []string{
			"nb.ipynb was removed (or moved away) while its cells ran, so it was not written again" + keep +
				"move it there if the notebook is to stay (mv nb.nbconvert.ipynb nb.ipynb)"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			nb := filepath.Join(dir, "nb.ipynb")
			file := nb
			if tc.link {
				file = filepath.Join(dir, "real.ipynb")
				if err := os.Symlink("real.ipynb", nb); err != nil {
					t.Fatal(err)
				}
			}
			writeNotebook(t, file, tc.cell+"\nprint('ran')")
			writeNotebook(t, filepath.Join(dir, "other.ipynb"), "other = 1")
			cmd := command(t, "nb", "run", "nb.ipynb", "--inplace")
			cmd.Dir = dir
			out, _, code := runCaptured(t, cmd, true)
			if code != 1 {
				t.Errorf("exit %d, want 1\n%s", code, out)
			}
			for _, s := range tc.says {
				if !strings.Contains(out, "evalhost nb run: "+s) {
					t.Errorf("output does not say %q\n%s", s, out)
				}
			}
			cells := readNotebook(t, filepath.Join(dir, "nb.nbconvert.ipynb"))
			if len(cells) != 1 || len(cells[0].Outputs) != 1 || text(cells[0].Outputs[0].Text) != "ran\n" {
				t.Errorf("the executed notebook holds %+v", cells)
			}
			if _, err := os.Stat(nb); (err == nil) != tc.kept {
				t.Errorf("nb.ipynb there after the run: %v, want %v", err == nil, tc.kept)
			}
		})
	}
}
