//go:build unix

package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A FIFO named as the notebook (another user can plant one in a shared
// directory) is refused at once by every notebook tool: the load blocked
// for ever, holding the notebook's lock, and no cancel could end it, nor
// the server's shutdown, which waits for its calls.
func TestNotebookToolsRefuseAFIFO(t *testing.T) {
	session, _ := connect(t, nil)
	path := filepath.Join(t.TempDir(), "n.ipynb")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skip("no FIFOs:", err)
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"notebook_view", map[string]any{"path": path}},
		{"notebook_edit", map[string]any{"path": path, "cell": 0, "source": "1"}},
		{"notebook_insert", map[string]any{"path": path, "cell": 0, "source": "1"}},
		{"notebook_delete", map[string]any{"path": path, "cell": 0}},
		{"notebook_apply", map[string]any{"path": path, "text": "# %%\n1\n"}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: tc.tool, Arguments: tc.args})
			if err != nil {
				// Unblock the server's read so that its call ends.
				if w, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
					w.Close()
				}
				t.Fatalf("%s of a FIFO: %v", tc.tool, err)
			}
			want := "cannot read " + path + ": it is a named pipe (FIFO), not a regular file, and its read waits for a writer"
			if got := textOf(res); !res.IsError || !strings.HasPrefix(got, want) {
				t.Fatalf("isError=%v, %q; want an error starting %q", res.IsError, got, want)
			}
		})
	}
}
