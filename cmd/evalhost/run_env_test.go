package main

import (
	"maps"
	"strings"
	"testing"
)

func TestParseEnvFlags(t *testing.T) {
	here := map[string]string{"MY_VAR": "hi", "EMPTY": "", "A_TOKEN": "t"}
	getenv := func(name string) (string, bool) { v, ok := here[name]; return v, ok }
	cases := []struct {
		name    string
		list    []string
		want    map[string]string
		wantErr string
	}{
		{"none", nil, nil, ""},
		{"set", []string{"X=1"}, map[string]string{"X": "1"}, ""},
		{"a value with =", []string{"X=a=b"}, map[string]string{"X": "a=b"}, ""},
		{"set empty", []string{"X="}, map[string]string{"X": ""}, ""},
		{"passed on", []string{"MY_VAR"}, map[string]string{"MY_VAR": "hi"}, ""},
		{"passed on empty", []string{"EMPTY"}, map[string]string{"EMPTY": ""}, ""},
		{"a secret's name passes when asked for", []string{"A_TOKEN"}, map[string]string{"A_TOKEN": "t"}, ""},
		{"unset is left out", []string{"NOPE"}, map[string]string{}, ""},
		{"the last wins", []string{"X=1", "X=2"}, map[string]string{"X": "2"}, ""},
		{"no name", []string{"=1"}, nil, `--env "=1": want NAME=VALUE`},
		{"empty", []string{""}, nil, `--env "": want NAME=VALUE`},
		{"a space in the name", []string{"A B=1"}, nil, `--env "A B=1": "A B" is not an environment variable name: it holds a space`},
		{"a space in a name passed on", []string{"A B"}, nil, `--env "A B": "A B" is not an environment variable name: it holds a space`},
		{"a trailing tab", []string{"X\t=1"}, nil, `--env "X\t=1": "X\t" is not an environment variable name: it holds a tab`},
		{"a space in the value is the value's", []string{"X=a b"}, map[string]string{"X": "a b"}, ""},
		{"a dot and a dash pass", []string{"a.b-c=1"}, map[string]string{"a.b-c": "1"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseEnvFlags(c.list, getenv)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one with %q", err, c.wantErr)
				}
				return
			}
			if err != nil || !maps.Equal(got, c.want) {
				t.Fatalf("got %v, %v; want %v", got, err, c.want)
			}
		})
	}
}

// run passes its own PYTHONUNBUFFERED on to the script, as python3 reads
// it; --env's value stands, and an empty one is python3's unset.
func TestWithPythonUnbuffered(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		own  string // run's own; "-" for unset
		want string // the script's; "-" for absent
	}{
		{"passed on", nil, "1", "1"},
		{"unset", nil, "-", "-"},
		{"empty is unset", nil, "", "-"},
		{"--env's stands", map[string]string{"PYTHONUNBUFFERED": ""}, "1", ""},
		{"beside --env's others", map[string]string{"A": "b"}, "x", "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(name string) (string, bool) {
				if name != "PYTHONUNBUFFERED" || tc.own == "-" {
					return "", false
				}
				return tc.own, true
			}
			got, ok := withPythonUnbuffered(tc.env, getenv)["PYTHONUNBUFFERED"]
			if !ok {
				got = "-"
			}
			if got != tc.want {
				t.Errorf("PYTHONUNBUFFERED %q, want %q", got, tc.want)
			}
		})
	}
}
