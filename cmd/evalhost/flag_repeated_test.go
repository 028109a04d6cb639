package main

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestRepeatedFlag(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    []string
		str     string
		changed bool
	}{
		{"unused", nil, nil, "", false},
		{"in order", []string{"-c", "a", "--code", "b", "--code="}, []string{"a", "b", ""}, `["a","b",""]`, true},
		{"commas stay in a value", []string{"-c", "x, y"}, []string{"x, y"}, `["x, y"]`, true},
		{"quotes are quoted", []string{"-c", `print("hi")`}, []string{`print("hi")`}, `["print(\"hi\")"]`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			fs.SetOutput(io.Discard)
			repeatedVarP(fs, &got, "code", "c", "a cell")
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) || fs.Lookup("code").Value.String() != tc.str || fs.Changed("code") != tc.changed {
				t.Errorf("values %q, String %q, changed %v; want %q, %q, %v", got, fs.Lookup("code").Value.String(), fs.Changed("code"), tc.want, tc.str, tc.changed)
			}
			// Help shows the type and no default, as for pflag's StringArray.
			if u := fs.FlagUsages(); !strings.Contains(u, "--code stringArray") || strings.Contains(u, "default") {
				t.Errorf("help: %q", u)
			}
		})
	}
}
