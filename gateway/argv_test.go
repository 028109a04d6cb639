package gateway

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// The kernel's argv snippet is the runner's rule (runner.ArgvSource), run
// here in a plain python3 as the kernel would run it, request after
// request, with its state kept where the start snippet keeps the kernel's.
func TestArgvCodeInPython(t *testing.T) {
	py := testkit.Python(t)
	steps := []struct {
		name       string
		argv       []string
		file, want string
	}{
		{"a script, bytes as os.fsdecode gives them", []string{"s\xff.py", "\xfe", "--"}, "/w/s\xff.py",
			`['s\udcff.py', '\udcfe', '--'] '/w/s\udcff.py' '/w'`},
		{"-c: no __file__, '' first", []string{"-c", "x"}, "", `['-c', 'x'] None '' /w gone`},
		{"stdin", []string{"-", "y"}, "<stdin>", `['-', 'y'] '<stdin>' '' /w gone`},
	}
	var code strings.Builder
	code.WriteString("import sys, types\nsys.modules['_evalhost_io'] = types.ModuleType('_evalhost_io')\nsys.path.insert(0, '/elsewhere')\n")
	var want []string
	for _, s := range steps {
		code.WriteString(argvCode(s.argv, s.file))
		code.WriteString("print(ascii(sys.argv), ascii(globals().get('__file__')), ascii(sys.path[0]), *['/w gone'] * ('/w' not in sys.path))\n")
		want = append(want, s.want)
	}
	out, err := exec.Command(py, "-I", "-c", code.String()).CombinedOutput()
	got := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if err != nil || len(got) != len(steps) {
		t.Fatalf("python: %v\n%s", err, out)
	}
	for i, s := range steps {
		if got[i] != want[i] {
			t.Errorf("%s: %s, want %s", s.name, got[i], want[i])
		}
	}
	if argvCode(nil, "") != "" {
		t.Error("argvCode without argv is not empty")
	}
}
