package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// argvScript prints what a script sees of its command line, then parses it
// as a real script would; a [sh] cell prints its positional parameters.
const argvScript = `import sys, argparse
print("argv", sys.argv)
print("file", ascii(globals().get("__file__")))
print("path0", ascii(sys.path[0]))
p = argparse.ArgumentParser()
p.add_argument("n", nargs="?")
p.add_argument("--epochs", type=int, default=1)
print("args", vars(p.parse_known_args()[0]))
# %% [sh]
echo "sh $# $1"
`

// argvCell prints what a -c cell sees.
const argvCell = "import sys; print(sys.argv, globals().get('__file__'), ascii(sys.path[0]))"

// The command line a run's cells see, as python3's own would be, one-shot
// and under --session, through the runner and through a kernel gateway:
// run's flags end at FILE, whose arguments are all the script's.
func TestRunScriptArguments(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "s.py")
	if err := os.WriteFile(script, []byte(argvScript), 0o600); err != nil {
		t.Fatal(err)
	}
	writeSiblingScript(t, dir)
	// A name that is not UTF-8 (a file system that refuses one, as
	// macOS's does, skips its row).
	badName := os.WriteFile(filepath.Join(dir, "b\xff.py"), []byte(argvScript), 0o600)
	badDir := filepath.Join(dir, "c\xffd")
	badCwd := os.Mkdir(badDir, 0o700)
	const cwdCell = "import os, sys; print('cwd', repr(os.getcwd()), sys.argv[1:])"
	shownBadDir := strings.ReplaceAll(badDir, "\xff", "\\udcff")
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	h := newDaemonHome(t)
	rows := []struct {
		name    string
		args    []string
		stdin   string
		cwd     string // default dir; $PWD is set to it
		code    int
		want    []string
		notWant []string
		wantErr string
		skip    error
	}{
		{name: "FILE and its arguments", args: []string{"run", script, "7"},
			want: []string{"argv ['" + script + "', '7']", "file '" + script + "'", "path0 '" + real + "'", "'n': '7', 'epochs': 1", "sh 1 7"}},
		{name: "a relative FILE", args: []string{"run", "s.py", "7"},
			want: []string{"argv ['s.py', '7']", "file '" + script + "'"}},
		{name: "run's flags before FILE, the script's after", args: []string{"run", "--timeout", "9", script, "--epochs", "3", "x"},
			want: []string{"argv ['" + script + "', '--epochs', '3', 'x']", "'n': 'x', 'epochs': 3", "sh 3 --epochs"}},
		{name: "run's -c after FILE is the script's", args: []string{"run", script, "-c", "cfg.yaml"},
			want: []string{"argv ['" + script + "', '-c', 'cfg.yaml']", "sh 2 -c"}},
		{name: "run's --json after FILE is the script's", args: []string{"run", script, "--json"},
			want: []string{"argv ['" + script + "', '--json']"}, notWant: []string{`"type"`}},
		{name: "a parameter flag after FILE is the script's", args: []string{"run", script, "-p", "a", "1"},
			want: []string{"argv ['" + script + "', '-p', 'a', '1']", "sh 3 -p"}},
		{name: "-- after FILE is the script's, as python3's", args: []string{"run", script, "7", "--", "--epochs", "3"},
			want: []string{"argv ['" + script + "', '7', '--', '--epochs', '3']", "sh 4 7"}},
		{name: "FILE after --", args: []string{"run", "--", "s.py", "--epochs", "2"},
			want: []string{"argv ['s.py', '--epochs', '2']", "'epochs': 2"}},
		{name: "stdin", args: []string{"run", "-", "a b", "--json"}, stdin: argvScript,
			want: []string{"argv ['-', 'a b', '--json']", "file '<stdin>'", "path0 ''", "sh 2 a b"}},
		{name: "-c with arguments, as python3 -c", args: []string{"run", "-c", argvCell, "a", "--b"},
			want: []string{"['-c', 'a', '--b'] None ''"}},
		{name: "-c, then -- ending run's flags, passed on as python3 -c passes it", args: []string{"run", "-c", argvCell, "--", "q"},
			want: []string{"['-c', '--', 'q'] None ''"}},
		{name: "an unknown flag before FILE says where the script's go", args: []string{"run", "--epochs", "3", script}, code: 2,
			wantErr: "A script's own flags go after FILE"},
		{name: "a parameter flag after a -c cell without its value says where the cells' go", args: []string{"run", "-c", argvCell, "-y"}, code: 2,
			wantErr: "-y needs YAML\nFor the -c cells' sys.argv, put their arguments after --"},
		{name: "an argument that is not UTF-8, as os.fsdecode gives it", args: []string{"run", script, "\xff"},
			want: []string{"argv ['" + script + "', '\\udcff']", "sh 1 \xff\n"}},
		{name: "a FILE whose name is not UTF-8", args: []string{"run", "b\xff.py"}, skip: badName,
			want: []string{"argv ['b\\udcff.py']", "file '" + dir + "/b\\udcff.py'"}},
		{name: "a cwd whose name is not UTF-8", args: []string{"run", "-c", cwdCell, "\xfe"}, cwd: badDir, skip: badCwd,
			want: []string{"cwd '" + shownBadDir + "' ['\\udcfe']"}},
		{name: "a cwd whose name is not UTF-8, a shell cell", args: []string{"run", "--language", "sh", "-c", "pwd"}, cwd: badDir, skip: badCwd,
			want: []string{badDir + "\n"}},
		{name: "a cwd whose name is not UTF-8, under --session", args: []string{"run", "--session", "b", "-c", cwdCell, "\xfe"}, cwd: badDir, skip: badCwd,
			want: []string{"cwd '" + shownBadDir + "' ['\\udcfe']"}},
		{name: "a FILE whose name is not UTF-8, under --session", args: []string{"run", "--session", "b", "b\xff.py", "\xfe"}, skip: badName,
			want: []string{"argv ['b\\udcff.py', '\\udcfe']", "file '" + dir + "/b\\udcff.py'"}},
		{name: "a cwd through a link: __file__ is getcwd's, as python3's", args: []string{"run", "s.py"}, cwd: link,
			want: []string{"file '" + filepath.Join(real, "s.py") + "'"}},
		{name: "a script in another directory imports its sibling", args: []string{"run", "sub/m.py"},
			want: []string{"sibling imported"}},
		{name: "under --session, too", args: []string{"run", "--session", "a", "sub/m.py"},
			want: []string{"sibling imported"}},
		{name: "under --session", args: []string{"run", "--session", "a", script, "5"},
			want: []string{"argv ['" + script + "', '5']", "file '" + script + "'", "sh 1 5"}},
		{name: "a later run of the session has its own", args: []string{"run", "--session", "a", "-c", argvCell},
			want: []string{"['-c'] None ''"}},
	}
	for _, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			if tc.skip != nil {
				t.Skip(tc.skip)
			}
			cmd := h.cmd(tc.args...)
			cmd.Dir = dir
			if tc.cwd != "" {
				cmd.Dir = tc.cwd
			}
			cmd.Env = append(cmd.Env, "PWD="+cmd.Dir) // as a shell that cd'd there has it
			cmd.Stdin = strings.NewReader(tc.stdin)
			out, errOut, code := runCaptured(t, cmd, false)
			if code != tc.code || !strings.Contains(errOut, tc.wantErr) {
				t.Fatalf("exit %d, stderr %q; want exit %d, stderr with %q; stdout:\n%s", code, errOut, tc.code, tc.wantErr, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(out, w) {
					t.Errorf("stdout has %q:\n%s", w, out)
				}
			}
		})
	}
}

