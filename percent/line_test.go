package percent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/sessions"
)

// A cell's Line is the 1-based line of its first code line in the script:
// evalhost run compiles the cell with the script's line numbers from it, so
// each code line must be the script's line at Line+k, or that line with one
// "# " (or "#") taken off (a Jupytext-commented magic, an active-ipynb cell).
func TestCellLine(t *testing.T) {
	sources := map[string]string{
		"plain":                  "x = 1\n# %%\n\ny = 2\n",
		"leading comment":        "# setup\nimport os\n# %%\n1\n",
		"shebang and coding":     "#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\nimport os\n# %%\n1\n",
		"comment header":         "#!/usr/bin/env python3\n# Quickstart\n\n# %%\n1\n",
		"after markdown":         "# %% [markdown]\n# Heading\n# text\n\n# %%\nx = 1\n# %% [md]\n# more\n# %%\ny = 2\n",
		"jupytext header":        jupytextHeader + "x = 1\n# %%\ny = 2\n",
		"commented magics":       jupytextHeader + "# %%\n# %matplotlib inline\n# !pip install x\n1\n# %%\n# %%time\n\nprint(1)\n",
		"active-ipynb":           "x = 0\n# %% tags=[\"active-ipynb\"]\n# # a comment\n# %matplotlib inline\n# y = 1\n# %%\nz = 2\n",
		"raw and active-py":      "# %% [raw]\n1\n# %% tags=[\"active-py\"]\nimport sys\n# %%\n2\n",
		"parameters cell":        "# %% tags=[\"parameters\"]\nalpha = 1\n\n# %%\nprint(alpha)\n",
		"marker inside string":   "s = \"\"\"\n# %% not a cell\n\"\"\"\n# %%\n1\n",
		"nbconvert markers":      "# In[1]:\n1\n# <codecell>\n2\n",
		"shell cell":             "x = 1\n# %% [sh]\necho hi\n",
		"no trailing newline":    "a = 1\n# %%\nb = 2",
		"blank lines at the end": "a = 1\n\n\n# %%\nb = 2\n\n\n",
	}
	scripts, _ := filepath.Glob("testdata/jupytext/*.py")
	for _, s := range scripts {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		sources[filepath.Base(s)] = string(b)
	}
	for name, src := range sources {
		t.Run(name, func(t *testing.T) {
			lines := strings.Split(src, "\n")
			for i, c := range Split(src, sessions.LangPython) {
				for k, code := range strings.Split(strings.TrimRight(c.Code, "\n"), "\n") {
					n := c.Line + k
					if n < 1 || n > len(lines) {
						t.Fatalf("cell %d (Line %d): its line %d is line %d, past the script's %d", i, c.Line, k+1, n, len(lines))
					}
					if line := lines[n-1]; line != code && unescapeLine(line) != code && strings.TrimPrefix(line, "#") != code {
						t.Errorf("cell %d (Line %d): its line %d is %q; the script's line %d is %q", i, c.Line, k+1, code, n, line)
					}
				}
			}
		})
	}
}
