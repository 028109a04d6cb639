package params

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
	"github.com/evalhost/evalhost/notebook"
)

// flagSet is a command line's parameter flags, merged as papermill's CLI
// merges them.
type flagSet [][]string

func (fs flagSet) params(t *testing.T) (*Params, error) {
	t.Helper()
	var p Params
	for _, f := range fs {
		if f[0] == "-f" {
			data, err := os.ReadFile(f[1])
			if err != nil {
				t.Fatal(err)
			}
			if err := p.MergeYAML(data, "-f "+f[1]); err != nil {
				return nil, err
			}
		}
	}
	for _, f := range fs {
		if f[0] == "-y" {
			if err := p.MergeYAML([]byte(f[1]), "-y"); err != nil {
				return nil, err
			}
		}
	}
	for _, f := range fs {
		if f[0] == "-P" {
			if err := p.SetQuarto(f[1]); err != nil {
				return nil, err
			}
		}
	}
	for _, f := range fs {
		if f[0] == "-p" {
			if err := p.SetTyped(f[1], f[2]); err != nil {
				return nil, err
			}
		}
	}
	for _, f := range fs {
		if f[0] == "-r" {
			if err := p.SetRaw(f[1], f[2]); err != nil {
				return nil, err
			}
		}
	}
	return &p, nil
}

