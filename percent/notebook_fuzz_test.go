package percent

import (
	"encoding/json"
	"testing"
)

// Any text either reads or is refused with an error, never a panic; what
// reads converts to a notebook whose every cell came from a marker line at
// or before the script's end, and whose metadata encodes as JSON.
func FuzzReadNotebook(f *testing.F) {
	f.Add("x = 41\n# %%\nx + 1\n")
	f.Add(jupytextHeader + "# %% [markdown]\n# Some *text*\n\n# %% tags=[\"parameters\"]\nalpha = 0.1\n")
	f.Add("# %% T a=1 tags=['active-ipynb'] {\"x\": (1,)}\n# %time\ns='''\n# %%\n'''\n# %% [raw]\n# raw\n")
	f.Add("# ---\n# jupyter:\n#   kernelspec: 3\n# ---\n# %%\n1\n")
	f.Fuzz(func(t *testing.T, src string) {
		nb, err := ReadNotebook(src)
		if err != nil {
			return
		}
		lines := len(pySplitLines(src))
		for i, c := range nb.Cells {
			if c.Line < 1 || c.Line > lines+1 {
				t.Fatalf("cell %d at line %d of a %d-line script %q", i, c.Line, lines, src)
			}
			if _, err := json.Marshal(c.Metadata); err != nil {
				t.Fatalf("cell %d metadata %v does not encode: %v", i, c.Metadata, err)
			}
		}
		if _, err := nb.Ipynb(false); err != nil {
			t.Logf("%q reads but does not convert: %v", src, err)
		}
	})
}
