package percent

import (
	"fmt"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/sessions"
)

func TestSplitPercent(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string // "lang|title|code"
	}{
		{"no markers", "x = 1\nprint(x)\n", []string{"py||x = 1\nprint(x)\n"}},
		{"two cells", "x = 41\n# %%\nx + 1\n", []string{"py||x = 41\n", "py||x + 1\n"}},
		{"titles and shell", "# %% Load\na = 1\n# %% [sh] List\nls\n", []string{"py|Load|a = 1\n", "sh|List|ls\n"}},
		{"markdown skipped", "# %% [markdown]\n# Heading\n# %%\n1\n", []string{"py||1\n"}},
		{"no space variant", "#%%\n1\n#%% [bash]\necho\n", []string{"py||1\n", "sh||echo\n"}},
		{"not a marker", "# %%bash\n# %%time\n1\n", []string{"py||# %%bash\n# %%time\n1\n"}},
		{"nested cell markers", "a = 1\n# %%% Part [sh]\necho\n#%%%%\n2\n", []string{"py||a = 1\n", "sh|Part|echo\n", "py||2\n"}},
		{"empty cells dropped", "# %%\n\n# %%\n   \n# %%\n2", []string{"py||2\n"}},
		{"crlf", "a = 1\r\n# %%\r\nb = 2\r\n", []string{"py||a = 1\r\n", "py||b = 2\r\n"}},
		{"comment header is not a cell", "#!/usr/bin/env python3\n# Quickstart\n\n# %%\n1\n", []string{"py||1\n"}},
		{"header with code is a cell", "# setup\nimport os\n# %%\n1\n", []string{"py||# setup\nimport os\n", "py||1\n"}},
		{"a marked comment-only cell is kept", "# %%\n# note\n# %%\n1\n", []string{"py||# note\n", "py||1\n"}},
		{"key=value metadata is not a title", "# %% tags=[\"parameters\"]\na = 1\n", []string{"py|[parameters]|a = 1\n"}},
		{"title before metadata", "# %% Load data tags=[\"a\", \"b\"] n=1\nx\n", []string{"py|Load data[a b]|x\n"}},
		{"json metadata", "# %% a code cell with parameters {\"tags\": [\"parameters\"]}\na = 3\n", []string{"py|a code cell with parameters[parameters]|a = 3\n"}},
		{"attributes", "# %% .class tags=['x'] inputHidden=false outputHidden=false\nf(5)\n", []string{"py|[x]|f(5)\n"}},
		{"raw cells never run", "# %% [raw] raw_mimetype=\"text/x-python\"\n1 + 1\n# %%\n2\n", []string{"py||2\n"}},
		{"md cells never run", "# %% [md]\nprint(1)\n", nil},
		{"markdown with metadata", "# %% [markdown] key=\"value\"\nprint(1)\n", nil},
		{"active-py is raw in the notebook", "# %% tags=[\"active-py\"]\nimport sys\n# %%\n2\n", []string{"py||2\n"}},
		{"active-ipynb is uncommented", "# %% tags=[\"active-ipynb\"]\n# # a comment\n# %matplotlib inline\n", []string{"py|[active-ipynb]|# a comment\n%matplotlib inline\n"}},
		{"active option", "# %% active=\"ipynb\"\n# print(1)\n# %% active=\"py\"\nprint(2)\n", []string{"py||print(1)\n"}},
		{"active in both", "# %% active=\"ipynb,py\"\nprint(3)\n", []string{"py||print(3)\n"}},
		{"frozen cells are notebook-only", "# %% run_control={\"frozen\": true}\n# print(1)\n", []string{"py||print(1)\n"}},
		{"unreadable options stay the title", "# %% Compute a=b+c\nx\n", []string{"py|Compute a=b+c|x\n"}},
		{"braces that are not json", "# %% Set {x}\nx\n", []string{"py|Set {x}|x\n"}},
		{"sub-cells", "# %%% sub-cell title\n1\n", []string{"py|sub-cell title|1\n"}},
		{"marker in a string is code", "s = \"\"\"\n# %% not a cell\n\"\"\"\n# %%\n1\n", []string{"py||s = \"\"\"\n# %% not a cell\n\"\"\"\n", "py||1\n"}},
		{"nbconvert markers", "# In[1]:\n1\n# <codecell>\n2\n", []string{"py||1\n", "py||2\n"}},
		{"magics stay comments without a header", "# %%\n# %matplotlib inline\n1\n", []string{"py||# %matplotlib inline\n1\n"}},
		{"jupytext header uncomments magics", jupytextHeader + "# %%\n# %matplotlib inline\n# !pip install x\n# files = !ls\n# ordinary comment\n# # ls escaped comment\n1\n", []string{"py||%matplotlib inline\n!pip install x\nfiles = !ls\n# ordinary comment\n# ls escaped comment\n1\n"}},
		{"jupytext header cell magic", jupytextHeader + "# %%\n# %%time\n\nprint('asdf')\n", []string{"py||%%time\n\nprint('asdf')\n"}},
		{"magic in a string stays", jupytextHeader + "# %%\ns = '''\n# %time\n'''\n", []string{"py||s = '''\n# %time\n'''\n"}},
		{"header says comment_magics false", "# ---\n# jupyter:\n#   jupytext:\n#     comment_magics: false\n# ---\n# %%\n# %time x\n", []string{"py||# %time x\n"}},
		{"header lines are not code", jupytextHeader + "x = 1\n", []string{"py||x = 1\n"}},
		// python3 runs an empty file, or one of comments, and prints nothing.
		{"an empty plain script is one cell", "", []string{"py||\n"}},
		{"a plain script of blank lines", "\n  \n", []string{"py||\n  \n"}},
		{"a plain script of comments", "#!/usr/bin/env python3\n# nothing yet\n\n", []string{"py||#!/usr/bin/env python3\n# nothing yet\n\n"}},
		// as python3 compiles the file: an error at its end is placed by its last lines
		{"a plain script is its text as it is", "x = (1,\n2\n\n\n", []string{"py||x = (1,\n2\n\n\n"}},
		{"a plain script's last line without a newline", "s = 1\nt = 2", []string{"py||s = 1\nt = 2"}},
		{"a Jupytext header alone has none", jupytextHeader, nil},
		{"markers alone have none", "# %%\n# %% [markdown]\n# notes\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, c := range Split(tt.src, sessions.LangPython) {
				tags := ""
				if c.Tags != nil {
					tags = "[" + strings.Join(c.Tags, " ") + "]"
				}
				got = append(got, c.Language+"|"+c.Title+tags+"|"+c.Code)
			}
			if strings.Join(got, "\x00") != strings.Join(tt.want, "\x00") {
				t.Fatalf("Split(%q)\n got %q\nwant %q", tt.src, got, tt.want)
			}
		})
	}
}