var paramCases = []struct {
	name  string
	flags flagSet
	want  string // "" when only papermill's own output is compared
}{
	{"ints", flagSet{{"-p", "a", "42"}, {"-p", "b", "-7"}, {"-p", "c", " +1_000 "}, {"-p", "d", "007"}, {"-p", "e", "123456789012345678901234567890"}},
		"# Parameters\na = 42\nb = -7\nc = 1000\nd = 7\ne = 123456789012345678901234567890\n"},
	{"floats", flagSet{{"-p", "a", "0.1"}, {"-p", "b", "1e5"}, {"-p", "c", "1e16"}, {"-p", "d", "0.00001"}, {"-p", "e", ".5"}, {"-p", "f", "5."}, {"-p", "g", "1_0.2_5"}, {"-p", "h", "1e400"}, {"-p", "i", "-inf"}, {"-p", "j", "NaN"}, {"-p", "k", "Infinity"}, {"-p", "l", "-0.0"}, {"-p", "m", "123456789.123"}},
		"# Parameters\na = 0.1\nb = 100000.0\nc = 1e+16\nd = 1e-05\ne = 0.5\nf = 5.0\ng = 10.25\nh = float('inf')\ni = float('-inf')\nj = float('nan')\nk = float('inf')\nl = -0.0\nm = 123456789.123\n"},
	{"words", flagSet{{"-p", "a", "True"}, {"-p", "b", "False"}, {"-p", "c", "None"}, {"-p", "d", "true"}, {"-p", "e", "none"}, {"-p", "f", "0x10"}, {"-p", "g", "1__0"}, {"-p", "h", ""}},
		"# Parameters\na = True\nb = False\nc = None\nd = \"true\"\ne = \"none\"\nf = \"0x10\"\ng = \"1__0\"\nh = \"\"\n"},
	{"strings escaped", flagSet{{"-p", "a", "it's \"quoted\"\\n"}, {"-p", "b", "tab\there\nnew"}, {"-p", "c", "é ü 中 😀"}, {"-p", "d", "\x01\x7f"}},
		"# Parameters\na = \"it's \\\"quoted\\\"\\\\n\"\nb = \"tab\\there\\nnew\"\nc = \"\\xe9 \\xfc \\u4e2d \\U0001f600\"\nd = \"\\x01\\x7f\"\n"},
	{"unicode digits", flagSet{{"-p", "a", "٤٢"}, {"-p", "b", "١.٥"}}, "# Parameters\na = 42\nb = 1.5\n"},
	{"raw stays a string", flagSet{{"-r", "a", "42"}, {"-r", "b", "None"}}, "# Parameters\na = \"42\"\nb = \"None\"\n"},
	{"later wins in place", flagSet{{"-r", "a", "raw"}, {"-p", "a", "1"}, {"-p", "b", "2"}, {"-y", "b: 3\nc: 4"}},
		"# Parameters\nb = 2\nc = 4\na = \"raw\"\n"},
	{"yaml 1.1 scalars", flagSet{{"-y", "a: yes\nb: off\nc: 010\nd: 0x1F\ne: 1e5\nf: 1.5e+3\ng: ~\nh:\ni: .inf\nj: -.inf\nk: .NaN\nl: 2024-01-02\nm: 0b101\nn: 1_000\no: 190:20:30\np: 08\nq: '1'\nr: !!str 2\ns: !!float 3\nt: +12\nu: 1.\nv: 0o17"}},
		"# Parameters\na = True\nb = False\nc = 8\nd = 31\ne = \"1e5\"\nf = 1500.0\ng = None\nh = None\ni = float('inf')\nj = float('-inf')\nk = float('nan')\nl = \"2024-01-02\"\nm = 5\nn = 1000\no = 685230\np = \"08\"\nq = \"1\"\nr = \"2\"\ns = 3.0\nt = 12\nu = 1.0\nv = \"0o17\"\n"},
	{"yaml structures", flagSet{{"-y", "a: [1, two, {x: 3.5}]\nb: {k: v, 2: n, true: t, null: z}\nbase: &b {p: 1, q: 2}\nd:\n  <<: *b\n  q: 3\ne: *b"}},
		"# Parameters\na = [1, \"two\", {\"x\": 3.5}]\nb = {\"k\": \"v\", \"2\": \"n\", \"True\": \"t\", \"None\": \"z\"}\nbase = {\"p\": 1, \"q\": 2}\nd = {\"p\": 1, \"q\": 3}\ne = {\"p\": 1, \"q\": 2}\n"},
	// Python's dict holds 1, True and 1.0 as one key (the first given,
	// with the last value), and 0, False and 0.0.
	{"yaml keys equal in Python", flagSet{{"-y", "a: {1: one, true: t, 1.0: f, 0: z, false: n, 2.5: h, 0.0: zz}"}},
		"# Parameters\na = {\"1\": \"f\", \"0\": \"zz\", \"2.5\": \"h\"}\n"},
	// Python's int() reads no more than 4,300 decimal digits (3.11+), so
	// papermill's -p reads such a number with float(); and a longer int
	// in metadata.papermill would make a notebook Python's json (Jupyter)
	// cannot read.
	{"int past Python's digit limit", flagSet{{"-p", "a", strings.Repeat("1", 4300)}, {"-p", "b", strings.Repeat("1", 4301)}, {"-p", "c", "-" + strings.Repeat("1_", 4300) + "1"}, {"-p", "d", "0x" + strings.Repeat("f", 5000)}},
		"# Parameters\na = " + strings.Repeat("1", 4300) + "\nb = float('inf')\nc = float('-inf')\nd = \"0x" + strings.Repeat("f", 5000) + "\"\n"},
	{"yaml file and strings", flagSet{{"-f", "testdata/params.yaml"}, {"-y", "alpha: 0.2"}, {"-p", "n", "3"}}, ""},
	{"yaml merge lists", flagSet{{"-y", "a: &a {x: 1, y: 1}\nb: &b {y: 2, z: 2}\nc:\n  w: 0\n  <<: [*a, *b]\n  x: 9"}}, ""},
	{"yaml odd scalars", flagSet{{"-y", "a: 1:30\nb: -0b11\nc: 0.5e-3\nd: 6.8523015e+5\ne: 685_230.15\nf: 190:20:30.15\ng: Yes\nh: NO\ni: 'yes'\nj: \"tab\\there\"\nk: >\n  folded\n  text\n"}}, ""},
	{"empty yaml", flagSet{{"-y", ""}, {"-y", "# nothing"}, {"-p", "x", "1"}}, "# Parameters\nx = 1\n"},
}

