package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestParseCommandLine reads run's command line as main does (its flags,
// then the positional arguments) and checks what the cells are told.
func TestParseCommandLine(t *testing.T) {
	wd, err := physicalWd()
	if err != nil {
		t.Fatal(err)
	}
	abs := filepath.Join(wd, "s.py")
	tests := []struct {
		name string
		args []string // run's arguments
		want commandLine
		code []string // the -c cells
	}{
		{"-c alone", []string{"-c", "x"}, commandLine{argv: []string{"-c"}}, []string{"x"}},
		{"-c with arguments, as python3 -c", []string{"-c", "x", "a", "b"}, commandLine{argv: []string{"-c", "a", "b"}}, []string{"x"}},
		// python3 -c CODE -- x gives ['-c', '--', 'x']: its options end at -c.
		{"-c then -- ends run's flags, and is the cells'", []string{"-c", "x", "--", "-b"}, commandLine{argv: []string{"-c", "--", "-b"}}, []string{"x"}},
		{"-c, run's flags, --", []string{"-c", "x", "--json", "-c", "y", "--", "--json"}, commandLine{argv: []string{"-c", "--", "--json"}}, []string{"x", "y"}},
		{"-c then -- alone", []string{"--code=x", "--"}, commandLine{argv: []string{"-c", "--"}}, []string{"x"}},
		{"-c in a cluster, then -- twice", []string{"-uc", "x", "--", "--", "y"}, commandLine{argv: []string{"-c", "--", "--", "y"}}, []string{"x"}},
		{"-c's cell --", []string{"-c", "--", "y"}, commandLine{argv: []string{"-c", "y"}}, []string{"--"}},
		{"-- after -c's argument is the cells'", []string{"-c", "x", "a", "--", "y"}, commandLine{argv: []string{"-c", "a", "--", "y"}}, []string{"x"}},
		{"-c after -- is FILE", []string{"--", "-c", "y"}, commandLine{"-c", []string{"-c", "y"}, filepath.Join(wd, "-c"), ""}, nil},
		{"-c, then a name that is no FILE", []string{"-c", "x", "s.py", "-c", "y"}, commandLine{argv: []string{"-c", "s.py", "-c", "y"}}, []string{"x"}},
		{"FILE", []string{"s.py"}, commandLine{"s.py", []string{"s.py"}, abs, ""}, nil},
		{"FILE and arguments", []string{"s.py", "1", "2"}, commandLine{"s.py", []string{"s.py", "1", "2"}, abs, ""}, nil},
		{"run's -c after FILE is the script's", []string{"s.py", "-c", "cfg.yaml"}, commandLine{"s.py", []string{"s.py", "-c", "cfg.yaml"}, abs, ""}, nil},
		{"run's --json after FILE is the script's", []string{"s.py", "--json"}, commandLine{"s.py", []string{"s.py", "--json"}, abs, ""}, nil},
		{"a parameter flag after FILE is the script's", []string{"s.py", "-p", "a", "1"}, commandLine{"s.py", []string{"s.py", "-p", "a", "1"}, abs, ""}, nil},
		{"run's flags before FILE", []string{"--json", "--timeout", "5", "s.py", "--timeout", "9"}, commandLine{"s.py", []string{"s.py", "--timeout", "9"}, abs, ""}, nil},
		{"-- after FILE is the script's, as python3's", []string{"s.py", "1", "--", "--n"}, commandLine{"s.py", []string{"s.py", "1", "--", "--n"}, abs, ""}, nil},
		{"-- before FILE ends run's flags", []string{"--", "s.py", "--n"}, commandLine{"s.py", []string{"s.py", "--n"}, abs, ""}, nil},
		{"a FILE named like a flag after --", []string{"--", "-w.py", "z"}, commandLine{"-w.py", []string{"-w.py", "z"}, filepath.Join(wd, "-w.py"), ""}, nil},
		{"stdin", []string{"-", "x", "--json"}, commandLine{"-", []string{"-", "x", "--json"}, "<stdin>", ""}, nil},
		// Cleaned, link/../s.py would name ./s.py, not the file beside
		// the link's target that is read.
		{"a FILE through a link's ..", []string{"link/../s.py"}, commandLine{"link/../s.py", []string{"link/../s.py"}, wd + "/link/../s.py", ""}, nil},
		{"an absolute FILE as given", []string{"/w/./s.py"}, commandLine{"/w/./s.py", []string{"/w/./s.py"}, "/w/./s.py", ""}, nil},
		{"nothing", nil, commandLine{argv: []string{"-c"}}, nil},
		{"a lone --", []string{"--"}, commandLine{argv: []string{"-c"}}, nil},
		// -m MODULE ends run's flags, as FILE does (python3 -m).
		{"-m", []string{"-m", "json.tool"}, commandLine{argv: []string{"-m"}, module: "json.tool"}, nil},
		{"-m's arguments, flags included", []string{"-m", "pkg.cli", "a", "--json", "-c", "x", "--", "-m", "y"},
			commandLine{argv: []string{"-m", "a", "--json", "-c", "x", "--", "-m", "y"}, module: "pkg.cli"}, nil},
		{"-mMODULE", []string{"-mhttp.server", "8000"}, commandLine{argv: []string{"-m", "8000"}, module: "http.server"}, nil},
		{"run's flags before -m", []string{"--json", "--timeout", "5", "-m", "m", "--timeout", "9"},
			commandLine{argv: []string{"-m", "--timeout", "9"}, module: "m"}, nil},
		{"a flag's value -m is no -m", []string{"--cwd", "-m", "s.py"}, commandLine{"s.py", []string{"s.py"}, abs, ""}, nil},
		{"-c's cell -m is no -m", []string{"-c", "-m", "a"}, commandLine{argv: []string{"-c", "a"}}, []string{"-m"}},
		{"a parameter's value -m is no -m", []string{"-p", "-m", "1", "s.py"}, commandLine{"s.py", []string{"s.py"}, abs, ""}, nil},
		{"-m after FILE is the script's", []string{"s.py", "-m", "x"}, commandLine{"s.py", []string{"s.py", "-m", "x"}, abs, ""}, nil},
		{"-m after -- is FILE's", []string{"--", "-m", "x"}, commandLine{"-m", []string{"-m", "x"}, filepath.Join(wd, "-m"), ""}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, got, _ := parseRunArgs(t, tt.args)
			if !reflect.DeepEqual(got, tt.want) || !reflect.DeepEqual(f.code, tt.code) {
				t.Errorf("run %q: %+v and cells %q, want %+v and %q", tt.args, got, f.code, tt.want, tt.code)
			}
		})
	}
}

