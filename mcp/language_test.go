package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evalhost/evalhost/sessions"
)

// The eval tool takes a cell's language by the names serve takes, in any
// case and with spaces around (sessions.ParseLanguage, which serve uses),
// and refuses the rest, "" too, with a message that names them; a cell
// without one is Python.
func TestEvalLanguageNames(t *testing.T) {
	session, _ := connect(t, nil)
	for _, tc := range []struct {
		name, language string
		want           string // the cell's language; "" when refused
	}{
		{"short", "py", sessions.LangPython},
		{"capitalised", "Python", sessions.LangPython},
		{"upper case", "PY", sessions.LangPython},
		{"python3", "Python3", sessions.LangPython},
		{"ipython", "IPython", sessions.LangPython},
		{"spaces around", " sh ", sessions.LangShell},
		{"bash", "Bash", sessions.LangShell},
		{"shell", "SHELL", sessions.LangShell},
		{"unknown", "ruby", ""},
		{"a prefix", "pyth", ""},
		{"empty, as serve refuses it", "", ""},
		{"blank", "  ", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, ok := sessions.ParseLanguage(tc.language); got != tc.want || ok != (tc.want != "") {
				t.Fatalf("serve reads %q as %q (%v); the table wants %q", tc.language, got, ok, tc.want)
			}
			res, err := session.CallTool(context.Background(), &sdk.CallToolParams{Name: "eval",
				Arguments: map[string]any{"cells": []any{map[string]any{"code": "", "language": tc.language}}}})
			if err != nil {
				t.Fatal(err)
			}
			text := res.Content[0].(*sdk.TextContent).Text
			if tc.want == "" {
				want := `cells[0].language is "` + tc.language + `"`
				if !res.IsError || !strings.Contains(text, want) || !strings.Contains(text, "bash") {
					t.Fatalf("isError %v, %q; want a refusal saying %q and the names", res.IsError, text, want)
				}
				return
			}
			checkCellLanguage(t, text, res.StructuredContent, tc.want)
		})
	}
	t.Run("absent", func(t *testing.T) {
		res, err := session.CallTool(context.Background(), &sdk.CallToolParams{Name: "eval",
			Arguments: map[string]any{"cells": []any{map[string]any{"code": ""}}}})
		if err != nil {
			t.Fatal(err)
		}
		checkCellLanguage(t, res.Content[0].(*sdk.TextContent).Text, res.StructuredContent, sessions.LangPython)
	})
}

// checkCellLanguage checks that an eval call's output is one cell in want.
func checkCellLanguage(t *testing.T, text string, structured any, want string) {
	t.Helper()
	var out EvalOutput
	b, _ := json.Marshal(structured)
	if err := json.Unmarshal(b, &out); err != nil || len(out.Cells) != 1 || out.Cells[0].Language != want {
		t.Fatalf("%v: %s; want one cell in %s", err, text, want)
	}
}
