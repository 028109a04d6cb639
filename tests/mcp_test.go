package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/evalhost/evalhost/internal/testkit"
	"github.com/evalhost/evalhost/mcp"
	"github.com/evalhost/evalhost/sessions"
)

// mcpClient is the SDK's own client driving `evalhost mcp` over stdio.
type mcpClient struct {
	session *sdk.ClientSession
	// outputSchemas check every structuredContent a call returns.
	outputSchemas map[string]*jsonschema.Resolved

	mu       sync.Mutex
	progress map[string]chan string // progress token -> messages
}

func startMCP(tb testing.TB, args ...string) *mcpClient {
	tb.Helper()
	return startMCPClient(tb, nil, args...)
}

// startMCPClient is startMCP with the client session's options.
func startMCPClient(tb testing.TB, opts *sdk.ClientSessionOptions, args ...string) *mcpClient {
	tb.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		tb.Skip("python3 not on PATH")
	}
	cmd := exec.Command(binary, append([]string{"mcp"}, args...)...)
	cmd.Env = append(os.Environ(), "EVALHOST_HOME="+tb.TempDir())
	cmd.Stderr = os.Stderr
	c := &mcpClient{progress: map[string]chan string{}}
	client := sdk.NewClient(&sdk.Implementation{Name: "evalhost-test", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			c.mu.Lock()
			ch := c.progress[fmt.Sprint(req.Params.ProgressToken)]
			c.mu.Unlock()
			if ch != nil {
				select {
				case ch <- req.Params.Message:
				default:
				}
			}
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	session, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, opts)
	if err != nil {
		tb.Fatalf("connect to evalhost mcp: %v", err)
	}
	c.session = session
	tb.Cleanup(func() { session.Close() })
	tools, err := session.ListTools(ctx, nil)
	if err != nil {
		tb.Fatal(err)
	}
	c.outputSchemas = map[string]*jsonschema.Resolved{}
	for _, tool := range tools.Tools {
		var s jsonschema.Schema
		raw, _ := json.Marshal(tool.OutputSchema)
		if err := json.Unmarshal(raw, &s); err != nil {
			tb.Fatalf("%s's output schema: %v", tool.Name, err)
		}
		if c.outputSchemas[tool.Name], err = s.Resolve(nil); err != nil {
			tb.Fatalf("%s's output schema: %v", tool.Name, err)
		}
	}
	return c
}

// call runs a tool and returns its result; a protocol error fails the test.
func (c *mcpClient) call(t *testing.T, name string, args any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	res, err := c.session.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	if res.StructuredContent != nil {
		raw, _ := json.Marshal(res.StructuredContent)
		var v any
		json.Unmarshal(raw, &v)
		if err := c.outputSchemas[name].Validate(v); err != nil {
			t.Fatalf("%s's structuredContent does not match its output schema: %v\n%s", name, err, raw)
		}
	}
	return res
}

func (c *mcpClient) eval(t *testing.T, session string, cells ...map[string]any) (*sdk.CallToolResult, mcp.EvalOutput) {
	t.Helper()
	res := c.call(t, "eval", map[string]any{"session": session, "cells": cells})
	return res, structured[mcp.EvalOutput](t, res)
}

func structured[T any](t *testing.T, res *sdk.CallToolResult) T {
	t.Helper()
	var out T
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil || json.Unmarshal(raw, &out) != nil {
		t.Fatalf("structuredContent %s does not decode: %v", raw, err)
	}
	return out
}

