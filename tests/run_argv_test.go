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
print("file", globals().get("__file__"))
p = argparse.ArgumentParser()
p.add_argument("n", nargs="?")
p.add_argument("--epochs", type=int, default=1)
print("args", vars(p.parse_known_args()[0]))
# %% [sh]
echo "sh $# $1"
`

// The command line a run's cells see, as python3's own would be, one-shot
// and under --session, through the runner and through a kernel gateway.
func TestRunScriptArguments(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "s.py")
	if err := os.WriteFile(script, []byte(argvScript), 0o600); err != nil {
		t.Fatal(err)
	}
	writeSiblingScript(t, dir)
	h := newDaemonHome(t)
	rows := []struct {
		name    string
		args    []string
		stdin   string
		code    int
		want    []string
		wantErr string
	}{
		{name: "FILE and its arguments", args: []string{"run", script, "7"},
			want: []string{"argv ['" + script + "', '7']", "file " + script, "'n': '7', 'epochs': 1", "sh 1 7"}},
		{name: "a relative FILE", args: []string{"run", "s.py", "7"},
			want: []string{"argv ['s.py', '7']", "file " + script}},
		{name: "flags after -- are the script's", args: []string{"run", script, "--timeout", "9", "--", "--epochs", "3", "x"},
			want: []string{"argv ['" + script + "', '--epochs', '3', 'x']", "'n': 'x', 'epochs': 3", "sh 3 --epochs"}},
		{name: "FILE after --", args: []string{"run", "--", "s.py", "--epochs", "2"},
			want: []string{"argv ['s.py', '--epochs', '2']", "'epochs': 2"}},
		{name: "stdin", args: []string{"run", "-", "a b"}, stdin: argvScript,
			want: []string{"argv ['-', 'a b']", "file <stdin>", "sh 1 a b"}},
		{name: "-c alone", args: []string{"run", "-c", "import sys; print(sys.argv, globals().get('__file__'))", "--", "q"},
			want: []string{"['-c', 'q'] None"}},
		{name: "an unknown flag says where the script's go", args: []string{"run", script, "--epochs", "3"}, code: 2,
			wantErr: "A script's own flags go after --"},
		{name: "a script in another directory imports its sibling", args: []string{"run", "sub/m.py"},
			want: []string{"sibling imported"}},
		{name: "under --session, too", args: []string{"run", "--session", "a", "sub/m.py"},
			want: []string{"sibling imported"}},
		{name: "a script's -y taken for a parameter flag says where it goes", args: []string{"run", script, "-y"}, code: 2,
			wantErr: "A script's own flags go after --"},
		{name: "a script's -p PORT taken for a parameter flag says so too", args: []string{"run", script, "-p", "8080"}, code: 2,
			wantErr: "A script's own flags go after --"},
		{name: "a script's -f FILE read as parameters says so too", args: []string{"run", script, "-f", "nothere.toml"}, code: 2,
			wantErr: "A script's own flags go after --"},
		{name: "under --session", args: []string{"run", "--session", "a", script, "5"},
			want: []string{"argv ['" + script + "', '5']", "file " + script, "sh 1 5"}},
		{name: "a later run of the session has its own", args: []string{"run", "--session", "a", "-c", "import sys; print(sys.argv, globals().get('__file__'))"},
			want: []string{"['-c'] None"}},
	}
	for _, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			cmd := h.cmd(tc.args...)
			cmd.Dir = dir
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
	t.Cleanup(func() { run("gateway", "stop") })
	out, err := run("run", "--backend", "gateway", "s.py", "7", "--", "--epochs", "4")
	for _, w := range []string{"argv ['s.py', '7', '--epochs', '4']", "file " + script, "'n': '7', 'epochs': 4", "sh 3 7"} {
		if err != nil || !strings.Contains(out, w) {
			t.Errorf("lacks %q (err %v):\n%s", w, err, out)
		}
	}
	if out, err := run("run", "--backend", "gateway", "sub/m.py"); err != nil || !strings.Contains(out, "sibling imported") {
		t.Errorf("a script in another directory did not import its sibling (err %v):\n%s", err, out)
	}
}
