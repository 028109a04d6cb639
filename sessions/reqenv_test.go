package sessions

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// A request's Env is set once, as its command starts (env X=1 cmd): a cell
// of the request that changes the variable is seen by the later cells, a
// later request without Env keeps what the session has, and one with Env
// sets it again. An interpreter that replaced one (here after a death
// under keepGoing) is given it again, as argv.
func TestRequestEnvSetOnce(t *testing.T) {
	type step struct {
		env   map[string]string
		keep  bool
		cells []Cell
		want  string
	}
	x1 := map[string]string{"REQENV_X": "1"}
	const show = "import os; print(os.environ.get('REQENV_X'))"
	const change = "import os; os.environ['REQENV_X'] = 'changed'"
	rows := []struct {
		name  string
		steps []step
	}{
		{"a later cell sees an earlier cell's change", []step{
			{env: x1, cells: []Cell{py(show), py(change), py(show)}, want: "1\nchanged\n"},
		}},
		{"a later request without env keeps the session's", []step{
			{env: x1, cells: []Cell{py(change)}},
			{cells: []Cell{py(show)}, want: "changed\n"},
		}},
		{"a later request with env sets it again", []step{
			{env: x1, cells: []Cell{py(change)}},
			{env: map[string]string{"REQENV_X": "3"}, cells: []Cell{py(show), py(change), py(show)}, want: "3\nchanged\n"},
		}},
		{"an interpreter that replaced one gets it again", []step{
			{env: x1, keep: true, cells: []Cell{py(change), py("import os; os._exit(3)"), py(show)}, want: "1\n"},
		}},
		{"shell cells", []step{
			{env: x1, cells: []Cell{sh("echo $REQENV_X"), sh("export REQENV_X=changed"), sh("echo $REQENV_X")}, want: "1\nchanged\n"},
			{cells: []Cell{sh("echo $REQENV_X")}, want: "changed\n"},
		}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			if strings.HasPrefix(row.name, "shell") {
				if _, err := exec.LookPath("bash"); err != nil {
					t.Skip("bash not on PATH")
				}
			}
			r := newTestRegistry(t, Config{})
			for i, s := range row.steps {
				_, c := eval(t, r, Request{Session: "reqenv", Env: s.env, KeepGoing: s.keep, Cells: s.cells})
				if got := c.Text(frames.TypeStdout); got != s.want {
					t.Fatalf("request %d printed %q, want %q (all output %q)", i, got, s.want, c.Output())
				}
			}
		})
	}
}