// allText joins the result's text blocks.
func allText(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func TestMCPToolsList(t *testing.T) {
	c := startMCP(t)
	if got := c.session.InitializeResult().ServerInfo.Name; got != "evalhost" {
		t.Errorf("server name %q, want evalhost", got)
	}
	res, err := c.session.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	schemas := map[string]map[string]any{}
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		raw, _ := json.Marshal(tool.InputSchema)
		var m map[string]any
		json.Unmarshal(raw, &m)
		schemas[tool.Name] = m
		if tool.Description == "" {
			t.Errorf("tool %s has no description", tool.Name)
		}
	}
	want := []string{"close", "eval", "job", "jobs", "notebook_apply", "notebook_delete", "notebook_edit", "notebook_insert",
		"notebook_run", "notebook_view", "reset", "sessions", "stop", "wait"}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
	cells := schemas["eval"]["properties"].(map[string]any)["cells"].(map[string]any)
	cellProps := cells["items"].(map[string]any)["properties"].(map[string]any)
	for _, f := range []string{"code", "language", "title", "reset", "timeout", "onTimeout", "maxRuntime"} {
		if cellProps[f].(map[string]any)["description"] == "" {
			t.Errorf("eval cells[].%s has no description", f)
		}
	}
	if req := schemas["eval"]["required"]; fmt.Sprint(req) != "[cells]" {
		t.Errorf("eval requires %v, want [cells]", req)
	}
	tmpl, err := c.session.ListResourceTemplates(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, rt := range tmpl.ResourceTemplates {
		uris = append(uris, rt.URITemplate)
	}
	if want := []string{"artifact://{id}", "artifact://{id}{?offset,length}"}; !slices.Equal(uris, want) {
		t.Fatalf("resource templates %v, want %v", uris, want)
	}
}

func TestMCPEval(t *testing.T) {
	c := startMCP(t, "--tool", "echo=cat", "--max-sessions", "16")
	t.Run("two cells keep state", func(t *testing.T) {
		res, out := c.eval(t, "state", py("x = 41"), py("print(x + 1)"))
		if res.IsError || out.Status != "ok" || len(out.Cells) != 2 {
			t.Fatalf("result %+v: %s", out, allText(res))
		}
		if !strings.Contains(allText(res), "42") || out.Cells[1].ExecutionCount <= out.Cells[0].ExecutionCount {
			t.Fatalf("second cell did not see x, or counts did not grow: %+v\n%s", out, allText(res))
		}
		res, _ = c.eval(t, "state", py("x"))
		if !strings.Contains(allText(res), "41") {
			t.Fatalf("a later call lost x: %s", allText(res))
		}
	})
	t.Run("tool bridge", func(t *testing.T) {
		res, _ := c.eval(t, "tools", py("print(tool.echo(a=1))"))
		if res.IsError || !strings.Contains(allText(res), "{'a': 1}") {
			t.Fatalf("tool.echo: %s", allText(res))
		}
		list, err := c.session.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range list.Tools {
			if tool.Name == "eval" && !strings.Contains(tool.Description, "tool.echo(**args)") {
				t.Fatalf("eval's description does not name tool.echo: %s", tool.Description)
			}
		}
	})
	t.Run("cancel keeps state", func(t *testing.T) { testMCPCancel(t, c) })
	t.Run("timeout keeps partial output", func(t *testing.T) {
		res, out := c.eval(t, "timeout", map[string]any{"code": "import time\nprint('partial', flush=True)\ntime.sleep(60)", "timeout": 1})
		text := allText(res)
		if !res.IsError || out.Status != "timeout" || !strings.Contains(text, "partial") ||
			!strings.Contains(text, "Command timed out after 1 seconds") {
			t.Fatalf("want a timeout with its partial output and notice: %+v\n%s", out, text)
		}
	})
	t.Run("interpreter death is retried", func(t *testing.T) {
		marker := filepath.Join(t.TempDir(), "died")
		code := fmt.Sprintf("import os\nif not os.path.exists(%q):\n    open(%q, 'w').close()\n    os._exit(9)\nprint('second life')", marker, marker)
		res, out := c.eval(t, "death", py("y = 1"), py(code))
		cell := out.Cells[1]
		if res.IsError || cell.Status != "ok" || !cell.Retried || !cell.StateLost || !strings.Contains(allText(res), "second life") {
			t.Fatalf("want an ok, retried, stateLost cell: %+v\n%s", cell, allText(res))
		}
	})
	t.Run("matplotlib plot", func(t *testing.T) { testMCPPlot(t, c) })
	t.Run("20 MB of output", func(t *testing.T) { testMCPBigOutput(t, c) })
	t.Run("malformed arguments", func(t *testing.T) { testMCPMalformed(t, c) })
	t.Run("deep arguments", func(t *testing.T) { testMCPDeepArguments(t, c) })
	t.Run("sessions reset close", func(t *testing.T) {
		out := structured[mcp.SessionsOutput](t, c.call(t, "sessions", map[string]any{}))
		if !slices.ContainsFunc(out.Sessions, func(i sessions.Info) bool { return i.Session == "state" }) {
			t.Fatalf("sessions %+v lack \"state\"", out.Sessions)
		}
		r := structured[mcp.SessionOutput](t, c.call(t, "reset", map[string]any{"session": "state"}))
		if !r.Existed {
			t.Fatal("reset of an open session says it did not exist")
		}
		res, out2 := c.eval(t, "state", py("x"))
		if !res.IsError || out2.Cells[0].Status != "error" || !strings.Contains(allText(res), "NameError") {
			t.Fatalf("x survived a reset: %s", allText(res))
		}
		cl := structured[mcp.SessionOutput](t, c.call(t, "close", map[string]any{"session": "state"}))
		if !cl.Existed {
			t.Fatal("close of an open session says it did not exist")
		}
	})
}

func testMCPCancel(t *testing.T, c *mcpClient) {
	c.eval(t, "cancel", py("kept = 7"))
	token := "cancel-1"
	notes := make(chan string, 64)
	c.mu.Lock()
	c.progress[token] = notes
	c.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	params := &sdk.CallToolParams{Name: "eval", Arguments: map[string]any{"session": "cancel",
		"cells": []any{py("import time\nprint('sleeping', flush=True)\ntime.sleep(120)")}}}
	params.SetProgressToken(token)
	errc := make(chan error, 1)
	go func() { _, err := c.session.CallTool(ctx, params); errc <- err }()
	for note := range notes { // the cell is running once a note quotes its output
		if strings.Contains(note, "sleeping") {
			break
		}
	}
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("a cancelled call returned no error")
	}
	res, out := c.eval(t, "cancel", py("print(kept)"))
	if res.IsError || out.Cells[0].StateLost || !strings.Contains(allText(res), "7") {
		t.Fatalf("state after cancel: %+v\n%s", out, allText(res))
	}
}

