package main

import (
	"path/filepath"
	"reflect"
	"testing"
)

func TestParseCommandLine(t *testing.T) {
	abs, err := filepath.Abs("s.py")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		pos      []string
		dash     int
		haveCode bool
		want     commandLine
	}{
		{"-c alone", nil, -1, true, commandLine{argv: []string{"-c"}}},
		{"-c with arguments after --", []string{"a", "-b"}, 0, true, commandLine{argv: []string{"-c", "a", "-b"}}},
		{"FILE", []string{"s.py"}, -1, false, commandLine{"s.py", []string{"s.py"}, abs}},
		{"FILE and arguments", []string{"s.py", "1", "2"}, -1, false, commandLine{"s.py", []string{"s.py", "1", "2"}, abs}},
		{"FILE, then -- and flags", []string{"s.py", "1", "--n", "-"}, 2, false, commandLine{"s.py", []string{"s.py", "1", "--n", "-"}, abs}},
		{"FILE after -- without -c", []string{"s.py", "--n"}, 0, false, commandLine{"s.py", []string{"s.py", "--n"}, abs}},
		{"-c cells and a FILE", []string{"s.py", "x"}, -1, true, commandLine{"s.py", []string{"s.py", "x"}, abs}},
		{"stdin", []string{"-", "x"}, -1, false, commandLine{"-", []string{"-", "x"}, "<stdin>"}},
		// Cleaned, link/../s.py would name ./s.py, not the file beside
		// the link's target that is read.
		{"a FILE through a link's ..", []string{"link/../s.py"}, -1, false, commandLine{"link/../s.py", []string{"link/../s.py"}, filepath.Dir(abs) + "/link/../s.py"}},
		{"an absolute FILE as given", []string{"/w/./s.py"}, -1, false, commandLine{"/w/./s.py", []string{"/w/./s.py"}, "/w/./s.py"}},
		{"nothing", nil, -1, false, commandLine{argv: []string{"-c"}}},
		{"a lone --", nil, 0, false, commandLine{argv: []string{"-c"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseCommandLine(tt.pos, tt.dash, tt.haveCode)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parseCommandLine(%q, %d, %v) = %+v, want %+v", tt.pos, tt.dash, tt.haveCode, got, tt.want)
			}
		})
	}
}