// A script without any marker (or Jupytext's header) is a plain script:
// its Python cell runs as python3 runs the file (sessions.Cell.Script).
func TestSplitPlainScript(t *testing.T) {
	for _, tt := range []struct {
		name, src, lang string
		want            []bool // each cell's Script
	}{
		{"no marker", "def main():\n    return 0\nmain()\n", sessions.LangPython, []bool{true}},
		{"a shebang and comments", "#!/usr/bin/env python3\n# does things\nx = 1\nx\n", sessions.LangPython, []bool{true}},
		{"a marker in a string only", "s = '''\n# %% not a cell\n'''\ns\n", sessions.LangPython, []bool{true}},
		{"a shell script", "echo hi\n", sessions.LangShell, []bool{false}},
		{"markers", "x = 41\n# %%\nx + 1\n", sessions.LangPython, []bool{false, false}},
		{"code before the first marker", "x = 1\n# %%\nx\n", sessions.LangPython, []bool{false, false}},
		{"only a markdown marker", "x = 1\nx\n# %% [markdown]\n# prose\n", sessions.LangPython, []bool{false}},
		{"an nbconvert marker", "# In[1]:\nx = 1\nx\n", sessions.LangPython, []bool{false}},
		{"Jupytext's header", jupytextHeader + "x = 1\nx\n", sessions.LangPython, []bool{false}},
		{"empty", "", sessions.LangPython, []bool{true}},
		{"only comments", "# todo\n", sessions.LangPython, []bool{true}},
		{"a shell script of only comments", "# todo\n", sessions.LangShell, []bool{false}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []bool
			for _, c := range Split(tt.src, tt.lang) {
				got = append(got, c.Script)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("Split(%q): Script %v, want %v", tt.src, got, tt.want)
			}
		})
	}
}

