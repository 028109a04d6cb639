package main

import (
	"reflect"
	"testing"

	"github.com/evalhost/evalhost/sessions"
)

// python3's options are read as python3 reads them, combined (-uB, -OO)
// and with -W/-X values attached or not, up to FILE or -m, which a
// combined form may end (-um); a parameter flag after them (-uP) is still
// a parameter. What they give the interpreter is what the library takes.
func TestRunPythonOptionFlags(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		want   []string // interpreter options
		argv   []string // the cells' sys.argv
		module string
		params int
	}{
		{"none", []string{"s.py"}, nil, []string{"s.py"}, "", 0},
		{"each alone", []string{"-u", "-B", "-E", "-s", "-S", "-I", "-q", "-O", "-b", "s.py"},
			[]string{"-u", "-B", "-E", "-s", "-S", "-I", "-q", "-O", "-b"}, []string{"s.py"}, "", 0},
		{"combined", []string{"-uB", "s.py"}, []string{"-u", "-B"}, []string{"s.py"}, "", 0},
		{"counted", []string{"-OO", "-bb", "-O", "s.py"}, []string{"-OOO", "-bb"}, []string{"s.py"}, "", 0},
		{"-W and -X, attached or not, in order", []string{"-W", "error", "-Wignore::UserWarning", "-Xdev", "-X", "utf8", "s.py"},
			[]string{"-W", "error", "-W", "ignore::UserWarning", "-X", "dev", "-X", "utf8"}, []string{"s.py"}, "", 0},
		{"-W after flags, attached", []string{"-uWerror", "s.py"}, []string{"-u", "-W", "error"}, []string{"s.py"}, "", 0},
		{"-W after flags, its value next", []string{"-BW", "error", "-m", "m"}, []string{"-B", "-W", "error"}, []string{"-m"}, "m", 0},
		{"-m after flags", []string{"-um", "json.tool", "-u"}, []string{"-u"}, []string{"-m", "-u"}, "json.tool", 0},
		{"-mMODULE after flags", []string{"-OOmjson.tool"}, []string{"-OO"}, []string{"-m"}, "json.tool", 0},
		{"a parameter after flags", []string{"-uP", "a:1", "s.py"}, []string{"-u"}, []string{"s.py"}, "", 1},
		{"a parameter's value after flags", []string{"-Bpa", "1", "s.py"}, []string{"-B"}, []string{"s.py"}, "", 1},
		{"after -c's cell", []string{"-c", "x", "-u"}, []string{"-u"}, []string{"-c"}, "", 0},
		{"after FILE, the script's", []string{"s.py", "-u", "-W", "error"}, nil, []string{"s.py", "-u", "-W", "error"}, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, cl, params := parseRunArgs(t, tt.args)
			got := f.py.args()
			if !reflect.DeepEqual(got, tt.want) || !reflect.DeepEqual(cl.argv, tt.argv) || cl.module != tt.module || len(params) != tt.params {
				t.Errorf("run %q: options %q, argv %q, module %q, %d parameters; want %q, %q, %q, %d",
					tt.args, got, cl.argv, cl.module, len(params), tt.want, tt.argv, tt.module, tt.params)
			}
			if err := sessions.CheckPythonArgs(got); err != nil {
				t.Errorf("the library refuses them: %v", err)
			}
		})
	}
}