// writeSiblingScript writes dir/sub/m.py, which imports a module beside
// it, as python3 sub/m.py can: its directory is first on sys.path.
func writeSiblingScript(t *testing.T, dir string) {
	t.Helper()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, src := range map[string]string{"m.py": "import evh_sibling\nprint(evh_sibling.WORD)\n", "evh_sibling.py": "WORD = 'sibling imported'\n"} {
		if err := os.WriteFile(filepath.Join(sub, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// A kernel behind the gateway sees the same command line.
func TestRunScriptArgumentsGateway(t *testing.T) {
	testkit.NeedModuleIn(t, "python3", "kernel_gateway, ipykernel", "jupyter_kernel_gateway ipykernel")
	home, dir := t.TempDir(), t.TempDir()
	script := filepath.Join(dir, "s.py")
	if err := os.WriteFile(script, []byte(argvScript), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, error) {
		cmd := exec.Command(binary, args...)
		cmd.Env = append(os.Environ(), "EVALHOST_HOME="+home)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	writeSiblingScript(t, dir)
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run("gateway", "stop") })
	out, err := run("run", "--backend", "gateway", "s.py", "7", "\xff", "--epochs", "4")
	for _, w := range []string{"argv ['s.py', '7', '\\udcff', '--epochs', '4']", "file '" + script + "'", "path0 '" + real + "'", "'n': '7', 'epochs': 4", "sh 4 7"} {
		if err != nil || !strings.Contains(out, w) {
			t.Errorf("lacks %q (err %v):\n%s", w, err, out)
		}
	}
	if out, err := run("run", "--backend", "gateway", "-c", argvCell, "x"); err != nil || !strings.Contains(out, "['-c', 'x'] None ''") {
		t.Errorf("-c through the gateway (err %v):\n%s", err, out)
	}
	if out, err := run("run", "--backend", "gateway", "sub/m.py"); err != nil || !strings.Contains(out, "sibling imported") {
		t.Errorf("a script in another directory did not import its sibling (err %v):\n%s", err, out)
	}
	// The prelude's docstring is not the kernel's __doc__.
	if out, err := run("run", "--backend", "gateway", "-c", "print('doc', 'evalhost' in str(__doc__))"); err != nil || !strings.Contains(out, "doc False") {
		t.Errorf("the kernel's __doc__ is the prelude's (err %v):\n%s", err, out)
	}
	// A cwd whose name is not UTF-8 (a file system that refuses one skips it).
	if bad := filepath.Join(dir, "c\xffd"); os.Mkdir(bad, 0o700) == nil {
		want := "'" + strings.ReplaceAll(bad, "\xff", "\\udcff") + "'"
		if out, err := run("run", "--backend", "gateway", "--cwd", bad, "-c", "import os; print(repr(os.getcwd()))"); err != nil || !strings.Contains(out, want) {
			t.Errorf("a cwd that is not UTF-8: want %s (err %v):\n%s", want, err, out)
		}
	}
}

// A "--" reaches the cells as python3's command line passes it on: after
// -c CODE (python3's options end at -c, so ['-c', '--', 'x']), after -m
// MODULE and after FILE; before FILE it ends the options and is no one's.
// stdout, stderr and the exit code are python3's, byte for byte.
func TestRunDashDashAsPython(t *testing.T) {
	dir := t.TempDir()
	const show = "import sys; print(sys.argv[1:])\n"
	writeScript(t, dir, "argv_mod.py", show)
	script := writeScript(t, dir, "s.py", show)
	for _, tc := range []struct {
		name string
		run  []string // run's arguments, python3's too unless py is set
		py   []string
	}{
		{name: "-c CODE -- x", run: []string{"-c", show, "--", "x"}},
		{name: "-c CODE -- -- y", run: []string{"-c", show, "--", "--", "y"}},
		{name: "-c CODE -- alone", run: []string{"-c", show, "--"}},
		{name: "-c CODE x -- y", run: []string{"-c", show, "x", "--", "y"}},
		{name: "-c CODE -- --json, which is no flag of run's", run: []string{"-c", show, "--", "--json"}},
		{name: "run's flags after -c, then --", run: []string{"-c", show, "--timeout", "9", "--", "-x"}, py: []string{"-c", show, "--", "-x"}},
		{name: "-m MODULE -- x", run: []string{"-m", "argv_mod", "--", "x"}},
		{name: "FILE -- x", run: []string{script, "--", "x"}},
		{name: "-- FILE x", run: []string{"--", script, "x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			py := tc.py
			if py == nil {
				py = tc.run
			}
			cmd, pyCmd := command(t, append([]string{"run"}, tc.run...)...), pythonCmd(t, py...)
			cmd.Dir, pyCmd.Dir = dir, dir
			sameAsPythonCmd(t, cmd, pyCmd)
		})
	}
}
