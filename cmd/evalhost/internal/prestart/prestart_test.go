package prestart

import "testing"

func TestWanted(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want bool
	}{
		{"run", []string{"run", "-c", "pass"}, true},
		{"run a file", []string{"run", "x.py", "--json"}, true},
		{"attached run", []string{"run", "--session", "s", "-c", "1"}, false},
		{"attached run, = form", []string{"run", "-c", "1", "--session=s"}, false},
		{"--session after --", []string{"run", "-", "--", "--session"}, true},
		{"another flag like it", []string{"run", "--sessions", "-c", "1"}, true},
		{"attached run after a flag's value", []string{"run", "--timeout", "5", "--session", "s", "x.py"}, false},
		{"attached run after python3's options", []string{"run", "-uWerror", "-X", "dev", "--session", "s", "x.py"}, false},
		{"attached run after parameters", []string{"run", "-p", "a", "1", "--session", "s", "x.py"}, false},
		{"the script's --session", []string{"run", "x.py", "--session", "s"}, true},
		{"the script's --session after run's flags", []string{"run", "--timeout", "0", "x.py", "--session=s"}, true},
		{"the module's --session", []string{"run", "-m", "mod", "--session", "s"}, true},
		{"the module's --session, -m in a cluster", []string{"run", "-um", "mod", "--session", "s"}, true},
		{"the cells' --session after --", []string{"run", "-c", "1", "--", "--session", "s"}, true},
		{"stdin's --session", []string{"run", "-", "--session", "s"}, true},
		{"a cell that says --session", []string{"run", "-c", "--session", "x.py"}, true},
		{"a parameter's value --session", []string{"run", "-p", "n", "--session", "x.py"}, true},
		{"-W's value --session", []string{"run", "-uW", "--session", "x.py"}, true},
		{"other command", []string{"serve"}, false},
		{"version", []string{"version"}, false},
		{"nothing", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Wanted(tc.args); got != tc.want {
				t.Errorf("Wanted(%q) = %v, want %v", tc.args, got, tc.want)
			}
		})
	}
}