const jupytextHeader = "# ---\n# jupyter:\n#   kernelspec:\n#     display_name: Python 3\n#     language: python\n#     name: python3\n# ---\n\n"

func TestMagicsOption(t *testing.T) {
	src := "# %%\n# %time x = 1\n"
	for _, tt := range []struct {
		name   string
		magics Magics
		header bool
		want   string
	}{
		{"auto without header", MagicsAuto, false, "# %time x = 1\n"},
		{"auto with header", MagicsAuto, true, "%time x = 1\n"},
		{"on", MagicsOn, false, "%time x = 1\n"},
		{"off with header", MagicsOff, true, "# %time x = 1\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := src
			if tt.header {
				in = jupytextHeader + src
			}
			cells := SplitScript(in, Options{Magics: tt.magics})
			if len(cells) != 1 || cells[0].Code != tt.want {
				t.Fatalf("got %+v, want one cell %q", cells, tt.want)
			}
		})
	}
}

func TestMarkerMetadata(t *testing.T) {
	cells := Split("# %% Title key=\"v\" n=10 f=1.5 flag ok=true tags=['a'] d={\"x\": [1, null]}\n1\n", sessions.LangPython)
	if len(cells) != 1 {
		t.Fatalf("cells: %+v", cells)
	}
	want := map[string]any{"key": "v", "n": int64(10), "f": 1.5, "flag": nil, "ok": true, "tags": []any{"a"}, "d": map[string]any{"x": []any{int64(1), nil}}}
	if fmt.Sprint(cells[0].Metadata) != fmt.Sprint(want) || cells[0].Title != "Title" {
		t.Fatalf("metadata %v title %q\nwant %v", cells[0].Metadata, cells[0].Title, want)
	}
}

func FuzzSplitPercent(f *testing.F) {
	f.Add("x = 41\n# %%\nx + 1\n")
	f.Add("# %% [sh] t\nls\n# %% [markdown]\n# x")
	f.Add(jupytextHeader + "# %% T a=1 tags=['active-ipynb'] {\"x\": (1,)}\n# %time\ns='''\n# %%\n'''\n")
	f.Fuzz(func(t *testing.T, src string) {
		for _, c := range Split(src, sessions.LangPython) {
			if strings.TrimSpace(c.Code) == "" {
				t.Fatalf("empty cell kept from %q", src)
			}
			if c.Language != sessions.LangPython && c.Language != sessions.LangShell {
				t.Fatalf("language %q from %q", c.Language, src)
			}
			// Uncommenting removes a prefix: each line is still in the source.
			for _, line := range strings.Split(strings.TrimRight(c.Code, "\n"), "\n") {
				if !strings.Contains(src, line) {
					t.Fatalf("cell line %q is not from the source %q", line, src)
				}
			}
		}
	})
}

// A cell that does not run is kept, as a NoRun cell without code, only
// when it has a tag Options.KeepTagged names: papermill places its cell
// after a parameters cell of any kind.
func TestSplitKeepTagged(t *testing.T) {
	src := "# %%\na = 1\n# %% [markdown] tags=[\"parameters\"]\n# prose\n# %% [raw] tags=[\"x\"]\n# %% tags=[\"parameters\"]\n\n# %%\nb = 2\n"
	kinds := func(cells []Cell) string {
		var out []string
		for _, c := range cells {
			switch {
			case c.NoRun && c.Code == "":
				out = append(out, "norun:"+strings.Join(c.Tags, ","))
			case c.NoRun:
				out = append(out, "norun with code")
			default:
				out = append(out, strings.TrimSpace(c.Code))
			}
		}
		return strings.Join(out, "|")
	}
	if got, want := kinds(SplitScript(src, Options{})), "a = 1|b = 2"; got != want {
		t.Errorf("without KeepTagged: %q, want %q", got, want)
	}
	got := kinds(SplitScript(src, Options{KeepTagged: []string{"parameters"}}))
	if want := "a = 1|norun:parameters|norun:parameters|b = 2"; got != want {
		t.Errorf("with KeepTagged: %q, want %q", got, want)
	}
}
