package percent

import (
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, c := range Split(tt.src, sessions.LangPython) {
				got = append(got, c.Language+"|"+c.Title+"|"+c.Code)
			}
			if strings.Join(got, "\x00") != strings.Join(tt.want, "\x00") {
				t.Fatalf("Split(%q)\n got %q\nwant %q", tt.src, got, tt.want)
			}
		})
	}
}

func FuzzSplitPercent(f *testing.F) {
	f.Add("x = 41\n# %%\nx + 1\n")
	f.Add("# %% [sh] t\nls\n# %% [markdown]\n# x")
	f.Fuzz(func(t *testing.T, src string) {
		for _, c := range Split(src, sessions.LangPython) {
			if strings.TrimSpace(c.Code) == "" {
				t.Fatalf("empty cell kept from %q", src)
			}
			if c.Language != sessions.LangPython && c.Language != sessions.LangShell {
				t.Fatalf("language %q from %q", c.Language, src)
			}
			if !strings.Contains(src, strings.TrimRight(c.Code, "\n")) {
				t.Fatalf("cell code %q is not from the source %q", c.Code, src)
			}
		}
	})
}