func testMCPPlot(t *testing.T, c *mcpClient) {
	// The session runs the python3 on PATH (EVALHOST_TEST_PYTHON's, first):
	// sid's 3.15 has no matplotlib wheel yet.
	testkit.NeedModuleIn(t, "python3", "matplotlib", "matplotlib")
	code := "import matplotlib.pyplot as plt\nfig = plt.figure(figsize=(30, 20), dpi=100)\nplt.plot([1, 3, 2])\nplt.show()"
	res, out := c.eval(t, "plot", py(code))
	if res.IsError || len(out.Cells[0].Images) != 1 {
		t.Fatalf("want one image: %+v\n%s", out, allText(res))
	}
	var img *sdk.ImageContent
	var link *sdk.ResourceLink
	for _, block := range res.Content {
		switch b := block.(type) {
		case *sdk.ImageContent:
			img = b
		case *sdk.ResourceLink:
			link = b
		case *sdk.TextContent:
			if strings.Contains(b.Text, "iVBORw0KGgo") { // base64 of a PNG header
				t.Fatal("base64 image data in text content")
			}
		}
	}
	if img == nil || link == nil {
		t.Fatalf("want image content and a resource link, got %d blocks", len(res.Content))
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(img.Data))
	if err != nil || max(cfg.Width, cfg.Height) > mcp.DefaultImageSide || len(img.Data) > mcp.DefaultImageBytes {
		t.Fatalf("image %dx%d, %d bytes (%v): over the budget", cfg.Width, cfg.Height, len(img.Data), err)
	}
	full := readResource(t, c, link.URI)
	orig, _, err := image.DecodeConfig(bytes.NewReader(full.Blob))
	if err != nil || max(orig.Width, orig.Height) <= mcp.DefaultImageSide {
		t.Fatalf("full image %dx%d (%v), want the figure's full size", orig.Width, orig.Height, err)
	}
	if want := fmt.Sprintf("downscaled from %dx%d", orig.Width, orig.Height); !strings.Contains(allText(res), want) {
		t.Errorf("text does not say %q: %s", want, allText(res))
	}
}

