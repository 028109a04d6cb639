package serve

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/evalhost/evalhost/sessions"
)

func TestParseEvalLanguageNames(t *testing.T) {
	tests := []struct{ name, want string }{
		{"py", sessions.LangPython}, {"python", sessions.LangPython}, {"Python3", sessions.LangPython}, {"ipython", sessions.LangPython},
		{"sh", sessions.LangShell}, {"bash", sessions.LangShell}, {"SHELL", sessions.LangShell},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := parseEval(gjson.Parse(`{"op":"eval","id":"r","cells":[{"language":"` + tt.name + `","code":"1"}]}`))
			if err != nil {
				t.Fatalf("parseEval: %v", err)
			}
			if got := req.Cells[0].Language; got != tt.want {
				t.Fatalf("language %q parsed as %q, want %q", tt.name, got, tt.want)
			}
		})
	}
}

func TestParseEval(t *testing.T) {
	tests := []struct {
		name, line, wantErr string
	}{
		{"minimal", `{"op":"eval","id":"r1","cells":[{"code":"1"}]}`, ""},
		{"full", `{"op":"eval","id":"r1","session":"s","cwd":"/tmp","mode":"per-call","env":{"A":"1"},"keepGoing":true,"ipython":false,"cells":[{"language":"sh","code":"ls","title":"t","reset":true,"timeout":2.5}]}`, ""},
		{"no id", `{"op":"eval","cells":[{"code":"1"}]}`, `missing "id"`},
		{"NUL in session", `{"op":"eval","id":"a","session":"a\u0000b","cells":[{"code":"1"}]}`, `"session" must not contain a NUL`},
		{"empty id", `{"op":"eval","id":"","cells":[{"code":"1"}]}`, `"id" must not be empty`},
		{"cells not array", `{"op":"eval","id":"r","cells":{}}`, `"cells" must be a non-empty array`},
		{"no cells", `{"op":"eval","id":"r","cells":[]}`, `"cells" must be a non-empty array`},
		{"cell not object", `{"op":"eval","id":"r","cells":["1"]}`, "cells[0] must be an object"},
		{"bad language", `{"op":"eval","id":"r","cells":[{"language":"js","code":"1"}]}`, `cells[0].language must be "py" (or python, python3, ipython) or "sh" (or bash, shell), in any case, not "js"`},
		{"language not string", `{"op":"eval","id":"r","cells":[{"language":1,"code":"1"}]}`, `cells[0].language must be`},
		{"code not string", `{"op":"eval","id":"r","cells":[{"code":1}]}`, "cells[0].code must be a string"},
		{"negative timeout", `{"op":"eval","id":"r","cells":[{"code":"1","timeout":-1}]}`, "cells[0].timeout must be a positive number"},
		{"env value not string", `{"op":"eval","id":"r","env":{"A":1},"cells":[{"code":"1"}]}`, `"env.A" must be a string`},
		{"keepGoing not bool", `{"op":"eval","id":"r","keepGoing":"yes","cells":[{"code":"1"}]}`, `"keepGoing" must be true or false`},
		{"session not string", `{"op":"eval","id":"r","session":7,"cells":[{"code":"1"}]}`, `"session" must be a string`},
		{"argv and file", `{"op":"eval","id":"r","argv":["a.py","x"],"file":"/w/a.py","cells":[{"code":"1"}]}`, ""},
		{"argv alone", `{"op":"eval","id":"r","argv":["-c"],"cells":[{"code":"1"}]}`, ""},
		{"argv not array", `{"op":"eval","id":"r","argv":"a.py x","cells":[{"code":"1"}]}`, `"argv" must be an array of strings`},
		{"argv of numbers", `{"op":"eval","id":"r","argv":["a.py",1],"cells":[{"code":"1"}]}`, `"argv" must be an array of strings`},
		{"argv empty", `{"op":"eval","id":"r","argv":[],"cells":[{"code":"1"}]}`, `"argv" must not be empty`},
		{"NUL in argv", `{"op":"eval","id":"r","argv":["a\u0000b"],"cells":[{"code":"1"}]}`, `"argv" must not contain a NUL`},
		{"file without argv", `{"op":"eval","id":"r","file":"/w/a.py","cells":[{"code":"1"}]}`, `"file" must be a non-empty path (no NUL), given with "argv"`},
		{"file empty", `{"op":"eval","id":"r","argv":["a.py"],"file":"","cells":[{"code":"1"}]}`, `"file" must be a non-empty path`},
		{"file not string", `{"op":"eval","id":"r","argv":["a.py"],"file":1,"cells":[{"code":"1"}]}`, `"file" must be a string`},
		{"a cell's file and line", `{"op":"eval","id":"r","cells":[{"code":"1","file":"/w/a.py","line":12}]}`, ""},
		{"a cell's file alone", `{"op":"eval","id":"r","cells":[{"code":"1","file":"a.py"}]}`, ""},
		{"a cell's line alone", `{"op":"eval","id":"r","cells":[{"code":"1","line":3}]}`, "cells[0].file must be a non-empty path"},
		{"a cell's file empty", `{"op":"eval","id":"r","cells":[{"code":"1","file":""}]}`, "cells[0].file must be a non-empty path"},
		{"a cell's file not a string", `{"op":"eval","id":"r","cells":[{"code":"1","file":7}]}`, "cells[0].file must be a non-empty path"},
		{"a cell's line 0", `{"op":"eval","id":"r","cells":[{"code":"1","file":"a.py","line":0}]}`, "cells[0].line must be a whole number from 1"},
		{"a cell's module without code", `{"op":"eval","id":"r","argv":["-m"],"cells":[{"module":"json.tool"}]}`, ""},
		{"a cell's module with code", `{"op":"eval","id":"r","cells":[{"code":"","module":"m"}]}`, ""},
		{"a cell's module and code", `{"op":"eval","id":"r","cells":[{"code":"print(1)","module":"m"}]}`, "cells[0] has code and a module"},
		{"a cell's module empty", `{"op":"eval","id":"r","cells":[{"module":""}]}`, "cells[0].module must be a module's name"},
		{"a cell's module not a string", `{"op":"eval","id":"r","cells":[{"code":"","module":1}]}`, "cells[0].module must be a module's name"},
		{"a shell cell's module", `{"op":"eval","id":"r","cells":[{"language":"sh","code":"","module":"m"}]}`, "cells[0].module must be a module's name"},
		{"neither code nor module", `{"op":"eval","id":"r","cells":[{"title":"x"}]}`, "cells[0].code must be a string"},
		{"a script cell", `{"op":"eval","id":"r","cells":[{"code":"1","script":true}]}`, ""},
		{"script not a bool", `{"op":"eval","id":"r","cells":[{"code":"1","script":"yes"}]}`, "cells[0].script must be true or false"},
		{"script null", `{"op":"eval","id":"r","cells":[{"code":"1","script":null}]}`, "cells[0].script must be true or false"},
		{"a cell's line fractional", `{"op":"eval","id":"r","cells":[{"code":"1","file":"a.py","line":2.5}]}`, "cells[0].line must be a whole number from 1"},
		{"a cell's line a string", `{"op":"eval","id":"r","cells":[{"code":"1","file":"a.py","line":"2"}]}`, "cells[0].line must be a whole number from 1"},
		{"enterCwd", `{"op":"eval","id":"r","enterCwd":true,"cells":[{"code":"1"}]}`, ""},
		{"enterCwd not a bool", `{"op":"eval","id":"r","enterCwd":1,"cells":[{"code":"1"}]}`, `"enterCwd" must be true or false`},
		{"environ", `{"op":"eval","id":"r","environ":["PATH=/a\udcff","E="],"cells":[{"code":"1"}]}`, ""},
		{"environ not an array", `{"op":"eval","id":"r","environ":{"PATH":"/a"},"cells":[{"code":"1"}]}`, `"environ" must be an array of "NAME=VALUE" strings`},
		{"environ without =", `{"op":"eval","id":"r","environ":["PATH"],"cells":[{"code":"1"}]}`, `"environ" must be an array`},
		{"environ without a name", `{"op":"eval","id":"r","environ":["=x"],"cells":[{"code":"1"}]}`, `"environ" must be an array`},
		{"environ with a NUL", `{"op":"eval","id":"r","environ":["A=\u0000"],"cells":[{"code":"1"}]}`, `"environ" must be an array`},
		{"environ not strings", `{"op":"eval","id":"r","environ":[1],"cells":[{"code":"1"}]}`, `"environ" must be an array`},
		{"terminal", `{"op":"eval","id":"r","terminal":{"stdout":true,"stderr":false,"env":{"COLUMNS":"80","NO_COLOR":null}},"cells":[{"code":"1"}]}`, ""},
		{"terminal not an object", `{"op":"eval","id":"r","terminal":true,"cells":[{"code":"1"}]}`, `"terminal" must be an object`},
		{"terminal.stdout not a bool", `{"op":"eval","id":"r","terminal":{"stdout":1},"cells":[{"code":"1"}]}`, `"terminal.stdout" must be true or false`},
		{"terminal.env not an object", `{"op":"eval","id":"r","terminal":{"env":["COLUMNS=80"]},"cells":[{"code":"1"}]}`, `"terminal" must be an object`},
		{"terminal.env value a number", `{"op":"eval","id":"r","terminal":{"env":{"COLUMNS":80}},"cells":[{"code":"1"}]}`, `"terminal.env.COLUMNS" must be a string or null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseEval(gjson.Parse(tt.line))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("parseEval: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.msg, tt.wantErr)):
				t.Fatalf("parseEval error = %v, want it to say %q", err, tt.wantErr)
			}
		})
	}
}

// An eval's terminal reaches its sessions.Request: the streams shown there
// as fds, its variables (null: unset).
func TestParseEvalTerminal(t *testing.T) {
	for _, tc := range []struct{ name, terminal, want string }{
		{"both", `{"stdout":true,"stderr":true,"env":{"COLUMNS":"80","NO_COLOR":null}}`, "[1 2] COLUMNS=80 NO_COLOR unset"},
		{"stderr alone", `{"stderr":true}`, "[2]"},
		{"neither", `{}`, "[]"},
		{"none", ``, "no terminal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := `{"op":"eval","id":"r","cells":[{"code":"1"}]}`
			if tc.terminal != "" {
				line = `{"op":"eval","id":"r","terminal":` + tc.terminal + `,"cells":[{"code":"1"}]}`
			}
			req, err := parseEval(gjson.Parse(line))
			if err != nil {
				t.Fatalf("parseEval: %v", err)
			}
			got := "no terminal"
			if tt := req.Terminal; tt != nil {
				got = fmt.Sprint(tt.Fds)
				for _, name := range []string{"COLUMNS", "NO_COLOR"} {
					if v, ok := tt.Env[name]; ok && v != nil {
						got += " " + name + "=" + *v
					} else if ok {
						got += " " + name + " unset"
					}
				}
			}
			if got != tc.want {
				t.Errorf("terminal %s, want %s", got, tc.want)
			}
		})
	}
}

// A cell's file and line reach its sessions.Cell, for the runner's request.
func TestParseEvalCellFile(t *testing.T) {
	req, err := parseEval(gjson.Parse(`{"op":"eval","id":"r","cells":[{"code":"1","file":"/w/a.py","line":12},{"code":"2"}]}`))
	if err != nil {
		t.Fatalf("parseEval: %v", err)
	}
	if c := req.Cells; c[0].File != "/w/a.py" || c[0].Line != 12 || c[1].File != "" || c[1].Line != 0 {
		t.Fatalf("cells %+v, want the first from /w/a.py line 12 and the second from no file", c)
	}
}

// Paths and arguments keep the bytes of names that are not UTF-8, written
// as os.fsdecode writes them (\udcff for 0xff); other text is JSON's.
func TestParseEvalPathBytes(t *testing.T) {
	req, err := parseEval(gjson.Parse(`{"op":"eval","id":"r","cwd":"/w/c\udcffd","argv":["b\udcfe.py","\udc80","\ud83d\udc80"],` +
		`"file":"/w/b\udcfe.py","cells":[{"code":"1","file":"/w/b\udcfe.py"},{"module":"m\udcff"},{"code":"'\udcff'"}]}`))
	if err != nil {
		t.Fatalf("parseEval: %v", err)
	}
	got := []string{req.Cwd, req.File, req.Cells[0].File, req.Cells[1].Module, req.Cells[2].Code}
	got = append(got, req.Argv...)
	want := []string{"/w/c\xffd", "/w/b\xfe.py", "/w/b\xfe.py", "m\xff", "'\uFFFD'", "b\xfe.py", "\x80", "\U0001F480"}
	// Environment variables too, as run --session sends its own and its
	// terminal's: the cells get the bytes a one-shot run's would.
	env, err := parseEval(gjson.Parse(`{"op":"eval","id":"r","env":{"A\udcff":"x\udcfey","B":"\ud83d\udc80"},` +
		`"terminal":{"env":{"TERM":"t\udcff","NO_COLOR":"\udc80"}},"cells":[{"code":"1"}]}`))
	if err != nil {
		t.Fatalf("parseEval: %v", err)
	}
	got = append(got, env.Env["A\xff"], env.Env["B"], *env.Terminal.Env["TERM"], *env.Terminal.Env["NO_COLOR"])
	want = append(want, "x\xfey", "\U0001F480", "t\xff", "\x80")
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("read %q, want %q (code is text, not a path: U+FFFD as JSON reads it)", got, want)
	}
}

// A NUL is refused in what is used, the decoded path: gjson's own reading
// takes the escape after a lone surrogate as its pair ("\udcff\u0000" reads
// as U+FFFD), so a check of that reading alone let the NUL through.
func TestParseEvalPathNUL(t *testing.T) {
	cases := []struct{ name, line, want string }{
		{"argv", `"argv":["a\udcff\u0000b"],"cells":[{"code":"1"}]`, `"argv" must not contain a NUL`},
		{"argv after a high surrogate", `"argv":["\ud800\u0000"],"cells":[{"code":"1"}]`, `"argv" must not contain a NUL`},
		{"file", `"argv":["a"],"file":"/w/a\udcff\u0000","cells":[{"code":"1"}]`, `"file" must be a non-empty path`},
		{"a cell's file", `"cells":[{"code":"1","file":"/w/a\udcff\u0000"}]`, "cells[0].file must be"},
		{"a cell's module", `"cells":[{"module":"m\udcff\u0000"}]`, "cells[0].module must be"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := parseEval(gjson.Parse(`{"op":"eval","id":"r",` + c.line + `}`))
			if err == nil || !strings.Contains(err.msg, c.want) {
				t.Fatalf("parseEval: %v, want %q; argv %q, file %q, cells %+v", err, c.want, req.Argv, req.File, req.Cells)
			}
		})
	}
}

func FuzzParseEval(f *testing.F) {
	f.Add(`{"op":"eval","id":"r1","cells":[{"code":"1"}]}`)
	f.Add(`{"op":"eval","id":"r1","env":{"A":"x"},"cells":[{"language":"sh","code":"ls","timeout":1e9}]}`)
	f.Add(`{"op":"eval","id":"r1","argv":["a.py","-x"],"file":"/a.py","cells":[{"code":"1"}]}`)
	f.Add(`{"op":"eval","id":"r1","cells":[{"code":"1","script":true},{"code":"2","script":false}]}`)
	f.Fuzz(func(t *testing.T, line string) {
		if !gjson.Valid(line) {
			return
		}
		req, err := parseEval(gjson.Parse(line))
		if err != nil {
			if err.msg == "" {
				t.Fatalf("an error without a message for %q", line)
			}
			return
		}
		if req.ID == "" || len(req.Cells) == 0 {
			t.Fatalf("accepted a request without id or cells: %q", line)
		}
		for _, c := range req.Cells {
			if c.Language != sessions.LangPython && c.Language != sessions.LangShell {
				t.Fatalf("accepted language %q from %q", c.Language, line)
			}
			if (req.Argv != nil && len(req.Argv) == 0) || (req.File != "" && req.Argv == nil) {
				t.Fatalf("accepted argv %q with file %q from %q", req.Argv, req.File, line)
			}
			if c.Timeout < 0 || c.Timeout > sessions.MaxTimeout {
				t.Fatalf("accepted timeout %v from %q", c.Timeout, line)
			}
		}
		for i, c := range req.Cells {
			// A script cell only when its line said "script":true.
			if want := gjson.Get(line, "cells."+strconv.Itoa(i)+".script").Type == gjson.True; c.Script != want {
				t.Fatalf("cells[%d].Script %v from %q", i, c.Script, line)
			}
		}
	})
}

func TestFieldOfPrefix(t *testing.T) {
	tests := []struct{ name, prefix, want string }{
		{"id before the long field", `{"op":"eval","id":"r7","cells":[{"code":"xxxxxxxx`, "r7"},
		{"id after the cut", `{"op":"eval","cells":[{"code":"xxxxxxxx`, ""},
		{"id cut in the middle", `{"op":"eval","id":"r7abc`, ""},
		{"id ends the prefix", `{"op":"eval","id":"r7"`, ""},
		{"nested id only", `{"op":"eval","cells":[{"id":"inner","code":"xxx`, ""},
		{"id not a string", `{"op":"eval","id":7,"cells":[{"code":"xxx`, ""},
		{"escaped id", `{"op":"eval","id":"a\"b","cells":[{"code":"xxx`, `a"b`},
		{"id after op", `{"id":"r8","op":"eval","cells":[{"code":"xxx`, "r8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fieldOfPrefix(tt.prefix, "id"); got != tt.want {
				t.Fatalf("fieldOfPrefix(%s, id) = %q, want %q", tt.prefix, got, tt.want)
			}
		})
	}
}

func FuzzParseRequest(f *testing.F) {
	f.Add([]byte(`{"op":"cancel","id":"r1"}`))
	f.Add([]byte(`{"op":7}`))
	f.Add([]byte(`[1]`))
	f.Add([]byte("\xff"))
	f.Fuzz(func(t *testing.T, line []byte) {
		req, err := parseRequest(line)
		if err != nil {
			if err.msg == "" || len(err.line) > 200 {
				t.Fatalf("refusal %+v of %q", err, line)
			}
			if r := err.reply(); r.Type != TypeRequestError {
				t.Fatalf("reply %+v", r)
			}
			return
		}
		if !gjson.ValidBytes(line) || !req.root.IsObject() || req.root.Get("op").Str != req.op {
			t.Fatalf("accepted %q as op %q", line, req.op)
		}
	})
}

// An op that is there but not a string is named as such: it was "missing".
func TestParseRequestOp(t *testing.T) {
	for line, want := range map[string]string{
		`{"id":"a"}`:          `missing "op"`,
		`{"op":5,"id":"a"}`:   `"op" must be a string, not 5`,
		`{"op":null}`:         `"op" must be a string, not null`,
		`{"op":["eval"]}`:     `"op" must be a string, not ["eval"]`,
		`{"op":"ping"}`:       "",
		`{"op":"x","id":"b"}`: "",
	} {
		_, e := parseRequest([]byte(line))
		switch {
		case e == nil && want != "":
			t.Errorf("%s: accepted; want %q", line, want)
		case e != nil && (want == "" || !strings.Contains(e.msg, want)):
			t.Errorf("%s: %q; want %q", line, e.msg, want)
		}
	}
}
