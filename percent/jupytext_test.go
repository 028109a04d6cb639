package percent

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/sessions"
)

// Jupytext's own percent examples split into the code cells of their
// paired notebooks (Jupytext's tests check that pairing), the blank ones
// aside, as nbclient skips them.
func TestJupytextExamplesMatchTheirNotebooks(t *testing.T) {
	scripts, err := filepath.Glob("testdata/jupytext/*.py")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, script := range scripts {
		t.Run(filepath.Base(script), func(t *testing.T) {
			src, err := os.ReadFile(script)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range Split(string(src), sessions.LangPython) {
				got = append(got, strings.TrimRight(c.Code, "\n"))
			}
			want := notebookCode(t, strings.TrimSuffix(script, ".py")+".ipynb")
			if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
				t.Fatalf("cells\n got %q\nwant %q", got, want)
			}
		})
	}
}

func notebookCode(t *testing.T, path string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var nb struct {
		Cells []struct {
			Type   string          `json:"cell_type"`
			Source json.RawMessage `json:"source"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(data, &nb); err != nil {
		t.Fatal(err)
	}
	var code []string
	for _, c := range nb.Cells {
		var lines []string
		if json.Unmarshal(c.Source, &lines) != nil {
			var s string
			json.Unmarshal(c.Source, &s)
			lines = []string{s}
		}
		src := strings.Join(lines, "")
		if c.Type == "code" && strings.TrimSpace(src) != "" {
			code = append(code, strings.TrimRight(src, "\n"))
		}
	}
	return code
}

// A script whose Jupytext header names another format is refused (its
// "# +" cells and their metadata would be read wrongly), and so is one
// whose "jupyter:" section is not YAML, which jupytext refuses (it was read
// as a header that says nothing, and a light script with such a header
// ran as percent), or holds a value jupytext cannot use (the message names
// it); a percent one, a header that names no format, one whose
// comment_magics is no boolean (jupytext reads its truth), and a script
// without one are read.
func TestCheckFormat(t *testing.T) {
	header := func(format string) string {
		return "# ---\n# jupyter:\n#   jupytext:\n#     text_representation:\n#       extension: .py\n" + format + "# ---\n\nx = 1\n"
	}
	for _, tc := range []struct {
		name, src string
		want      error  // nil: read
		says      string // in the error
	}{
		{"light", header("#       format_name: light\n"), ErrNotPercent, "jupytext --to py:percent"},
		{"sphinx", header("#       format_name: sphinx\n"), ErrNotPercent, "jupytext --to py:percent"},
		{"percent", header("#       format_name: percent\n"), nil, ""},
		{"no format name", header(""), nil, ""},
		{"no header", "# %%\nx = 1\n", nil, ""},
		{"a YAML header that is not Jupytext's", "# ---\n# title: x\n# ---\nx = 1\n", nil, ""},
		{"not YAML", header("#       format_name: [light\n"), ErrBadHeader, `"jupyter:" section from line 2 is not YAML (yaml: `},
		{"not YAML after a shebang", "#!/usr/bin/env python\n" + header("#   kernelspec: {name: x\n"), ErrBadHeader, "from line 3"},
		{"a value of another type", header("#     comment_magics: maybe\n"), nil, ""},
		{"a value jupytext cannot use", header("#       format_name: [percent]\n"), ErrBadHeader, "format_name is a list, where jupytext reads a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckFormat(tc.src)
			if !errors.Is(err, tc.want) || tc.want == nil && err != nil || tc.says != "" && (err == nil || !strings.Contains(err.Error(), tc.says)) {
				t.Errorf("CheckFormat = %v, want %v saying %q", err, tc.want, tc.says)
			}
		})
	}
}
