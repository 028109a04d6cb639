package mcp

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evalhost/evalhost/notebook"
	"github.com/evalhost/evalhost/sessions"
	"github.com/evalhost/evalhost/streamsink"
)

// Parallel edits of one notebook (a model's parallel tool calls) happen one
// after another: without the notebook's lock most of them failed as
// conflicts with each other.
func TestNotebookToolsParallelEdits(t *testing.T) {
	session, _ := connect(t, nil)
	path := filepath.Join(t.TempDir(), "n.ipynb")
	const n = 12
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := session.CallTool(context.Background(), &sdk.CallToolParams{Name: "notebook_insert",
				Arguments: map[string]any{"path": path, "cell": 0, "source": fmt.Sprintf("x = %d", i)}})
			switch {
			case err != nil:
				errs <- err.Error()
			case res.IsError:
				errs <- res.Content[0].(*sdk.TextContent).Text
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("an insert failed: %s", e)
	}
	nb, err := notebook.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if nb.Len() != n {
		t.Fatalf("%d cells; want %d, one per insert", nb.Len(), n)
	}
}

// notebook_view with lines, and notebook_run's outputs, are bounded: each
// result is one message, and clients drop the connection past 16 MiB.
func TestNotebookResultsBounded(t *testing.T) {
	t.Run("view lines", func(t *testing.T) {
		session, _ := connect(t, nil)
		path := filepath.Join(t.TempDir(), "big.ipynb")
		nb := notebook.New()
		if err := nb.Insert(0, notebook.Code, strings.Repeat(strings.Repeat("x", 99)+"\n", 30000)); err != nil {
			t.Fatal(err)
		}
		if err := nb.Save(path); err != nil {
			t.Fatal(err)
		}
		res, err := session.CallTool(context.Background(), &sdk.CallToolParams{Name: "notebook_view",
			Arguments: map[string]any{"path": path, "lines": "1-"}})
		if err != nil || res.IsError {
			t.Fatalf("notebook_view: %v %+v", err, res)
		}
		text := res.Content[0].(*sdk.TextContent).Text
		if len(text) > maxViewLinesBytes+200 || !strings.Contains(text, "cut at 1 MiB: ask for lines from") {
			t.Fatalf("%d bytes, ending %q; want at most 1 MiB saying where to go on", len(text), text[max(0, len(text)-100):])
		}
	})
	t.Run("run outputs", func(t *testing.T) {
		const cells = 100
		run := func(_ context.Context, req NotebookRunRequest) (NotebookRunResult, error) {
			r := NotebookRunResult{Output: req.Path, Result: sessions.Result{Status: sessions.StatusError, FailedCell: cells - 1}}
			for i := range cells {
				r.Cells = append(r.Cells, i)
				r.Result.Cells = append(r.Result.Cells, sessions.CellResult{Index: i, Language: sessions.LangPython,
					Status: sessions.StatusOK, Output: streamsink.Dump{Text: fmt.Sprintf("cell %d ", i) + strings.Repeat("o", 50<<10)}})
			}
			r.Result.Cells[cells-1].Status = sessions.StatusError
			return r, nil
		}
		reg := sessions.New(sessions.Config{Home: t.TempDir()})
		defer reg.Close()
		srv, err := New(Config{Registry: reg, WorkDir: t.TempDir(), RunNotebook: run})
		if err != nil {
			t.Fatal(err)
		}
		res, _, err := srv.nbRun(context.Background(), nil, NotebookRunInput{Path: "n.ipynb"})
		if err != nil {
			t.Fatal(err)
		}
		text := res.Content[0].(*sdk.TextContent).Text
		if len(text) > maxRunOutputBytes+200<<10 || !strings.Contains(text, "output not shown") ||
			!strings.Contains(text, fmt.Sprintf("cell %d o", cells-1)) {
			t.Fatalf("%d bytes; want about 1 MiB of outputs, the failed cell's among them", len(text))
		}
	})
}