// __file__ joins the working directory as getcwd gives it, links
// resolved, as python3 does, not $PWD's path through a link.
func TestCommandLineFileIsPhysical(t *testing.T) {
	dir := t.TempDir()
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(real, "real"), 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(real, "link")
	if err := os.Symlink(filepath.Join(real, "real"), link); err != nil {
		t.Skip(err)
	}
	t.Chdir(link)
	t.Setenv("PWD", link) // as a shell that cd'd through the link has it
	got, err := parseCommandLine([]string{"s.py"}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(real, "real", "s.py"); got.file != want {
		t.Errorf("__file__ %q, want %q", got.file, want)
	}
}

// Unknown flags before FILE are refused with the hint; after it, nothing is.
func TestRunUnknownFlagHint(t *testing.T) {
	var stderr bytes.Buffer
	var f runFlags
	fs, _ := newRunFlagSet(&f, &stderr)
	if _, ok := parseFlagsHinted(fs, []string{"--epochs", "3", "s.py"}, io.Discard, &stderr, scriptFlagsHint); ok {
		t.Fatal("--epochs before FILE was taken")
	}
	if !bytes.Contains(stderr.Bytes(), []byte("go after FILE")) {
		t.Errorf("no hint: %s", stderr.String())
	}
}

// run --help shows no default session NAME: without --session a run is
// fresh, and the name it uses inside ("run") is none a user should give.
// The value without the flag stays that one-shot name.
func TestRunHelpShowsNoSessionDefault(t *testing.T) {
	var f runFlags
	fs, _ := newRunFlagSet(&f, io.Discard)
	for _, line := range strings.Split(fs.FlagUsages(), "\n") {
		if strings.Contains(line, "--session string") && strings.Contains(line, "(default") {
			t.Errorf("--help shows a default session: %s", line)
		}
	}
	if f, _, _ := parseRunArgs(t, []string{"-c", "1"}); f.session != "run" {
		t.Errorf("session without --session = %q, want %q", f.session, "run")
	}
}

// parseRunArgs reads run's arguments as runMain does, up to the command
// line: its flags, FILE or -m and the script's arguments, and the
// parameter flags; t fails on an error.
func parseRunArgs(t *testing.T, list []string) (runFlags, commandLine, []paramFlag) {
	t.Helper()
	var f runFlags
	fs, _ := newRunFlagSet(&f, io.Discard)
	args, mod, err := cutModule(fs, list)
	if err != nil {
		t.Fatal(err)
	}
	args, params, err := takeParamFlags(fs, args, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	cl, err := parseCommandLine(fs.Args(), len(f.code) > 0, mod)
	if err != nil {
		t.Fatal(err)
	}
	return f, cl, params
}