func TestSource(t *testing.T) {
	for _, tt := range paramCases {
		if tt.want == "" {
			continue
		}
		t.Run(tt.name, func(t *testing.T) {
			p, err := tt.flags.params(t)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Source(); got != tt.want {
				t.Fatalf("source\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// The same flags give papermill's own injected source, and the
// metadata.papermill.parameters it records (papermill installed by
// scripts/test-deps.sh).
func TestSourceMatchesPapermill(t *testing.T) {
	testkit.NeedModuleIn(t, "python3", "papermill", "papermill")
	var all []flagSet
	for _, tt := range paramCases {
		all = append(all, tt.flags)
	}
	in, _ := json.Marshal(all)
	cmd := exec.Command("python3", filepath.Join("testdata", "papermill_source.py"))
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("papermill: %v", err)
	}
	var theirs [][2]string // source, parameters' JSON
	if err := json.Unmarshal(out, &theirs); err != nil || len(theirs) != len(paramCases) {
		t.Fatalf("papermill's answer %q: %v", out, err)
	}
	for i, tt := range paramCases {
		t.Run(tt.name, func(t *testing.T) {
			p, err := tt.flags.params(t)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Source(); got != theirs[i][0] {
				t.Fatalf("source\n      got %q\npapermill %q", got, theirs[i][0])
			}
			nb := notebook.New()
			if err := nb.SetMetadata("parameters", p.Metadata()); err != nil {
				t.Fatal(err)
			}
			if got := string(nb.Metadata("parameters")); got != theirs[i][1] {
				t.Fatalf("metadata\n      got %s\npapermill %s", got, theirs[i][1])
			}
		})
	}
}

func TestBadParameters(t *testing.T) {
	tests := []struct {
		name  string
		flags flagSet
		want  string
	}{
		{"not an identifier", flagSet{{"-p", "1x", "1"}}, `-p 1x: parameter name "1x" is not a Python identifier`},
		{"keyword", flagSet{{"-r", "class", "1"}}, `-r class: parameter name "class" is a Python keyword`},
		{"yaml syntax", flagSet{{"-y", "a: [1"}}, "-y: not valid YAML: line 1"},
		{"yaml list", flagSet{{"-y", "- a\n- b"}}, "-y: want a mapping of parameter names to values (name: value), got a list"},
		{"yaml scalar", flagSet{{"-y", "just text"}}, "-y: want a mapping of parameter names to values (name: value), got a string"},
		{"yaml int name", flagSet{{"-y", "1: x"}}, "-y: parameter name 1 is not a string"},
		{"yaml bad name", flagSet{{"-y", "my-name: x"}}, `-y: parameter name "my-name" is not a Python identifier`},
		{"yaml documents", flagSet{{"-y", "a: 1\n---\nb: 2"}}, "-y: not valid YAML: expected a single document, but found another one at line 2"},
		{"yaml document marker first", flagSet{{"-y", "---\na: 1\n---\n"}}, "found another one"},
		{"yaml int past Python's digit limit", flagSet{{"-y", "a: " + strings.Repeat("9", 4301)}},
			"-y: line 1: an integer of 4301 digits, past Python's limit for converting a string to an int (4300 digits, sys.get_int_max_str_digits())"},
		{"yaml int past Python's digit limit in a list", flagSet{{"-y", "a:\n  - 1\n  - " + strings.Repeat("9", 4301)}}, "-y: line 3: an integer of 4301 digits"},
		{"-P int past Python's digit limit", flagSet{{"-P", "a:" + strings.Repeat("9", 4301)}}, "-P a: line 1: an integer of 4301 digits"},
		{"yaml document end then more", flagSet{{"-y", "a: 1\n...\n---\nb: 2"}}, "found another one"},
		// Read without the limit (bases 16, 8, 2 and 60), but written into
		// the parameters cell, and metadata.papermill, in decimal: python3
		// refuses that literal (a SyntaxError in the cell), papermill's
		// translation of it too.
		{"yaml hex int past Python's digit limit", flagSet{{"-y", "a: 0x" + strings.Repeat("f", 3572)}},
			"-y: line 1: an integer of 4302 digits in decimal (written in hexadecimal), past Python's limit for converting an int to a decimal string (4300 digits"},
		{"yaml octal int past Python's digit limit", flagSet{{"-y", "a: 0" + strings.Repeat("7", 4762)}}, "-y: line 1: an integer of 4301 digits in decimal (written in octal)"},
		{"yaml binary int past Python's digit limit", flagSet{{"-y", "a: -0b1" + strings.Repeat("0", 14285)}}, "-y: line 1: an integer of 4301 digits in decimal (written in binary)"},
		{"yaml base 60 int past Python's digit limit", flagSet{{"-y", "a: 1" + strings.Repeat(":00", 2419)}}, "-y: line 1: an integer of 4302 digits in decimal (written in base 60)"},
		{"yaml hex int of millions of bits", flagSet{{"-y", "a: 0x" + strings.Repeat("f", 300000)}}, "-y: line 1: an integer of at least 361236 digits in decimal (written in hexadecimal)"},
		{"yaml !!int hex past Python's digit limit", flagSet{{"-y", "a: !!int 0x" + strings.Repeat("f", 3572)}}, "-y: line 1: an integer of 4302 digits in decimal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.flags.params(t)
			if !errors.Is(err, ErrBadParameter) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want ErrBadParameter with %q", err, tt.want)
			}
		})
	}
}

// TestNotParameters: an error whose text is no parameters at all (a
// script's flag, perhaps: -p 8080, -y install.py) says so; one about a
// name that is meant as a parameter's does not.
func TestNotParameters(t *testing.T) {
	tests := []struct {
		name  string
		flags flagSet
		want  bool
	}{
		{"a number for -p's NAME", flagSet{{"-p", "8080", "s.py"}}, true},
		{"-r's NAME with a dash", flagSet{{"-r", "--port", "1"}}, true},
		{"-y's text a string", flagSet{{"-y", "install.py"}}, true},
		{"-y's text not YAML", flagSet{{"-y", "a: [1"}}, true},
		{"-P without NAME:VALUE", flagSet{{"-P", "4"}}, true},
		{"a keyword for -p's NAME", flagSet{{"-p", "class", "5"}}, false},
		{"a name in -y that is no identifier", flagSet{{"-y", "my-name: 5"}}, false},
		{"-P's name that is no identifier", flagSet{{"-P", "1x:5"}}, false},
		// A value's error: the text is parameters, one value is too long.
		{"an int past Python's digit limit in -y", flagSet{{"-y", "a: " + strings.Repeat("9", 4301)}}, false},
		{"an int past Python's digit limit in -P", flagSet{{"-P", "a:" + strings.Repeat("9", 4301)}}, false},
		{"a hex int past Python's digit limit in -y", flagSet{{"-y", "a: 0x" + strings.Repeat("f", 3572)}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.flags.params(t)
			if !errors.Is(err, ErrBadParameter) || errors.Is(err, ErrNotParameters) != tt.want {
				t.Fatalf("error %v; want ErrBadParameter, and ErrNotParameters %v", err, tt.want)
			}
		})
	}
}

func FuzzResolve(f *testing.F) {
	for _, s := range []string{"1", "1.5", "1e5", "nan", "-inf", "True", "x", "٤٢", "1_0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var p Params
		if err := p.SetTyped("x", s); err != nil {
			t.Fatal(err)
		}
		if src := p.Source(); !strings.HasPrefix(src, "# Parameters\nx = ") || strings.Count(src, "\n") != 2 {
			t.Fatalf("source of %q: %q", s, src)
		}
	})
}

func FuzzMergeYAML(f *testing.F) {
	f.Add("a: 1\nb: [x, {c: d}]\n")
	f.Add("base: &b {p: 1}\nd:\n  <<: *b\n")
	f.Fuzz(func(t *testing.T, s string) {
		var p Params
		if p.MergeYAML([]byte(s), "-y") == nil && p.Len() > 0 && !strings.HasPrefix(p.Source(), "# Parameters\n") {
			t.Fatalf("source of %q: %q", s, p.Source())
		}
	})
}

func TestYAMLAliasBomb(t *testing.T) {
	bomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for _, name := range []string{"b", "c", "d", "e", "f", "g", "h"} {
		bomb += name + ": &" + name + " [*" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + "]\n"
		prev = name
	}
	var p Params
	if err := p.MergeYAML([]byte(bomb), "-y"); !errors.Is(err, ErrBadParameter) || !strings.Contains(err.Error(), "aliases expanded") {
		t.Fatalf("alias bomb: %v", err)
	}
}

// quarto's -P takes NAME:VALUE and NAME=VALUE, split at the first of the two.
func TestSetQuarto(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{"a:1", "a = 1\n"},
		{"a=1", "a = 1\n"},
		{"url=http://x", "url = \"http://x\"\n"},
		{"t:a=b", "t = \"a=b\"\n"},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			var p Params
			if err := p.SetQuarto(tc.spec); err != nil {
				t.Fatal(err)
			}
			if got := p.Source(); !strings.HasSuffix(got, tc.want) {
				t.Errorf("-P %s: %q, want it to end %q", tc.spec, got, tc.want)
			}
		})
	}
	var p Params
	if err := p.SetQuarto("nothing"); !errors.Is(err, ErrBadParameter) || !strings.Contains(err.Error(), "NAME=VALUE") {
		t.Errorf("-P nothing: %v", err)
	}
}