func readResource(t *testing.T, c *mcpClient, uri string) *sdk.ResourceContents {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := c.session.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
	if err != nil || len(res.Contents) != 1 {
		t.Fatalf("resources/read %s: %v", uri, err)
	}
	return res.Contents[0]
}

func testMCPBigOutput(t *testing.T, c *mcpClient) {
	const lines, width = 200_000, 100 // 20 MB
	code := fmt.Sprintf("import sys\nfor i in range(%d):\n    sys.stdout.write('%%099d\\n' %% i)", lines)
	res, out := c.eval(t, "big", py(code))
	cell := out.Cells[0]
	text := allText(res)
	if res.IsError || !cell.Truncated || cell.Artifact == "" || len(text) > 64<<10 {
		t.Fatalf("want bounded text and an artifact: %d bytes of text, %+v", len(text), cell)
	}
	if !strings.Contains(text, fmt.Sprintf("%099d", lines-1)) || !strings.Contains(text, cell.Artifact) {
		t.Fatalf("text lacks the last line or the artifact pointer:\n%s", text[:min(len(text), 2000)])
	}
	// A read returns at most mcp.MaxResourceBytes; each part names the next.
	var all strings.Builder
	next := regexp.MustCompile(`\n\[part of \S+: bytes \d+-\d+ of \d+; the rest: (\S+)\]\n$`)
	for uri, parts := cell.Artifact, 0; uri != ""; parts++ {
		if parts > 10 {
			t.Fatal("more than 10 parts for 20 MB")
		}
		text := readResource(t, c, uri).Text
		uri = ""
		if m := next.FindStringSubmatchIndex(text); m != nil {
			uri = text[m[2]:m[3]]
			text = text[:m[0]]
		}
		all.WriteString(text)
	}
	if all.Len() != lines*width || !strings.HasPrefix(all.String(), fmt.Sprintf("%099d\n", 0)) ||
		!strings.HasSuffix(all.String(), fmt.Sprintf("%099d\n", lines-1)) {
		t.Fatalf("artifact parts hold %d bytes, want %d", all.Len(), lines*width)
	}
}

func testMCPMalformed(t *testing.T, c *mcpClient) {
	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"cells not an array", "eval", map[string]any{"cells": "print(1)"}, "cells"},
		{"no cells", "eval", map[string]any{"cells": []any{}}, "cells"},
		{"unknown language", "eval", map[string]any{"cells": []any{map[string]any{"code": "1", "language": "ruby"}}}, "language"},
		{"empty language", "eval", map[string]any{"cells": []any{map[string]any{"code": "1", "language": ""}}}, `cells[0].language is ""; use "py" (or python`},
		{"unknown field", "eval", map[string]any{"cells": []any{py("1")}, "sesion": "x"}, "sesion"},
		{"negative timeout", "eval", map[string]any{"cells": []any{map[string]any{"code": "1", "timeout": -1}}}, "timeout"},
		{"bad mode", "eval", map[string]any{"cells": []any{py("1")}, "mode": "forever"}, "mode"},
		{"reset without session", "reset", map[string]any{}, "session"},
		{"edit without cell", "notebook_edit", map[string]any{"path": "x.ipynb", "source": "1"}, "cell"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := c.call(t, tc.tool, tc.args)
			if !res.IsError || !strings.Contains(allText(res), tc.want) {
				t.Fatalf("want a tool error naming %q, got isError=%v: %s", tc.want, res.IsError, allText(res))
			}
			t.Log(allText(res))
		})
	}
	res, _ := c.eval(t, "after-errors", py("print('still serving')"))
	if res.IsError || !strings.Contains(allText(res), "still serving") {
		t.Fatalf("server after bad calls: %s", allText(res))
	}
}

// deepTooDeep is the start of the error for a message nesting deeper than
// the server reads.
const deepTooDeep = "invalid request: the message nests arrays and objects more than 1000 deep"

