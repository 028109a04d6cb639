package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
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
	// A name another chose (a cloned repository's): shown quoted, not
	// raw, where it could drive the terminal or fake a line of advice.
	hostile := filepath.Join(dir, "r\x1b[2J\nevalhost: fine.py")
	for _, p := range []string{script, hostile} {
		if err := os.WriteFile(p, []byte("x = 1\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		args []string
		want string // in stderr; "" parses
	}{
		{"-p took the script", []string{"-p", "alpha", script}, "-p alpha " + script + " took the file"},
		{"-p took a script of a hostile name", []string{"-p", "alpha", hostile}, "-p alpha " + strconv.Quote(hostile) + " took the file"},
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
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.ContainsAny(err.Error(), "\x1b\n") {
				t.Fatalf("err = %q; want one saying %q, no control character raw", err, tt.want)
			}
		})
	}
}

// TestRunParamFlagErrorsSayOneThing: a bad parameter flag of run's is
// refused with its error, and a hint only where it helps: where the flag
// may have been the script's (its text was no parameters at all: -p 8080,
// -y install.py; -f's file unreadable) that a script's flags go after
// FILE, after a -c cell that its flags go after "--", and nothing else
// (a keyword for a NAME is a parameter's mistake, not a script's flag).
func TestRunParamFlagErrorsSayOneThing(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "s.py")
	if err := os.WriteFile(script, []byte("x = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("9", 4301)
	bigYAML := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(bigYAML, []byte("a: 1\nn: "+long+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tooLong := "an integer of 4301 digits, past Python's limit for converting a string to an int (4300 digits, sys.get_int_max_str_digits()), " +
		"which papermill's YAML loader fails on: to pass it as a string, quote it in the YAML or give it with -r NAME VALUE"
	cHint := "For the -c cells' sys.argv, put their arguments after --: evalhost run -c CODE -- ARG..., as python3 -c CODE -- ARG... gives them.\n"
	tests := []struct {
		name string
		args []string
		want string // the error, after "evalhost run: "
		hint string // what follows it
	}{
		{"a keyword for -p's NAME", []string{"-p", "class", "5", script},
			`-p class: parameter name "class" is a Python keyword, which the injected cell cannot assign (class = ... is a SyntaxError): give the parameter another name`, ""},
		{"a keyword for -r's NAME", []string{"-r", "None", "5", script}, `-r None: parameter name "None" is a Python keyword`, ""},
		{"a keyword in -y", []string{"-y", "class: 5", script}, `-y: parameter name "class" is a Python keyword`, ""},
		{"a name that is no identifier in -y", []string{"-y", "my-name: 5", script}, `-y: parameter name "my-name" is not a Python identifier`, ""},
		{"-P's name that is no identifier", []string{"-P", "1x:5", script}, `-P 1x: parameter name "1x" is not a Python identifier`, ""},
		{"-f -", []string{"-f", "-", script}, "-f -: give a YAML file's path (for YAML text, use -y)", ""},
		{"-p without its VALUE", []string{"-p", "a"}, "-p needs NAME VALUE", ""},
		{"-y without its YAML", []string{"-y"}, "-y needs YAML", ""},
		{"-y without its YAML after a -c cell", []string{"--cwd", dir, "-uc", "x", "-y"}, "-y needs YAML", cHint},
		{"a number for -p's NAME", []string{"-p", "8080", script}, `-p 8080: parameter name "8080" is not a Python identifier`, scriptFlagsHint + "\n"},
		{"-y of a script", []string{"-y", script}, "-y: want a mapping of parameter names to values (name: value), got a string", scriptFlagsHint + "\n"},
		{"-f of a file that is not there", []string{"-f", filepath.Join(dir, "out.txt"), script}, "-f: cannot open", scriptFlagsHint + "\n"},
		{"-f of a script", []string{"-f", script, script}, "-f " + script + ": want a mapping of parameter names to values (name: value), got a string", scriptFlagsHint + "\n"},
		{"-P without NAME:VALUE", []string{"-P", "4", script}, "-P 4: want NAME:VALUE (or NAME=VALUE)", scriptFlagsHint + "\n"},
		// A value Python's int() cannot read is the parameter's mistake:
		// the error says what and what to do, no script's flag is hinted.
		{"-y with an int past Python's digit limit", []string{"-y", "n: " + long, script}, "-y: line 1: " + tooLong, ""},
		{"-f with an int past Python's digit limit", []string{"-f", bigYAML, script}, "-f " + bigYAML + ": line 2: " + tooLong, ""},
		{"-P with an int past Python's digit limit", []string{"-P", "n:" + long, script}, "-P n: line 1: " + tooLong, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f runFlags
			var stderr strings.Builder
			if _, code, ok := parseRun(&f, tt.args, nil, io.Discard, &stderr); ok || code != exitUsage {
				t.Fatalf("parsed (ok %v, code %d); stderr %q", ok, code, stderr.String())
			}
			first, rest, _ := strings.Cut(stderr.String(), "\n")
			if !strings.HasPrefix(first, "evalhost run: "+tt.want) || rest != tt.hint {
				t.Errorf("stderr:\n%s\nwant the error %q, then %q", stderr.String(), tt.want, tt.hint)
			}
		})
	}
}
