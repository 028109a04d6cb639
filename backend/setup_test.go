package backend

import (
	"testing"

	"github.com/evalhost/evalhost/frames"
)

func TestIsSetupError(t *testing.T) {
	cases := []struct {
		name string
		f    frames.Frame
		want bool
	}{
		{"the runner's RequestError", frames.Frame{Type: frames.TypeError, Ename: "RequestError", Evalue: "cannot use cwd '/x': No such file",
			Traceback: []string{"RequestError: cannot use cwd '/x': No such file"}}, true},
		{"a kernel's setup error", frames.Frame{Type: frames.TypeError, Ename: "FileNotFoundError", Evalue: SetupErrorPrefix + "no /x",
			Traceback: []string{"Traceback (most recent call last):", "FileNotFoundError: no /x"}}, true},
		// httpx.RequestError, or a script's own: the cell ran, and its
		// changes to cwd and sys.argv stand.
		{"a cell's exception named RequestError", frames.Frame{Type: frames.TypeError, Ename: "RequestError", Evalue: "user",
			Traceback: []string{"Traceback (most recent call last):", `  File "<cell 1>", line 3, in <module>`, "RequestError: user"}}, false},
		{"another error", frames.Frame{Type: frames.TypeError, Ename: "ValueError", Evalue: "x"}, false},
		{"not an error", frames.Frame{Type: frames.TypeStdout, Data: "RequestError: x"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := IsSetupError(c.f); got != c.want {
				t.Errorf("IsSetupError = %v, want %v", got, c.want)
			}
		})
	}
}