// The SDK's client sends arguments nested up to encoding/json's 10000
// levels; past the SDK server's 1000 the call fails with an invalid-request
// error for its id, and the connection serves on (an error with id null
// would end the client's connection).
func testMCPDeepArguments(t *testing.T, c *mcpClient) {
	for _, depth := range []int{1500, 9000} {
		var deep any = []any{}
		for range depth {
			deep = []any{deep}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		_, err := c.session.CallTool(ctx, &sdk.CallToolParams{Name: "eval",
			Arguments: map[string]any{"cells": []any{map[string]any{"code": "1", "x": deep}}}})
		cancel()
		var jerr *jsonrpc.Error
		if !errors.As(err, &jerr) || jerr.Code != jsonrpc.CodeInvalidRequest || !strings.HasPrefix(jerr.Message, deepTooDeep) {
			t.Fatalf("depth %d: got %v, want error %d %q…", depth, err, jsonrpc.CodeInvalidRequest, deepTooDeep)
		}
	}
	res, _ := c.eval(t, "after-deep", py("print('still serving')"))
	if res.IsError || !strings.Contains(allText(res), "still serving") {
		t.Fatalf("server after deep calls: %s", allText(res))
	}
}

// Over raw stdio every depth past the SDK's bound is answered alike, under
// the request's id, even past encoding/json's 10000 levels, where nothing
// tells deep JSON from no JSON; a line that is not JSON is a parse error
// with id null. The server reads on after each.
func TestMCPStdioDeepRequests(t *testing.T) {
	deep := func(id string, depth int) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"eval","arguments":{"cells":[{"code":"1","x":` +
			strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}]}}}`
	}
	answers := runMCPToEOF(t, []string{
		deep("5", 1500), deep(`"six"`, 20_000), deep("7", 200_000),
		`{"jsonrpc":"2.0","id":8,"method":"ping"`,
		`{"jsonrpc":"2.0","id":9,"method":"ping"}`,
	})
	for _, w := range []struct {
		id, code, text string
	}{
		{"5", "-32600", deepTooDeep}, {`"six"`, "-32600", deepTooDeep}, {"7", "-32600", deepTooDeep},
		{"null", "-32700", "parse error: the line is not one JSON value"},
	} {
		i := matchAnswer(answers, idAnswer{w.id, w.text})
		if i < 0 || gjson.Get(answers[i], "error.code").Raw != w.code {
			t.Errorf("no answer for id %s with code %s and %q in:\n%.2000s", w.id, w.code, w.text, strings.Join(answers, "\n"))
		}
	}
	if i := matchAnswer(answers, idAnswer{"9", `"result":{}`}); i < 0 {
		t.Errorf("the ping after them was not answered:\n%.2000s", strings.Join(answers, "\n"))
	}
}

func TestMCPNotebook(t *testing.T) {
	c := startMCP(t)
	path := filepath.Join(t.TempDir(), "nb.ipynb")
	res := c.call(t, "notebook_apply", map[string]any{"path": path, "text": "# %% [markdown]\n# Title\n\n# %%\nx = 1\n\n# %%\nprint(x)\n"})
	if res.IsError {
		t.Fatalf("apply: %s", allText(res))
	}
	res = c.call(t, "notebook_edit", map[string]any{"path": path, "cell": 1, "source": "x = 6 * 7"})
	edit := structured[mcp.NotebookOutput](t, res)
	if res.IsError || edit.CellSource != "x = 6 * 7" || edit.TotalCells != 3 {
		t.Fatalf("edit: %+v %s", edit, allText(res))
	}
	res = c.call(t, "notebook_edit", map[string]any{"path": path, "cell": 9, "source": "1"})
	if !res.IsError || !strings.Contains(allText(res), "9") {
		t.Fatalf("edit out of range: %s", allText(res))
	}
	res = c.call(t, "notebook_run", map[string]any{"path": path})
	run := structured[mcp.NotebookRunOutput](t, res)
	if res.IsError || run.Status != "ok" || len(run.Cells) != 2 || run.Cells[1].Cell != 2 {
		t.Fatalf("run: %+v %s", run, allText(res))
	}
	data, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(data), `"42\n"`) {
		t.Fatalf("notebook outputs after run: %s (%v)", data, err)
	}
	res = c.call(t, "notebook_view", map[string]any{"path": path})
	if !strings.Contains(allText(res), "x = 6 * 7") || !strings.Contains(allText(res), "cell:2") {
		t.Fatalf("view: %s", allText(res))
	}
}

// notebook_run on a notebook it cannot write back is refused before any
// cell runs, as nb run --inplace is.
func TestMCPNotebookRunRefusesAReadOnlyNotebook(t *testing.T) {
	c := startMCP(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "nb.ipynb")
	writeNotebook(t, path, "open('ran', 'w').close()")
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	res := c.call(t, "notebook_run", map[string]any{"path": path})
	if !res.IsError || !strings.Contains(allText(res), "read-only") || !strings.Contains(allText(res), "no cell was run") {
		t.Fatalf("notebook_run on a read-only notebook: %s; want an error saying it is read-only and no cell ran", allText(res))
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Fatal("a cell ran although the notebook could not be written")
	}
}

// A notebook that changed on disk while notebook_run's cells ran (here the
// first cell appends to it) is not overwritten, and the result still says
// which cells ran, how each ended, and where their outputs went instead:
// FILE.nbconvert.ipynb, as nb run --inplace does. Before, the result was
// the save's error alone, and the outputs were lost.
func TestMCPNotebookRunSaveConflict(t *testing.T) {
	c := startMCP(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "nb.ipynb")
	writeNotebook(t, path, "open("+strconv.Quote(path)+", 'a').write('\\n')", "print(6 * 7)")
	res := c.call(t, "notebook_run", map[string]any{"path": path})
	run := structured[mcp.NotebookRunOutput](t, res)
	converted := filepath.Join(dir, "nb.nbconvert.ipynb")
	text := allText(res)
	if len(run.Cells) != 2 || run.Cells[0].Status != "ok" || run.Cells[1].Status != "ok" || run.Status != "ok" {
		t.Fatalf("run: %+v\n%s\nwant both cells, ok", run, text)
	}
	if !res.IsError || run.Written != converted || !strings.Contains(run.NotSaved, "changed on disk") ||
		!strings.Contains(text, "changed on disk") || !strings.Contains(text, converted) || !strings.Contains(text, "42") {
		t.Fatalf("run: %+v\n%s\nwant an error saying the notebook changed and the outputs are in %s", run, text, converted)
	}
	if data, err := os.ReadFile(converted); err != nil || !strings.Contains(string(data), `"42\n"`) {
		t.Fatalf("%s: %.300s (%v); want the outputs", converted, data, err)
	}
	if data, _ := os.ReadFile(path); strings.Contains(string(data), `"42\n"`) {
		t.Fatal("the notebook that changed on disk was overwritten")
	}
}

// notebook_run's cells run in the notebook's directory, as its description
// and nb run say; they ran in the server's, so a notebook's relative paths
// (data files beside it) were not found, or written elsewhere.
func TestMCPNotebookRunCwd(t *testing.T) {
	c := startMCP(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "nb.ipynb")
	writeNotebook(t, path, "import os\nprint(os.getcwd())")
	res := c.call(t, "notebook_run", map[string]any{"path": path})
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || !strings.HasSuffix(allText(res), "\n"+real) {
		t.Fatalf("notebook_run: %q\nwant the cell's cwd %s", allText(res), real)
	}
}

func TestMCPHTTP(t *testing.T) {
	t.Run("refuses non-loopback", func(t *testing.T) {
		cmd := command(t, "mcp", "--http", "0.0.0.0:0")
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "loopback") {
			t.Fatalf("want exit 2 naming loopback, got %v: %s", err, out)
		}
	})
	url, token := startMCPHTTP(t)
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("listening on %s, not loopback", url)
	}
	for _, tc := range []struct{ name, auth string }{{"no token", ""}, {"wrong token", "Bearer " + strings.Repeat("0", 64)}} {
		t.Run(tc.name, func(t *testing.T) {
			resp := postInitialize(t, url, tc.auth)
			if resp != 401 {
				t.Fatalf("status %d, want 401", resp)
			}
		})
	}
	t.Run("right token", func(t *testing.T) {
		hc := &http.Client{Transport: bearer{token}}
		client := sdk.NewClient(&sdk.Implementation{Name: "evalhost-test", Version: "1"}, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		session, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer session.Close()
		res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: "eval", Arguments: map[string]any{"cells": []any{py("1+1")}}})
		if err != nil || res.IsError || !strings.Contains(allText(res), "2") {
			t.Fatalf("eval over HTTP: %v %v", err, res)
		}
		// A call the SDK cannot read fails alone, with why, as on stdio:
		// its plain 400 or 413 made the Go client close its session.
		var deep any = 1
		for range 1500 {
			deep = []any{deep}
		}
		for _, tc := range []struct {
			name string
			args map[string]any
			want string
		}{
			{"too deep", map[string]any{"cells": []any{py("1")}, "x": deep}, "nests arrays and objects more than 1000 deep"},
			{"too long", map[string]any{"cells": []any{py("#" + strings.Repeat("x", 17<<20))}}, "longer than the server's limit"},
		} {
			_, err := session.CallTool(ctx, &sdk.CallToolParams{Name: "eval", Arguments: tc.args})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
			}
			res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: "eval", Arguments: map[string]any{"cells": []any{py("2+2")}}})
			if err != nil || res.IsError || !strings.Contains(allText(res), "4") {
				t.Fatalf("the call after one %s: %v %v", tc.name, err, res)
			}
		}
	})
}

