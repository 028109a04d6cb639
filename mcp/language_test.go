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
// and refuses the rest with a message that names them.
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
			var out EvalOutput
			b, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(b, &out); err != nil || len(out.Cells) != 1 || out.Cells[0].Language != tc.want {
				t.Fatalf("%v: %s; want one cell in %s", err, text, tc.want)
			}
		})
	}
}
