package tests

import "testing"

// A script's __doc__ is its own docstring, or None, as python3's: not the
// prelude's, which argparse's description=__doc__ would show in --help.
func TestRunDocIsTheScripts(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string { return writeScript(t, dir, name, src) }
	bare := write("bare.py", "import argparse\nargparse.ArgumentParser(prog='p', description=__doc__).parse_args()\nprint(repr(__doc__))\n")
	documented := write("doc.py", "\"\"\"Does a thing.\"\"\"\nimport argparse\nargparse.ArgumentParser(prog='p', description=__doc__).parse_args()\nprint(repr(__doc__))\n")
	for _, c := range []struct {
		name string
		args []string
	}{
		{"no docstring", []string{bare}},
		{"no docstring, --help", []string{bare, "--help"}},
		{"a docstring", []string{documented}},
		{"a docstring, --help", []string{documented, "--help"}},
		{"-c", []string{"-c", "print(repr(__doc__))"}},
	} {
		t.Run(c.name, func(t *testing.T) { sameAsPython(t, c.args, c.args) })
	}
}