// mcpPost POSTs one JSON-RPC message to an MCP HTTP server and returns the
// status, the Mcp-Session-Id and the body.
func mcpPost(t *testing.T, url, token, sessionID, body string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	if sessionID != "" {
		req.Header.Set("Mcp-Session-Id", sessionID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(b)
}

// TestMCPHTTPOverlongIDLast POSTs a request longer than the limit with its
// id after its params, as the TypeScript SDK's client writes every request
// ({...request, jsonrpc: "2.0", id}): it gets a JSON-RPC error under that
// id, as one with its id first does, not the SDK's plain 413.
func TestMCPHTTPOverlongIDLast(t *testing.T) {
	url, token := startMCPHTTP(t)
	status, sid, body := mcpPost(t, url, token, "", `{"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}},"jsonrpc":"2.0","id":0}`)
	if status != 200 || sid == "" {
		t.Fatalf("initialize: %d %q %.300s", status, sid, body)
	}
	mcpPost(t, url, token, sid, `{"method":"notifications/initialized","jsonrpc":"2.0"}`)
	status, _, body = mcpPost(t, url, token, sid, `{"method":"tools/call","params":{"name":"eval","arguments":{"cells":[{"code":"#`+
		strings.Repeat("x", 17<<20)+`"}]}},"jsonrpc":"2.0","id":7}`)
	if want := `{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"request of more than`; status != 200 || !strings.HasPrefix(body, want) {
		t.Fatalf("%d %.300s\nwant 200 %s…", status, body, want)
	}
}

// TestMCPOverlongLine sends a request longer than --max-line over raw
// stdio: it gets an error for its id, and the next request is served.
func TestMCPOverlongLine(t *testing.T) {
	cmd := command(t, "mcp", "--max-line", "100000")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	lines := bufio.NewScanner(stdout)
	lines.Buffer(nil, 1<<20)
	send := func(s string) { io.WriteString(stdin, s+"\n") }
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	lines.Scan()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"eval","arguments":{"cells":[{"code":"#` + strings.Repeat("x", 200000) + `"}]}}}`)
	// The TypeScript SDK's client (Claude Code's, Cursor's, VS Code's) writes
	// a request's id after its params: {...request, jsonrpc: "2.0", id}.
	send(`{"method":"tools/call","params":{"name":"eval","arguments":{"cells":[{"code":"#` + strings.Repeat("x", 200000) + `"}]}},"jsonrpc":"2.0","id":3}`)
	send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"eval","arguments":{"cells":[{"code":"1+1"}]}}}`)
	for _, want := range []string{`{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"request of 200`,
		`{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"request of 200`, `{"jsonrpc":"2.0","id":4,"result":`} {
		if !lines.Scan() {
			t.Fatalf("server stopped before %s: %v", want, lines.Err())
		}
		if !strings.HasPrefix(lines.Text(), want) {
			t.Fatalf("got %.300s, want %s…", lines.Text(), want)
		}
	}
}
