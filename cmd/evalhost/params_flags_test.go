package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/evalhost/evalhost/notebook"
)

func TestTakeParamFlags(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		wantRest  string
		wantFlags string
		wantErr   string
		// run's: the flags end at FILE
		untilPositional bool
	}{
		{"papermill forms", []string{"nb.ipynb", "-p", "a", "1", "-r", "b", "-2", "-f", "x.yaml", "-y", "c: 3", "-P", "d:4"},
			"nb.ipynb", "-p[a 1] -r[b -2] -f[x.yaml] -y[c: 3] -P[d:4]", "", false},
		{"long and attached forms", []string{"--parameters", "a", "1", "--parameters_raw=b", "x", "-fp.yaml", "--parameters-yaml=k: v"},
			"", "-p[a 1] -r[b x] -f[p.yaml] -y[k: v]", "", false},
		{"another flag's value is not a parameter", []string{"-c", "-p", "--cwd", "-y", "-o", "out"},
			"-c -p --cwd -y -o out", "", "", false},
		{"a positional argument is no cluster of flags", []string{"crlf.ipynb", "cp.ipynb", "cy", "-p", "a", "1", "cfg.ipynb"},
			"crlf.ipynb cp.ipynb cy cfg.ipynb", "-p[a 1]", "", false},
		{"after -- nothing is taken", []string{"--", "-p", "a", "1"}, "-- -p a 1", "", "", false},
		{"missing value", []string{"-p", "a"}, "", "", "-p needs NAME VALUE", false},
		{"missing file", []string{"x", "-f"}, "", "", "-f needs FILE", false},
		{"run: a script's -p after FILE is its own", []string{"-p", "a", "1", "s.py", "-p", "8080"}, "s.py -p 8080", "-p[a 1]", "", true},
		{"run: -c's value is not FILE", []string{"-c", "x", "-fp.yaml", "-", "-y"}, "-c x - -y", "-f[p.yaml]", "", true},
		{"run: an empty argument is FILE", []string{"", "-y", "k: v"}, " -y k: v", "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			fs.StringP("code", "c", "", "")
			fs.String("cwd", "", "")
			fs.StringP("output", "o", "", "")
			fs.Bool("json", false, "")
			registerParamFlags(fs)
			rest, flags, err := takeParamFlags(fs, tt.args, tt.untilPositional)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			var got []string
			for _, f := range flags {
				got = append(got, fmt.Sprintf("%s%v", f.flag, f.args))
			}
			if err != nil || strings.Join(rest, " ") != tt.wantRest || strings.Join(got, " ") != tt.wantFlags {
				t.Fatalf("rest %q flags %q err %v\nwant %q %q", rest, got, err, tt.wantRest, tt.wantFlags)
			}
		})
	}
}

// Papermill's merge order: files, YAML texts, then -p, then -r, whatever
// the command line's order.
func TestBuildParamsOrder(t *testing.T) {
	p, err := buildParams([]paramFlag{{"-r", []string{"a", "raw"}}, {"-p", []string{"a", "1"}}, {"-y", []string{"a: 0\nb: 2"}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "# Parameters\na = \"raw\"\nb = 2\n"; p.Source() != want {
		t.Fatalf("source %q, want %q", p.Source(), want)
	}
	if _, err := buildParams([]paramFlag{{"-f", []string{"-"}}}); err == nil || !strings.Contains(err.Error(), "use -y") {
		t.Fatalf("-f -: %v", err)
	}
	if p, err := buildParams(nil); p != nil || err != nil {
		t.Fatalf("no flags: %v %v", p, err)
	}
}

// With --cells, the selection names the notebook as given: the cells
// after the injected one move, and the injected cell runs.
func TestInjectParamsSelection(t *testing.T) {
	tests := []struct {
		name     string
		tagged   int // the cell tagged parameters, -1 none
		injected int // the cell tagged injected-parameters, -1 none
		selected []int
		want     []int
	}{
		{"after the parameters cell", 1, -1, []int{0, 1, 2, 3}, []int{0, 1, 2, 3, 4}},
		{"only later cells selected", 1, -1, []int{3}, []int{2, 4}},
		{"at the top", -1, -1, []int{1, 2}, []int{0, 2, 3}},
		{"replacing an injected cell", -1, 2, []int{3}, []int{2, 3}},
		{"replacing a selected injected cell", -1, 2, []int{2, 3}, []int{2, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nb := notebook.New()
			for i := range 4 {
				nb.Insert(i, notebook.Code, fmt.Sprint(i))
			}
			if tt.tagged >= 0 {
				nb.SetTags(tt.tagged, []string{"parameters"})
			}
			if tt.injected >= 0 {
				nb.SetTags(tt.injected, []string{"injected-parameters"})
			}
			p, _ := buildParams([]paramFlag{{"-p", []string{"x", "1"}}})
			got, err := injectParams(nb, p, tt.selected)
			if err != nil || fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("selection %v (%v), want %v", got, err, tt.want)
			}
		})
	}
}

// TestRunValueTookFile: "run -p alpha report.py" (a VALUE forgotten) is
// refused at once naming the file -p took, not "nothing to run" after
// the parse (parseRun exits 2 with it); a VALUE that is no file, and a
// FILE given, are left alone.
func TestRunValueTookFile(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "report.py")
	if err := os.WriteFile(script, []byte("x = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string // in stderr; "" parses
	}{
		{"-p took the script", []string{"-p", "alpha", script}, "-p alpha " + script + " took the file"},
		{"-r took the script", []string{"-r", "name", script}, "-r name " + script + " took the file"},
		{"-p then the script", []string{"-p", "alpha", "1", script}, ""},
		{"-p of a word", []string{"-p", "alpha", "nosuch", "-c", "1"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, cl, flags := parseRunArgs(t, tt.args)
			err := checkValueTookFile(cl, f, flags)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v; want one saying %q", err, tt.want)
			}
		})
	}
}
