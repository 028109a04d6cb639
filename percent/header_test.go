package percent

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
	"github.com/evalhost/evalhost/sessions"
)

// A header value of a type other than expected is read as jupytext 1.19
// reads it, not dropped with the whole header (its format_name and
// comment_magics were lost): comment_magics by Python truthiness (PyYAML's
// "no", 0 and null are false, "maybe" true), and a value jupytext cannot
// use (kernelspec: 3, a format_name that is no string) refused as jupytext
// refuses the script. Each case is checked against jupytext itself.
func TestHeaderValuesAsJupytextReadsThem(t *testing.T) {
	py := testkit.Python(t)
	testkit.NeedModule(t, "jupytext", "jupytext")
	header := func(jupyter ...string) string {
		var lines strings.Builder
		for _, l := range jupyter {
			lines.WriteString(l + "\n")
		}
		return "# ---\n# jupyter:\n" + lines.String() + "# ---\n\n# %%\n# %time x = 1\nprint(1)\n"
	}
	magics := func(v string, more ...string) string {
		return header(append([]string{"#   jupytext:", "#     comment_magics: " + v}, more...)...)
	}
	light := []string{"#     text_representation:", "#       extension: .py", "#       format_name: light"}
	cases := []struct {
		name, src string
		refused   error // nil: read, its cells as jupytext's; ErrNotPercent: jupytext reads another format
	}{
		{"comment_magics: maybe", magics("maybe"), nil},
		{"comment_magics: maybe, and format_name: light", magics("maybe", light...), ErrNotPercent},
		{"comment_magics: no", magics("no"), nil},
		{"comment_magics: off", magics("off"), nil},
		{"comment_magics: 0", magics("0"), nil},
		{"comment_magics: 3", magics("3"), nil},
		{"comment_magics: null", magics("~"), nil},
		{"comment_magics: \"false\"", magics(`"false"`), nil},
		{"comment_magics: []", magics("[]"), nil},
		{"comment_magics: [1]", magics("[1]"), nil},
		{"comment_magics: false", magics("false"), nil},
		{"kernelspec: 3", header("#   kernelspec: 3"), ErrBadHeader},
		{"kernelspec: 3 after comment_magics: false", header("#   jupytext:", "#     comment_magics: false", "#   kernelspec: 3"), ErrBadHeader},
		{"kernelspec without display_name", header("#   kernelspec:", "#     name: python3"), ErrBadHeader},
		{"kernelspec's language: 3", header("#   kernelspec:", "#     display_name: P", "#     name: p", "#     language: 3"), ErrBadHeader},
		{"a kernelspec", header("#   kernelspec:", "#     display_name: Python 3", "#     language: python", "#     name: python3"), nil},
		{"jupytext: 3", header("#   jupytext: 3"), ErrBadHeader},
		{"jupyter: null", header(), ErrBadHeader},
		{"text_representation: 3", header("#   jupytext:", "#     text_representation: 3"), ErrBadHeader},
		{"format_name: 3", header("#   jupytext:", "#     text_representation:", "#       extension: .py", "#       format_name: 3"), ErrBadHeader},
		{"format_name: [percent]", header("#   jupytext:", "#     text_representation:", "#       extension: .py", "#       format_name: [percent]"), ErrBadHeader},
		{"extension: 3", header("#   jupytext:", "#     text_representation:", "#       extension: 3", "#       format_name: percent"), ErrBadHeader},
		{"main_language: yes", header("#   jupytext:", "#     main_language: yes"), ErrBadHeader},
		{"cell_metadata_filter: [a]", header("#   jupytext:", "#     cell_metadata_filter: [a]"), ErrBadHeader},
		{"cell_metadata_filter: true", header("#   jupytext:", "#     cell_metadata_filter: true"), nil},
		{"cell_metadata_filter: a mapping", header("#   jupytext:", "#     cell_metadata_filter: {additional: [a], excluded: all}"), nil},
		{"title: 3", header("#   title: 3"), ErrBadHeader},
		{"authors: 3", header("#   authors: 3"), ErrBadHeader},
		{"orig_nbformat: 0", header("#   orig_nbformat: 0"), ErrBadHeader},
		{"language_info's file_extension: 3", header("#   language_info: {name: python, file_extension: 3}"), ErrBadHeader},
		{"language_info's codemirror_mode: a mapping", header("#   language_info: {name: python, codemirror_mode: {name: ipython}}"), nil},
		{"formats: a list", header("#   jupytext:", "#     formats: [ipynb, py]"), nil},
		{"language_info: 3", header("#   language_info: 3"), ErrBadHeader},
		{"cell_markers: 3, unused", header("#   jupytext:", "#     cell_markers: 3"), nil},
	}
	dir := t.TempDir()
	var paths []string
	for i, c := range cases {
		p := filepath.Join(dir, strings.Repeat("x", i+1)+".py")
		if err := os.WriteFile(p, []byte(c.src), 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	got := jupytextCells(t, py, paths)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			jt := got[i]
			err := CheckFormat(c.src)
			if (jt.Error != "") != (c.refused == ErrBadHeader) {
				t.Fatalf("the case is wrong: jupytext read it as %q, error %q", jt.Code, jt.Error)
			}
			if c.refused != nil {
				if !errors.Is(err, c.refused) {
					t.Fatalf("CheckFormat = %v, want %v (jupytext: %s)", err, c.refused, jt.Error)
				}
				return
			}
			if err != nil {
				t.Fatalf("CheckFormat = %v; jupytext reads it", err)
			}
			var code []string
			for _, cell := range Split(c.src, sessions.LangPython) {
				code = append(code, strings.TrimRight(cell.Code, "\n"))
			}
			if strings.Join(code, "\x00") != strings.Join(jt.Code, "\x00") {
				t.Fatalf("cells %q, jupytext's %q", code, jt.Code)
			}
		})
	}
}