// A cell's source in an edit's result is bounded: a deleted 4 MB cell came
// back whole in the text and again in structuredContent.
func TestNotebookEditResultClipsSource(t *testing.T) {
	session, _ := connect(t, nil)
	path := filepath.Join(t.TempDir(), "n.ipynb")
	nb := notebook.New()
	if err := nb.Insert(0, notebook.Code, strings.Repeat("y", 4<<20)); err != nil {
		t.Fatal(err)
	}
	if err := nb.Save(path); err != nil {
		t.Fatal(err)
	}
	res, err := session.CallTool(context.Background(), &sdk.CallToolParams{Name: "notebook_delete",
		Arguments: map[string]any{"path": path, "cell": 0}})
	if err != nil || res.IsError {
		t.Fatalf("notebook_delete: %v %+v", err, res)
	}
	text := res.Content[0].(*sdk.TextContent).Text
	src := res.StructuredContent.(map[string]any)["cellSource"].(string)
	if len(text) > 70<<10 || len(src) > 70<<10 || !strings.Contains(src, "[source cut at 64 KiB of 4.0 MiB]") {
		t.Fatalf("text of %d bytes, cellSource of %d; want each cut near 64 KiB, saying so", len(text), len(src))
	}
}

// A notebook tool's file that cannot be opened or read is said as the CLI
// says it ("cannot open PATH: no such file or directory"), with what to
// do, not as the Go call that failed ("read notebook: open PATH: ...").
func TestNotebookToolsFileErrors(t *testing.T) {
	session, srv := connect(t, nil)
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.ipynb")
	cases := []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"view a missing file", "notebook_view", map[string]any{"path": missing},
			"cannot open " + missing + ": no such file or directory; check the path, or create the notebook with notebook_insert or notebook_apply"},
		{"view a missing relative path", "notebook_view", map[string]any{"path": "gone.ipynb"},
			"cannot open " + filepath.Join(srv.cfg.WorkDir, "gone.ipynb") + ": no such file or directory; check the path (a relative one is from the server's working directory, " + srv.cfg.WorkDir + "), or create"},
		{"edit a missing file", "notebook_edit", map[string]any{"path": missing, "cell": 0, "source": "1"},
			"cannot open " + missing + ": no such file or directory; check the path, or create the notebook"},
		{"delete a missing file", "notebook_delete", map[string]any{"path": missing, "cell": 0},
			"cannot open " + missing + ": no such file or directory; check the path, or create the notebook"},
		{"view a directory", "notebook_view", map[string]any{"path": dir},
			"cannot read " + dir + ": it is a directory, not a notebook file; give the path of a .ipynb file in it"},
		{"apply to a directory", "notebook_apply", map[string]any{"path": dir, "text": "# %%\n1\n"},
			"cannot read " + dir + ": it is a directory, not a notebook file; give the path of a .ipynb file in it"},
		// The NUL went into the message, where it read as a space:
		// "cannot open /w/a b.ipynb: invalid argument".
		{"a path with a NUL", "notebook_insert", map[string]any{"path": "a\x00b.ipynb", "cell": 0, "source": "1"},
			`"path" must not contain a NUL character`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := session.CallTool(context.Background(), &sdk.CallToolParams{Name: tc.tool, Arguments: tc.args})
			if err != nil {
				t.Fatal(err)
			}
			got := res.Content[0].(*sdk.TextContent).Text
			if !res.IsError || !strings.HasPrefix(got, tc.want) {
				t.Fatalf("isError=%v, %q; want an error starting %q", res.IsError, got, tc.want)
			}
		})
	}
}

// notebook_run's runner loads the notebook as notebook_view does; its
// file's error gets the same words.
func TestNotebookRunFileError(t *testing.T) {
	run := func(_ context.Context, req NotebookRunRequest) (NotebookRunResult, error) {
		_, err := notebook.Load(req.Path)
		return NotebookRunResult{}, err
	}
	reg := sessions.New(sessions.Config{Home: t.TempDir()})
	defer reg.Close()
	srv, err := New(Config{Registry: reg, WorkDir: t.TempDir(), RunNotebook: run})
	if err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "missing.ipynb")
	_, _, err = srv.nbRun(context.Background(), nil, NotebookRunInput{Path: missing})
	want := "cannot open " + missing + ": no such file or directory; check the path, or create the notebook with notebook_insert or notebook_apply"
	if err == nil || err.Error() != want {
		t.Fatalf("nbRun: %v; want %q", err, want)
	}
}
