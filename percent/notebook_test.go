package percent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// jupytextNotebook is what jupytext.read makes of a script, or its error.
type jupytextNotebook struct {
	Cells    []jupytextCell `json:"cells"`
	Metadata any            `json:"metadata"`
	Error    string         `json:"error"`
}

type jupytextCell struct {
	Type     string `json:"type"`
	Source   string `json:"source"`
	Metadata any    `json:"metadata"`
}

// jupytextNotebooks runs jupytext.read on each script (as "jupytext --to
// ipynb" reads it, no configuration file), in one python3.
func jupytextNotebooks(t *testing.T, paths []string) []jupytextNotebook {
	t.Helper()
	py := testkit.Python(t)
	testkit.NeedModule(t, "jupytext", "jupytext")
	const prog = `
import json, math, sys, jupytext
def plain(v):
    if isinstance(v, float):
        return "float:" + repr(v)
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [plain(x) for x in v]
    return v
out = []
for p in sys.argv[1:]:
    try:
        nb = jupytext.read(p)
        out.append(plain({"cells": [{"type": c.cell_type, "source": c.source, "metadata": c.metadata} for c in nb.cells],
                          "metadata": nb.metadata}))
    except Exception as e:
        out.append({"error": "%s: %s" % (type(e).__name__, e)})
print(json.dumps(out))
`
	abs := make([]string, len(paths))
	for i, p := range paths {
		var err error
		if abs[i], err = filepath.Abs(p); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(py, append([]string{"-c", prog}, abs...)...)
	cmd.Dir = t.TempDir()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("jupytext: %v\n%s", err, stderrText(err))
	}
	var nbs []jupytextNotebook
	if err := decodeNumbers(out, &nbs); err != nil || len(nbs) != len(paths) {
		t.Fatalf("jupytext's answer %q: %v", out, err)
	}
	for i := range nbs {
		nbs[i].Metadata = plainFloats(nbs[i].Metadata)
		for k := range nbs[i].Cells {
			nbs[i].Cells[k].Metadata = plainFloats(nbs[i].Cells[k].Metadata)
		}
	}
	return nbs
}

func stderrText(err error) []byte {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.Stderr
	}
	return nil
}

func decodeNumbers(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}

