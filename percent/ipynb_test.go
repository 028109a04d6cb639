package percent

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// Ipynb writes the notebook "jupytext --to ipynb" writes of a script,
// byte for byte but the cells' ids (random in both) and the order of
// cell_metadata_filter's entries (a Python set's in jupytext), and
// nbformat validates it.
func TestIpynbAsJupytextWritesIt(t *testing.T) {
	py := testkit.Python(t)
	testkit.NeedModule(t, "jupytext", "jupytext")
	scripts, err := filepath.Glob("testdata/jupytext/*.py")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	dir := t.TempDir()
	extra := map[string]string{
		"paired.py": percentHeader + "\n# %% [markdown]\n# # A title\n\n# %% tags=[\"parameters\"]\nalpha = 0.1\n\n# %%\nprint(alpha, 1.0)\n",
		"bare.py":   "# %% tags=['a'] n=2.0 big=12345678901234567890\nx = 1\n# %% [raw]\n# r\n",
	}
	for name, src := range extra {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		scripts = append(scripts, p)
	}
	var gots []string
	for _, script := range scripts {
		src, err := os.ReadFile(script)
		if err != nil {
			t.Fatal(err)
		}
		nb, err := ReadNotebook(string(src))
		if err != nil {
			t.Fatalf("%s: %v", script, err)
		}
		ipynb, err := nb.Ipynb(false)
		if err != nil {
			t.Fatalf("%s: %v", script, err)
		}
		got := filepath.Join(dir, strings.TrimSuffix(filepath.Base(script), ".py")+".got.ipynb")
		if err := os.WriteFile(got, ipynb.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		gots = append(gots, got)
	}
	// One python3 for all: as "jupytext --to ipynb -o OUT" writes each
	// (formats dropped, OUT being no file of the pair), and whether
	// nbformat validates ours.
	const prog = `
import json, sys, jupytext, nbformat
n = len(sys.argv[1:]) // 2
out = []
for script, got in zip(sys.argv[1:1 + n], sys.argv[1 + n:]):
    nb = jupytext.read(script)
    nb.metadata.get("jupytext", {}).pop("formats", None)
    try:
        nbformat.validate(nbformat.read(got, as_version=4))
        invalid = ""
    except Exception as e:
        invalid = str(e)
    out.append({"want": jupytext.writes(nb, "ipynb"), "invalid": invalid})
print(json.dumps(out))
`
	var abs []string
	for _, s := range scripts {
		a, _ := filepath.Abs(s)
		abs = append(abs, a)
	}
	cmd := exec.Command(py, append(append([]string{"-c", prog}, abs...), gots...)...)
	cmd.Dir = dir
	data, err := cmd.Output()
	if err != nil {
		t.Fatalf("jupytext: %v\n%s", err, stderrText(err))
	}
	var want []struct{ Want, Invalid string }
	if err := json.Unmarshal(data, &want); err != nil || len(want) != len(scripts) {
		t.Fatalf("jupytext's answer %q: %v", data, err)
	}
	for i, script := range scripts {
		t.Run(filepath.Base(script), func(t *testing.T) {
			got, err := os.ReadFile(gots[i])
			if err != nil {
				t.Fatal(err)
			}
			if g, w := comparable(got), comparable([]byte(want[i].Want+"\n")); g != w {
				t.Errorf("notebook differs from jupytext's:\n%s", lineDiff(g, w))
			}
			if want[i].Invalid != "" {
				t.Errorf("nbformat.validate: %s", want[i].Invalid)
			}
		})
	}
}

// lineDiff shows the first lines where got and want part.
func lineDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		gl, wl := "", ""
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d\n got %q\nwant %q", i+1, gl, wl)
		}
	}
	return ""
}

var (
	idRe     = regexp.MustCompile(`"id": "[0-9a-f]{8}"`)
	filterRe = regexp.MustCompile(`"cell_metadata_filter": "([^"]*)"`)
)

// comparable is a notebook's text with its cell ids blanked and its
// cell_metadata_filter's entries sorted.
func comparable(data []byte) string {
	s := idRe.ReplaceAllString(string(data), `"id": ""`)
	return filterRe.ReplaceAllStringFunc(s, func(m string) string {
		entries := strings.Split(filterRe.FindStringSubmatch(m)[1], ",")
		sort.Strings(entries)
		return `"cell_metadata_filter": "` + strings.Join(entries, ",") + `"`
	})
}

// Paired says whether a notebook is the one jupytext.formats pairs with
// the script: its name with .ipynb beside it, formats naming ipynb and py.
func TestPaired(t *testing.T) {
	for _, tc := range []struct {
		name          string
		formats       any
		script, ipynb string
		want          bool
	}{
		{"the pair", "ipynb,py:percent", "d/nb.py", "d/nb.ipynb", true},
		{"the pair, spelled otherwise", "ipynb,py:percent", "d/nb.py", "d/./nb.ipynb", true},
		{"a list", []any{"ipynb", "py:percent"}, "nb.py", "nb.ipynb", true},
		{"py without a format", "ipynb,py", "nb.py", "nb.ipynb", true},
		{"another name", "ipynb,py:percent", "nb.py", "out.ipynb", false},
		{"another directory", "ipynb,py:percent", "d/nb.py", "nb.ipynb", false},
		{"no ipynb in formats", "md,py:percent", "nb.py", "nb.ipynb", false},
		{"prefixes", "notebooks//ipynb,scripts//py:percent", "scripts/nb.py", "notebooks/nb.ipynb", false},
		{"no formats", nil, "nb.py", "nb.ipynb", false},
		{"formats jupytext refuses", "ipynb,py:nonsense", "nb.py", "nb.ipynb", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nb := &Notebook{Metadata: map[string]any{}}
			if tc.formats != nil {
				nb.Metadata["jupytext"] = map[string]any{"formats": tc.formats}
			}
			if got := nb.Paired(tc.script, tc.ipynb); got != tc.want {
				t.Errorf("Paired(%s, %s) = %v", tc.script, tc.ipynb, got)
			}
		})
	}
}