type jupytextRead struct {
	Code  []string `json:"code"`
	Error string   `json:"error"`
}

// jupytextCells is what jupytext.read makes of each script: its non-blank
// code cells, or its error.
func jupytextCells(t *testing.T, python string, paths []string) []jupytextRead {
	t.Helper()
	const prog = testkit.NbformatPrelude + `
import json, sys, jupytext
out = []
for p in sys.argv[1:]:
    try:
        nb = jupytext.read(p)
        out.append({"code": [c.source.rstrip("\n") for c in nb.cells if c.cell_type == "code" and c.source.strip()]})
    except Exception as e:
        out.append({"error": "%s: %s" % (type(e).__name__, e)})
print(json.dumps(out))
`
	cmd := exec.Command(python, append([]string{"-c", prog}, paths...)...)
	cmd.Dir = t.TempDir()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("jupytext: %v", err)
	}
	var reads []jupytextRead
	if err := json.Unmarshal(out, &reads); err != nil || len(reads) != len(paths) {
		t.Fatalf("jupytext's answer %q: %v", out, err)
	}
	return reads
}

// CheckRun, for a program that runs the script as python3 runs it: a
// header jupytext refuses is a warning naming the value, not a refusal;
// one that leaves the format untold (format_name no string, the section
// not YAML) runs the file whole (as python3 runs it); one that names
// another format is still refused, whatever else is wrong with it. The
// cells of the rest are read by what the rest of the header says.
func TestCheckRun(t *testing.T) {
	header := func(jupyter ...string) string {
		return "# ---\n# jupyter:\n" + strings.Join(jupyter, "\n") + "\n# ---\n\n# %%\n# %time x = 1\nx = 1\nx\n"
	}
	cases := []struct {
		name, src string
		warns     string // in the warning; "" for none
		whole     bool
		refused   error
		cells     []string // SplitScript's code with CheckRun's Whole
	}{
		{"a good header", header("#   kernelspec:", "#     display_name: P", "#     name: p"), "", false, nil, []string{"%time x = 1\nx = 1\nx\n"}},
		{"a kernelspec without display_name", header("#   kernelspec:", "#     name: p"),
			"jupyter.kernelspec has no display_name (a string), which the notebook's schema requires", false, nil, []string{"%time x = 1\nx = 1\nx\n"}},
		{"comment_magics: false kept past kernelspec: 3", header("#   jupytext:", "#     comment_magics: false", "#   kernelspec: 3"),
			"jupyter.kernelspec is 3 (an int), where jupytext reads a mapping", false, nil, []string{"# %time x = 1\nx = 1\nx\n"}},
		{"format_name: 3", header("#   jupytext:", "#     text_representation:", "#       format_name: 3"), "format_name is 3 (an int)", true, nil, nil},
		{"format_name: [percent]", header("#   jupytext:", "#     text_representation:", "#       format_name: [percent]"), "format_name is a list", true, nil, nil},
		{"not YAML", header("#   kernelspec: {name: x"), "is not YAML", true, nil, nil},
		{"light", header("#   jupytext:", "#     text_representation:", "#       format_name: light"), "", false, ErrNotPercent, nil},
		{"light with kernelspec: 3", header("#   jupytext:", "#     text_representation:", "#       format_name: light", "#   kernelspec: 3"), "", false, ErrNotPercent, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			warning, whole, err := CheckRun(c.src)
			if !errors.Is(err, c.refused) || c.refused == nil && err != nil {
				t.Fatalf("err = %v, want %v", err, c.refused)
			}
			if (warning == "") != (c.warns == "") || !strings.Contains(warning, c.warns) || strings.Contains(warning, "\n") || whole != c.whole {
				t.Fatalf("warning %q, whole %v; want one line saying %q, whole %v", warning, whole, c.warns, c.whole)
			}
			if err != nil {
				return
			}
			var code []string
			for _, cell := range SplitScript(c.src, Options{Language: sessions.LangPython, Whole: whole}) {
				code = append(code, cell.Code)
			}
			want := c.cells
			if whole {
				want = []string{c.src} // the file as python3 compiles it
			}
			if strings.Join(code, "\x00") != strings.Join(want, "\x00") {
				t.Errorf("cells %q, want %q", code, want)
			}
		})
	}
}