// asJupytext is nb as jupytextNotebooks shows jupytext's.
func asJupytext(t *testing.T, nb *Notebook) jupytextNotebook {
	t.Helper()
	var cells []jupytextCell
	for _, c := range nb.Cells {
		cells = append(cells, jupytextCell{Type: c.Type, Source: c.Source, Metadata: plainFloats(c.Metadata)})
	}
	data, err := json.Marshal(jupytextNotebook{Cells: cells, Metadata: plainFloats(nb.Metadata)})
	if err != nil {
		t.Fatal(err)
	}
	var out jupytextNotebook
	if err := decodeNumbers(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// plainFloats spells floats as "float:" and their value, as the Python
// side does (2.0 is no 2, NaN no JSON).
func plainFloats(v any) any {
	switch v := v.(type) {
	case float64:
		switch {
		case math.IsNaN(v):
			return "float:nan"
		case math.IsInf(v, 1):
			return "float:inf"
		case math.IsInf(v, -1):
			return "float:-inf"
		}
		return "float:" + strconv.FormatFloat(v, 'g', -1, 64)
	case string:
		// Python's repr of a float, as Go spells it.
		if f, err := strconv.ParseFloat(strings.TrimPrefix(v, "float:"), 64); err == nil && strings.HasPrefix(v, "float:") &&
			!math.IsNaN(f) && !math.IsInf(f, 0) {
			return "float:" + strconv.FormatFloat(f, 'g', -1, 64)
		}
	case map[string]any:
		m := map[string]any{}
		for k, x := range v {
			m[k] = plainFloats(x)
		}
		return m
	case []any:
		l := make([]any, len(v))
		for i, x := range v {
			l[i] = plainFloats(x)
		}
		return l
	}
	return v
}

// sameFilters sorts the entries of metadata.jupytext.cell_metadata_filter,
// which jupytext lists from a Python set, in an order that changes from
// run to run.
func sameFilters(nb *jupytextNotebook) {
	j, _ := nb.Metadata.(map[string]any)["jupytext"].(map[string]any)
	if f, ok := j["cell_metadata_filter"].(string); ok {
		entries := strings.Split(f, ",")
		sort.Strings(entries)
		j["cell_metadata_filter"] = strings.Join(entries, ",")
	}
}

// compareWithJupytext reads each script with ReadNotebook and jupytext,
// and fails where they differ: the cells' types, sources and metadata,
// the notebook's metadata, or one refusing what the other reads.
func compareWithJupytext(t *testing.T, names, paths []string) {
	t.Helper()
	want := jupytextNotebooks(t, paths)
	other := 0
	defer func() { t.Logf("%d scripts, %d read by jupytext in another format", len(paths), other) }()
	for i, path := range paths {
		t.Run(names[i], func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			nb, err := ReadNotebook(string(src))
			switch {
			case want[i].Error != "" && err == nil:
				t.Fatalf("jupytext refuses it (%s); ReadNotebook reads it", want[i].Error)
			case want[i].Error != "":
				return
			case errors.Is(err, ErrNoCells) || errors.Is(err, ErrNotPercent):
				if f := formatOf(want[i]); f == "percent" || f == "hydrogen" {
					t.Fatalf("ReadNotebook: %v; jupytext reads it as %s", err, f)
				}
				other++
				return // jupytext reads it in another format, by design refused
			case err != nil:
				t.Fatalf("ReadNotebook: %v; jupytext reads it", err)
			}
			got := asJupytext(t, nb)
			sameFilters(&got)
			sameFilters(&want[i])
			if len(got.Cells) != len(want[i].Cells) {
				t.Errorf("%d cells, jupytext's %d:\n got %s\nwant %s", len(got.Cells), len(want[i].Cells), show(got.Cells), show(want[i].Cells))
			}
			for k := range min(len(got.Cells), len(want[i].Cells)) {
				if g, w := got.Cells[k], want[i].Cells[k]; !reflect.DeepEqual(g, w) {
					t.Errorf("cell %d (line %d):\n got %s\nwant %s", k, nb.Cells[k].Line, show(g), show(w))
				}
			}
			if !reflect.DeepEqual(got.Metadata, want[i].Metadata) {
				t.Errorf("metadata:\n got %s\nwant %s", show(got.Metadata), show(want[i].Metadata))
			}
		})
	}
}

// formatOf is the format jupytext read a script in.
func formatOf(nb jupytextNotebook) string {
	j, _ := nb.Metadata.(map[string]any)["jupytext"].(map[string]any)
	tr, _ := j["text_representation"].(map[string]any)
	f, _ := tr["format_name"].(string)
	return f
}

func show(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

// Jupytext's own percent examples read into the notebooks jupytext reads
// them into: every cell, its type, source and metadata, and the
// notebook's metadata.
func TestReadNotebookAsJupytext(t *testing.T) {
	scripts, err := filepath.Glob("testdata/jupytext/*.py")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	names := make([]string, len(scripts))
	for i, s := range scripts {
		names[i] = filepath.Base(s)
	}
	compareWithJupytext(t, names, scripts)
}

const percentHeader = "# ---\n# jupyter:\n#   jupytext:\n#     formats: ipynb,py:percent\n#     text_representation:\n#       extension: .py\n" +
	"#       format_name: percent\n#       format_version: '1.3'\n#       jupytext_version: 1.16.1\n#   kernelspec:\n" +
	"#     display_name: Python 3\n#     language: python\n#     name: python3\n# ---\n"

// jupyterHeader is a header with these lines in its "jupyter:" section.
func jupyterHeader(lines ...string) string {
	return "# ---\n# jupyter:\n" + strings.Join(lines, "\n") + "\n# ---\n"
}

// Scripts written to find where ReadNotebook and jupytext part: markers
// and what is not one, blank lines between cells (lines_to_next_cell),
// markdown and raw cells, fenced blocks, magics, options, headers and
// their values, line ends. Each is read by jupytext itself; refused are
// those ReadNotebook refuses by design (another format, a date jupytext
// cannot write), which jupytext reads.
func TestReadNotebookEdgesAsJupytext(t *testing.T) {
	cases := []struct {
		name, src string
		refused   error
	}{
		{"the user's paired script", percentHeader + "\n# %% [markdown]\n# # A title\n#\n# Some *text*.\n\n# %% tags=[\"parameters\"]\nalpha = 0.1\n\n" +
			"# %%\nprint(\"alpha is\", alpha)\n\n# %% [raw]\n# raw text\n\n# %% Title of cell\n# %time x = 1\nx = 2\n\n\ndef f():\n    pass\n", nil},
		{"no blank lines between cells", "# %%\nx = 1\n# %% [markdown]\n# hi\n# %%\ny\n", nil},
		{"two blank lines", "# %%\nx = 1\n\n\n# %%\ny = 2\n", nil},
		{"three blank lines", "# %%\nx = 1\n\n\n\n# %%\ny = 2\n", nil},
		{"a def before a cell", "# %%\ndef f():\n    return 1\n# %%\nf()\n", nil},
		{"a def after a cell", "# %%\nx = 1\n\n# %%\ndef f():\n    pass\n", nil},
		{"a decorated def after two lines", "# %%\nx = 1\n\n\n# %%\n@dec\ndef f():\n    pass\n", nil},
		{"a line of spaces ends a cell", "# %%\nx = 1\n   \n# %%\ny\n", nil},
		{"code before the first marker", "import os\n\n# %%\nx = 1\n", nil},
		{"comments before the first marker", "# A script\n# by me\n\n# %%\nx = 1\n", nil},
		{"a blank first line", "\n# %%\nx = 1\n", nil},
		{"blank lines only", "# %%\n\n\n# %%\n", nil},
		{"markers alone", "# %%\n# %%\n# %% [markdown]\n", nil},
		{"not markers to jupytext", "# %%\nx = 1\n# %%[markdown]\n# %%%%\n#%%bash\n# %%time\n", nil},
		{"marker spellings", "#%%\na\n# %%% sub cell\nb\n#   %%  spaced\nc\n    # %% indented\nd\n# In[1]:\ne\n# In[ ]:\nf\n# <codecell>\ng\n", nil},
		{"a tab after the marker", "# %%\tTitle\nx\n", nil},
		{"a marker in a string", "# %%\ns = \"\"\"\n# %% not a cell\n\"\"\"\n# %%\ns\n", nil},
		{"a marker in a single-quoted triple string", "# %%\ns = '''\n# %%\n'''\n", nil},
		{"a fenced block in markdown", "# %% [markdown]\n# ```mermaid\n# %%{init: {}}%%\n# graph TD\n# ```\n\n# %%\nx = 1\n", nil},
		{"an unclosed fence in markdown", "# %% [markdown]\n# ```\n# text\n\n# %%\nx = 1\n", nil},
		{"a tilde fence in raw", "# %% [raw]\n# ~~~~\n# %% inside\n# ~~~~\n# %%\nx\n", nil},
		{"a fence closed after the cell", "# %% [markdown]\n# ```python\n\n# %%\nx = 1\n# ```\n", nil},
		{"inline backticks are no fence", "# %% [markdown]\n# ```a`b\n# %%\nx\n# ```\n", nil},
		{"triple-quoted markdown", "# %% [markdown]\n\"\"\"\nSome text\n\"\"\"\n\n# %%\nx\n", nil},
		{"raw-string markdown", "# %% [markdown]\nr'''Text'''\n", nil},
		{"one-line triple-quoted raw", "# %% [raw]\n\"\"\"raw\"\"\"\n", nil},
		{"uncommented markdown", "# %% [markdown]\nplain text, it's here\n# commented\n", nil},
		{"md region", "# %% [md] Title\n# text\n", nil},
		{"markdown with a title and options", "# %% [markdown] Intro key=\"v\" hidden\n# text\n", nil},
		{"markdown magics and doubled comments", "# %% [markdown]\n# # %time in markdown\n# # cat is an animal\n# %%% not a marker\n", nil},
		{"active-ipynb", "# %% tags=[\"active-ipynb\"]\n# # a comment\n# %matplotlib inline\n# x = 1\n", nil},
		{"active-py", "# %% tags=[\"active-py\"]\nimport sys\n# %%\n2\n", nil},
		{"active options", "# %% active=\"ipynb\"\n# print(1)\n# %% active=\"py\"\nprint(2)\n# %% active=\"ipynb,py\"\nprint(3)\n# %% active=\"\"\nprint(4)\n", nil},
		{"frozen", "# %% run_control={\"frozen\": true}\n# print(1)\n", nil},
		{"commented magics", "# %%\n# %matplotlib inline\n# !pip install x\n# files = !ls\n# %%time\n# cat file.txt\n# cat = 3\n# x?\n# ordinary comment\n# # ls escaped\n1\n", nil},
		{"magic continuation", "# %%\n# !ls \\\n#   -l\nx\n", nil},
		{"escape and noescape", "# %%\n# %time x  # noescape\n# mycomment # escape\n# %time y # escape\n", nil},
		{"magics in a string", "# %%\ns = '''\n# %time\n'''\n", nil},
		{"indented magic", "# %%\nif True:\n    # %time x\n    pass\n", nil},
		{"hydrogen: a magic left uncommented", "# %%\n%matplotlib inline\n# %time x\n", nil},
		{"a help request is no hydrogen magic", "# %%\nx?\n# %time y\n", nil},
		{"escaped code start", "# %%\n# # +\n# +\n# # # -\nx\n", nil},
		{"options", "# %% tags=['a', \"b\"] n=1 f=1.5 flag none=None t=True\nx\n", nil},
		{"an identifier said twice", "# %% a=1 a\nx\n", nil},
		{"options jupytext cannot read", "# %% Compute a=b+c\nx\n# %% Set {x}\ny\n# %% x=1 {\nz\n", nil},
		{"json options", "# %% Title {\"tags\": [\"parameters\"], \"n\": 1}\na = 3\n", nil},
		{"attributes", "# %% .class tags=['x'] inputHidden=false\nf(5)\n", nil},
		{"a nan option", "# %% x=NaN y=-Infinity\nz\n", nil},
		{"a cell_type option", "# %% cell_type=\"markdown\"\n# text\n# %% cell_type=\"other\"\n# raw?\n# %% cell_type=\"code\" active=\"py\"\nx\n", nil},
		{"language options", "# %% language=\"R\"\n# print(1)\n# %% language=\"bash\" magic_args=\"--out x\"\n# ls\n# %% language=\"python\"\nx\n# %% language=\"klingon\"\n# qapla\n", nil},
		{"options jupytext fails on", "# %% tags=1\nx\n", nil},
		{"tags that are not strings", "# %% tags=[1]\nx\n", nil},
		{"a tag twice", "# %% tags=[\"a\", \"a\"]\nx\n", nil},
		{"a tag with a comma", "# %% [markdown] tags=[\"a,b\"]\n# x\n", nil},
		{"run_control no mapping", "# %% run_control=1\nx\n", nil},
		{"active no string", "# %% active=1\nx\n", nil},
		{"an active tag before active", "# %% tags=[\"active-py\"] active=1\nx\n", nil},
		{"a name", "# %% name=\"\"\nx\n# %% name=\"n\"\ny\n", nil},
		{"code cell schema", "# %% collapsed=true scrolled=\"auto\"\nx\n# %% scrolled=\"no\"\ny\n", nil},
		{"execution", "# %% execution={\"a\": 1}\nx\n", nil},
		{"raw format", "# %% [raw] format=1\nx\n", nil},
		{"a language that is no string", "# %% language=1\nx\n# %% language=0\ny\n", nil},
		{"python literals", "# %% a='x' 'y' b=u'u' c=r'\\n' d=1e400 e=12345678901234567890 f='\\xe9' g=(1,) h=[1,] i=-2\nx\n", nil},
		{"a raw cell with options", "# %% [raw] raw_mimetype=\"text/x-python\"\n# 1 + 1\n", nil},
		{"shebang and coding", "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n# %%\nx = 1\n", nil},
		{"coding utf8 refused", "# -*- coding: utf8 -*-\n# %%\nx = 1\n", ErrEncoding},
		{"coding latin-1 refused", "# coding: latin-1\n# %%\nx = 1\n", ErrEncoding},
		{"comment_magics false", jupyterHeader("#   jupytext:", "#     comment_magics: false") + "\n# %%\n# %time x\n", nil},
		{"comment_magics true in hydrogen", jupyterHeader("#   jupytext:", "#     comment_magics: true") + "\n# %%\n%time x\n# %time y\n", nil},
		{"a header and a comment line", percentHeader + "#\n# %%\nx\n", nil},
		{"a header and no blank line", percentHeader + "# %%\nx\n", nil},
		{"a header alone", percentHeader, nil},
		{"a header and code, no marker", percentHeader + "\nx = 1\n\ny = 2\n", nil},
		{"root-level YAML", "# ---\n# title: A notebook\n# author: me\n# ---\n\n# %%\nx = 1\n", nil},
		{"root-level YAML and jupyter", "# ---\n# title: T\n# jupyter:\n#   kernelspec:\n#     display_name: P\n#     name: p\n# date: x\n# ---\n# %%\nx\n", nil},
		{"an unclosed header", "# ---\n# jupyter:\n#   kernelspec: {}\n# %%\nx\n", nil},
		{"YAML values", jupyterHeader("#   kernelspec:", "#     display_name: P", "#     name: p", "#   values:",
			"#     - yes", "#     - off", "#     - 017", "#     - 0x1f", "#     - 1e3", "#     - 1_000", "#     - 1.5", "#     - .inf",
			"#     - -.inf", "#     - ~", "#     - 'quoted'", "#     - 1:30", "#     - 0b101", "#     - \"yes\"", "#     - 12345678901234567890",
			"#     - {a: [1, b]}", "#     - !!str 3", "#     - ", "#     - 2.", "#     - 3.14e+2") + "# %%\nx\n", nil},
		{"YAML merge keys", jupyterHeader("#   base: &b {x: 1, y: 2}", "#   other: {<<: *b, y: 3}", "#   two: {<<: [{a: 1}, {a: 2, b: 2}]}") + "# %%\nx\n", nil},
		{"notebook metadata jupytext fails on", jupyterHeader("#   title: 3") + "# %%\nx\n", nil},
		{"language_info jupytext fails on", jupyterHeader("#   language_info: {name: python, file_extension: 3}") + "# %%\nx\n", nil},
		{"a notebook_metadata_filter of true", jupyterHeader("#   jupytext:", "#     notebook_metadata_filter: true") + "# %%\nx\n", nil},
		{"a date", jupyterHeader("#   when: 2024-01-02") + "# %%\nx\n", ErrBadHeader},
		{"filters", jupyterHeader("#   jupytext:", "#     cell_metadata_filter: -all", "#     notebook_metadata_filter: kernelspec,-widgets",
			"#   widgets: {}", "#   other: 1") + "# %% tags=['a'] b=2\nx\n", nil},
		{"a filter that keeps all", jupyterHeader("#   jupytext:", "#     cell_metadata_filter: all,-hidden") + "# %% hidden=true\nx\n", nil},
		{"dict filters", jupyterHeader("#   jupytext:", "#     cell_metadata_filter:", "#       additional: [a]", "#       excluded: all") + "# %% b=1\nx\n", nil},
		{"notebook metadata listed", jupyterHeader("#   kernelspec:", "#     display_name: P", "#     name: p", "#   language_info:",
			"#     name: python", "#   zeta: 1", "#   alpha: 2") + "# %%\nx\n", nil},
		{"old keys", jupyterHeader("#   jupytext_formats: ipynb,py:percent", "#   main_language: python", "#   jupytext_format_version: '1.0'") + "# %%\nx\n", nil},
		{"formats spellings", jupyterHeader("#   jupytext:", "#     formats: .ipynb,notebooks//ipynb,scripts//py:percent,nb.py:percent,md") + "# %%\nx\n", nil},
		{"formats as a list", jupyterHeader("#   jupytext:", "#     formats: [ipynb, 'py:percent']") + "# %%\nx\n", nil},
		{"formats name the format", jupyterHeader("#   jupytext:", "#     formats: ipynb,py:percent") + "x = 1\n\ny = 2\n", nil},
		{"formats with auto", jupyterHeader("#   jupytext:", "#     formats: ipynb,auto:percent", "#   kernelspec:", "#     display_name: P",
			"#     language: python", "#     name: p") + "# %%\nx\n", nil},
		{"a kernel in another language", jupyterHeader("#   kernelspec:", "#     display_name: R", "#     language: R", "#     name: ir") +
			"# %%\nx <- 'a\n# %% [markdown]\n# t\n", nil},
		{"hydrogen named", jupyterHeader("#   jupytext:", "#     text_representation:", "#       extension: .py", "#       format_name: hydrogen") +
			"# %%\n# %time x\n", nil},
		{"light named", jupyterHeader("#   jupytext:", "#     text_representation:", "#       extension: .py", "#       format_name: light") +
			"# +\nx = 1\n", ErrNotPercent},
		{"no format and no marker", jupyterHeader("#   kernelspec:", "#     display_name: P", "#     name: p") + "x = 1\n", ErrNotPercent},
		{"a plain script", "x = 1\nprint(x)\n", ErrNoCells},
		{"crlf", "# %%\r\nx = 1\r\n\r\n# %% [markdown]\r\n# hi\r\n", nil},
		{"old mac line ends", "# %%\rx = 1\r# %%\ry\r", nil},
		{"form feed and vertical tab", "# %%\nx = 1\f# %%\ny = 2\vz = 3\n", nil},
		{"unicode spaces", "\u00a0# %%\nx\n# %%\u3000t\ny\n\u2003\n# %%\nz\n", nil},
		{"a byte order mark", "\ufeff# %%\nx = 1\n# %%\ny\n", nil},
		{"no final newline", "# %%\nx = 1\n\n# %%\ny = 2", nil},
		{"trailing blank lines", "# %%\nx = 1\n\n\n\n", nil},
		{"a file of one marker", "# %%", nil},
	}
	dir := t.TempDir()
	var names, paths []string
	for i, c := range cases {
		p := filepath.Join(dir, strings.Repeat("x", 0)+string(rune('a'+i%26))+strings.Repeat("_", i/26)+".py")
		if err := os.WriteFile(p, []byte(c.src), 0o644); err != nil {
			t.Fatal(err)
		}
		if c.refused != nil {
			t.Run(c.name, func(t *testing.T) {
				if _, err := ReadNotebook(c.src); !errors.Is(err, c.refused) {
					t.Errorf("ReadNotebook: %v, want %v", err, c.refused)
				}
			})
			continue
		}
		names, paths = append(names, c.name), append(paths, p)
	}
	compareWithJupytext(t, names, paths)
}

// Scripts made at random (a fixed seed) of the lines that matter to
// jupytext's reader, read by both: where one reads a line differently
// in some company, this finds it.
func TestReadNotebookRandomScriptsAsJupytext(t *testing.T) {
	pieces := []string{
		"# %%", "# %% [markdown]", "# %% [raw]", "# %% [md]", "#%%", "# %%% sub", "  # %% indented", "# %%\tT",
		"# %% tags=[\"parameters\"]", "# %% tags=[\"active-ipynb\"]", "# %% active=\"py\"", "# %% Title {\"k\": 1}",
		"# %% language=\"R\"", "# In[1]:", "# <codecell>", "# %%time", "# %matplotlib inline", "%matplotlib inline",
		"# !ls", "# x = !ls", "# cat f", "x?", "# # comment", "# text", "#", "", "", "", "   ", "\t",
		"x = 1", "def f():", "    return 1", "class C:", "    pass", "@dec", "s = \"\"\"", "\"\"\"", "'''", "s = 'it''s'",
		"# ```", "# ```mermaid", "# ~~~", "```", "# # +", "# +", "r\"\"\"text\"\"\"", "\"\"\"md\"\"\"",
		"# %% [markdown] cell_marker=\"'''\"", "if x:", "    # %time y", "# !pip \\", "#   -q", "\u00a0# %%", "x = '''# %%'''", "# ---", "# jupyter:", "#   jupytext:", "#     comment_magics: false",
		"#!/usr/bin/env python", "# -*- coding: utf-8 -*-", "x = 1\f", "\x1c# %%", "# %%\u2003t", "y = 2\r", "# %%\x1cq", "\v",
		"# %% cell_type=\"raw\"", "# %% [markdown] {\"a\": 1", "# %% a=[1, 2] b", "#     kernelspec: {name: p, display_name: P}",
		"#   kernelspec: {name: p, display_name: P, language: python}", "# title: x", "%%time", "!ls", "# %% run_control={\"frozen\": true}",
	}
	const scripts = 300
	rng := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	names, paths := make([]string, scripts), make([]string, scripts)
	for i := range scripts {
		var b strings.Builder
		for range 1 + rng.IntN(14) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
			b.WriteString("\n")
		}
		names[i] = fmt.Sprintf("%03d %q", i, b.String())
		paths[i] = filepath.Join(dir, fmt.Sprintf("s%03d.py", i))
		if err := os.WriteFile(paths[i], []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	compareWithJupytext(t, names, paths)
}
