package mcp

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evalhost/evalhost/notebook"
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
