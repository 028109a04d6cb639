package gateway

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// The kernel's argv snippet is the runner's rule (runner.ArgvSource), run
// here in a plain python3 as the kernel would run it, request after
// request, with its state kept where the start snippet keeps the kernel's:
// the notebook's entries, setupCode's cwd and the "" python3 -c put first
// (IPython's, before site-packages, in a kernel), go for a script and
// come back for the next; another entry (a cell's, PYTHONPATH's) stays.
func TestArgvCodeInPython(t *testing.T) {
	py := testkit.Python(t)
	w, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name       string
		argv       []string
		file, want string
	}{
		{"a script, bytes as os.fsdecode gives them", []string{"s\xff.py", "\xfe", "--"}, "/s/s\xff.py",
			`['s\udcff.py', '\udcfe', '--'] '/s/s\udcff.py' ['s', 'else']`},
		{"-c: no __file__, '' first", []string{"-c", "x"}, "", `['-c', 'x'] None ["''", 'else']`},
		{"stdin", []string{"-", "y"}, "<stdin>", `['-', 'y'] '<stdin>' ["''", 'else']`},
		{"-m: the cwd's full path", []string{"-m"}, "", `['-m'] None ['w', 'else']`},
	}
	var code strings.Builder
	code.WriteString("import sys\nsys.path.insert(1, '/elsewhere')\n")
	code.WriteString(setupCode(w, nil))
	look := "print(ascii(sys.argv), ascii(globals().get('__file__')), [(\"''\" if p == '' else {" + strconv.Quote(w) +
		": 'w', '/s': 's', '/elsewhere': 'else'}.get(p)) for p in sys.path if p in ('', '/s', '/elsewhere', " + strconv.Quote(w) + ")])\n"
	code.WriteString(look)
	want := []string{`['-c'] None ['w', "''", 'else']`}
	for _, s := range steps {
		code.WriteString(argvCode(s.argv, s.file))
		code.WriteString(look)
		want = append(want, s.want)
	}
	cmd := exec.Command(py, "-E", "-s", "-c", code.String())
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	got := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if err != nil || len(got) != len(want) {
		t.Fatalf("python: %v\n%s", err, out)
	}
	for i, g := range got {
		if name := "setupCode's cwd"; g != want[i] {
			if i > 0 {
				name = steps[i-1].name
			}
			t.Errorf("%s: %s, want %s", name, g, want[i])
		}
	}
	if argvCode(nil, "") != "" {
		t.Error("argvCode without argv is not empty")
	}
}
