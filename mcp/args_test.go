package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestCheckValue(t *testing.T) {
	for _, tc := range []struct {
		name, args, want string // want "" means valid
	}{
		{"minimal", `{"cells":[{"code":"1"}]}`, ""},
		{"everything", `{"cells":[{"code":"1","language":"sh","title":"t","reset":true,"timeout":2.5}],"session":"s","cwd":"/","mode":"per-call"}`, ""},
		{"not an object", `[1]`, "arguments must be an object, not an array"},
		{"missing cells", `{}`, "cells is required"},
		{"cells a string", `{"cells":"x"}`, `cells must be an array, not the string "x"`},
		{"empty cells", `{"cells":[]}`, "cells must hold at least 1 item(s)"},
		{"cell not an object", `{"cells":[1]}`, "cells[0] must be an object, not the number 1"},
		{"code missing", `{"cells":[{"code":"1"},{"language":"py"}]}`, "cells[1].code is required"},
		{"code a number", `{"cells":[{"code":7}]}`, "cells[0].code must be a string, not the number 7"},
		{"reset a string", `{"cells":[{"code":"1","reset":"yes"}]}`, "cells[0].reset must be true or false"},
		{"zero timeout", `{"cells":[{"code":"1","timeout":0}]}`, "cells[0].timeout is 0; it must be more than 0"},
		{"huge timeout", `{"cells":[{"code":"1","timeout":601}]}`, "cells[0].timeout is 601; it must be at most 600"},
		{"unknown field", `{"cells":[{"code":"1"}],"sesion":"s"}`, `arguments has no field "sesion"; its fields are cells, cwd, mode, session`},
		{"unknown cell field", `{"cells":[{"code":"1","lang":"py"}]}`, `cells[0] has no field "lang"`},
		{"null session", `{"cells":[{"code":"1"}],"session":null}`, "session must be a string, not null"},
		// One result message for 300,000 cells was 70 MB, past what clients read.
		{"most cells", `{"cells":[` + strings.Repeat(`{"code":""},`, MaxEvalCells-1) + `{"code":""}]}`, ""},
		{"too many cells", `{"cells":[` + strings.Repeat(`{"code":""},`, MaxEvalCells) + `{"code":""}]}`,
			"cells holds 101 items, more than the 100 it may; split them across several calls"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v any
			if err := json.Unmarshal([]byte(tc.args), &v); err != nil {
				t.Fatal(err)
			}
			err := checkValue(evalSchema(), v, "")
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("valid arguments refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestCheckInteger(t *testing.T) {
	s := nbCellSchema([]string{"path", "cell"}, nil)
	for args, want := range map[string]string{
		`{"path":"a","cell":1.5}`: "cell must be a whole number",
		`{"path":"a","cell":-1}`:  "cell is -1; it must be at least 0",
		`{"path":"a","cell":3}`:   "",
	} {
		var v any
		json.Unmarshal([]byte(args), &v)
		err := checkValue(s, v, "")
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
	}
}

func FuzzCheckValue(f *testing.F) {
	f.Add(`{"cells":[{"code":"1","timeout":3}]}`)
	f.Add(`{"cells":[{"code":"1","language":null}],"x":[]}`)
	f.Fuzz(func(t *testing.T, args string) {
		var v any
		if json.Unmarshal([]byte(args), &v) != nil {
			return
		}
		if err := checkValue(evalSchema(), v, ""); err == nil {
			// What the check accepts must decode and build a request.
			var in EvalInput
			if err := json.Unmarshal([]byte(args), &in); err != nil {
				t.Fatalf("checked arguments do not decode: %v", err)
			}
			if _, err := buildRequest(in); err != nil {
				t.Fatalf("checked arguments refused by buildRequest: %v", err)
			}
		}
	})
}

// A positive timeout or maxRuntime too small to count as a Duration is
// the shortest, not "not given": maxRuntime 1e-12 with detach read as the
// default hour, and timeout 1e-12 as the default 30 s.
func TestBuildRequestTinySeconds(t *testing.T) {
	r, err := buildRequest(EvalInput{Cells: []EvalCell{{Code: "1", Timeout: 1e-12, OnTimeout: "detach", MaxRuntime: 1e-12}}})
	if err != nil {
		t.Fatal(err)
	}
	if c := r.Cells[0]; c.Timeout <= 0 || c.MaxRuntime <= 0 {
		t.Fatalf("timeout %v, maxRuntime %v; want both the shortest there is, not the defaults", c.Timeout, c.MaxRuntime)
	}
}

// A session id goes into the interpreter's environment: one with a NUL
// failed the cell as "environment variable contains NUL".
func TestBuildRequestSessionNUL(t *testing.T) {
	_, err := buildRequest(EvalInput{Session: "a\x00b", Cells: []EvalCell{{Code: "1"}}})
	if err == nil || !strings.Contains(err.Error(), `"session" must not contain a NUL`) {
		t.Fatalf("buildRequest = %v; want the session refused", err)
	}
}

// A whole number written with a fraction or an exponent (1.0, 1e0; a
// Python client sends a float so) is an integer to JSON Schema and to
// checkValue: the tools take it, where encoding/json refused it with
// "cannot unmarshal number 1.0 into Go struct field NotebookInput.cell of
// type int". One past what an int holds is refused by the check, saying so.
func TestWholeNumbersAreIntegers(t *testing.T) {
	session, _ := connect(t, nil)
	path := filepath.Join(t.TempDir(), "n.ipynb")
	for _, tc := range []struct {
		name, tool, args, want string
		isError                bool
	}{
		{"insert at 0.0", "notebook_insert", `{"path":%q,"cell":0.0,"source":"1"}`, "inserted code cell 0", false},
		{"insert at 1e0", "notebook_insert", `{"path":%q,"cell":1e0,"source":"2"}`, "inserted code cell 1", false},
		{"edit 1.0", "notebook_edit", `{"path":%q,"cell":1.0,"source":"3"}`, "edited code cell 1", false},
		{"delete 0.0", "notebook_delete", `{"path":%q,"cell":0.0}`, "deleted code cell 0", false},
		{"cell 1e300", "notebook_edit", `{"path":%q,"cell":1e300,"source":"x"}`, "cell is 1e+300; it must be at most 9007199254740991", true},
		{"offset 2.0", "job", `{"job":"job-9","offset":2.0}`, `no job "job-9"`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if strings.Contains(args, "%q") {
				args = fmt.Sprintf(args, path)
			}
			res, err := session.CallTool(context.Background(), &sdk.CallToolParams{Name: tc.tool, Arguments: json.RawMessage(args)})
			if err != nil {
				t.Fatal(err)
			}
			if got := textOf(res); res.IsError != tc.isError || !strings.Contains(got, tc.want) {
				t.Fatalf("%s %s: isError %v, %q; want isError %v and %q", tc.tool, args, res.IsError, got, tc.isError, tc.want)
			}
		})
	}
}

// A tool without arguments names none it would take: the list was empty
// ("its fields are  (see the sessions tool's input schema)").
func TestCheckValueNoFields(t *testing.T) {
	err := checkValue(object(nil, map[string]*jsonschema.Schema{}), map[string]any{"x": 1.0}, "")
	if want := `arguments has no field "x"; it takes none: send {}`; err == nil || err.Error() != want {
		t.Fatalf("checkValue = %v; want %q", err, want)
	}
}
