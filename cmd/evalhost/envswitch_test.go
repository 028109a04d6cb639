package main

import (
	"strings"
	"testing"
)

// Every on/off variable reads the same words, in any case, and refuses
// the rest naming the variable and its value.
func TestParseSwitch(t *testing.T) {
	for _, tc := range []struct {
		value   string
		on, bad bool
	}{
		{"", false, false}, {"0", false, false}, {"false", false, false}, {"FALSE", false, false},
		{"no", false, false}, {"Off", false, false},
		{"1", true, false}, {"true", true, false}, {"True", true, false}, {"yes", true, false}, {"ON", true, false},
		{"2", false, true}, {"maybe", false, true}, {" 1", false, true}, {"y", false, true}, {"enabled", false, true},
	} {
		t.Run(tc.value, func(t *testing.T) {
			on, err := parseSwitch("EVALHOST_X", "x", tc.value)
			switch {
			case tc.bad && (err == nil || !strings.HasPrefix(err.Error(), `EVALHOST_X="`+tc.value+`": want `)):
				t.Errorf("refusal %v", err)
			case !tc.bad && (err != nil || on != tc.on):
				t.Errorf("got %v, %v; want %v", on, err, tc.on)
			}
		})
	}
}

func TestCommandName(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "evalhost"},
		{[]string{"--help"}, "evalhost"},
		{[]string{"run", "script.py"}, "evalhost run"},
		{[]string{"run", "-c", "1"}, "evalhost run"},
		{[]string{"nb", "run", "n.ipynb"}, "evalhost nb run"},
		{[]string{"nb", "--help"}, "evalhost nb"},
		{[]string{"daemon", "serve"}, "evalhost daemon serve"},
		{[]string{"gateway", "status"}, "evalhost gateway status"},
		{[]string{"serve", "--progress", "0"}, "evalhost serve"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			if got := commandName(tc.args); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
