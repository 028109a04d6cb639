package params

import (
	"strings"
	"testing"

	"github.com/evalhost/evalhost/notebook"
	"github.com/evalhost/evalhost/percent"
	"github.com/evalhost/evalhost/sessions"
)

func TestInjectNotebook(t *testing.T) {
	var p Params
	if err := p.SetTyped("n", "3"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		cells  string // one letter per cell: c code, p tagged parameters, i tagged injected-parameters, m markdown
		wantAt int
		want   string
	}{
		{"no parameters cell: at the top", "cc", 0, "Icc"},
		{"after the parameters cell", "cpc", 2, "cpIc"},
		{"after the first of two", "pcp", 1, "pIcp"},
		{"replaces an injected cell", "pic", 1, "pIc"},
		{"a markdown parameters cell counts", "mc", 0, "Imc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nb := notebook.New()
			for i, k := range tt.cells {
				typ := notebook.Code
				if k == 'm' {
					typ = notebook.Markdown
				}
				if err := nb.Insert(i, typ, string(k)); err != nil {
					t.Fatal(err)
				}
				switch k {
				case 'p':
					nb.SetTags(i, []string{"parameters"})
				case 'i':
					nb.SetTags(i, []string{"injected-parameters"})
				}
			}
			at, err := InjectNotebook(nb, &p)
			if err != nil || at != tt.wantAt {
				t.Fatalf("at %d, %v; want %d", at, err, tt.wantAt)
			}
			var got strings.Builder
			for i, c := range nb.Cells() {
				if strings.Join(nb.Tags(i), ",") == "injected-parameters" {
					if c.Source != "# Parameters\nn = 3\n" || c.Type != notebook.Code {
						t.Fatalf("injected cell %+v", c)
					}
					got.WriteString("I")
					continue
				}
				got.WriteString(c.Source)
			}
			if got.String() != tt.want {
				t.Fatalf("cells %q, want %q", got.String(), tt.want)
			}
			if _, err := notebook.Parse(nb.Bytes()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestInjectCells(t *testing.T) {
	var p Params
	p.SetRaw("s", "x")
	src := "# %%\na = 1\n# %% tags=[\"parameters\"]\ns = 'default'\n# %%\nprint(s)\n"
	cells := InjectCells(percent.Split(src, sessions.LangPython), &p)
	var got []string
	for _, c := range cells {
		got = append(got, strings.TrimSpace(c.Code))
	}
	want := []string{"a = 1", "s = 'default'", "# Parameters\ns = \"x\"", "print(s)"}
	if strings.Join(got, "|") != strings.Join(want, "|") || strings.Join(cells[2].Tags, ",") != "injected-parameters" {
		t.Fatalf("cells %q (tags %q), want %q", got, cells[2].Tags, want)
	}
	if top := InjectCells(percent.Split("print(1)\n", sessions.LangPython), &p); len(top) != 2 || top[0].Tags[0] != InjectedTag {
		t.Fatalf("without a parameters cell: %+v", top)
	}
}
