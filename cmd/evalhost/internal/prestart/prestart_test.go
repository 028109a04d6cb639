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
