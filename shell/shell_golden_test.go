package shell

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/testkit"
)

// TestShellTranscript runs a fixed sequence of cells in one bash and compares
// every frame they produced with testdata/shell_transcript.golden (-update
// rewrites it). It pins the exact frames a session and a renderer receive.
func TestShellTranscript(t *testing.T) {
	testkit.Clean(t, time.Minute)
	s := startShell(t, Options{Env: []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C.UTF-8"}})
	cells := []frames.Request{
		{ID: "hello", Code: "echo hello; echo to stderr >&2"},
		{ID: "state", Code: "cd /; n=3\nsquare() { echo $(( $1 * $1 )); }"},
		{ID: "use", Code: "pwd; square $n"},
		{ID: "env", Code: `echo "$GREETING"`, Env: map[string]*string{"GREETING": shellStr("hi 'there'\n2nd line")}},
		{ID: "fail", Code: "echo partial; false"},
		{ID: "heredoc", Code: "cat <<'EOF'\n$not expanded\nEOF\nprintf 'no newline'"},
		{ID: "exit", Code: "echo bye; exit 3"},
	}
	// How output splits into stdout frames depends on read timing, so
	// adjacent stdout frames are joined before comparing.
	var all []frames.Frame
	for _, req := range cells {
		done, err := s.Execute(context.Background(), req, func(f frames.Frame) {
			if n := len(all); n > 0 && f.Type == frames.TypeStdout && all[n-1].Type == frames.TypeStdout && all[n-1].ID == f.ID {
				all[n-1].Data += f.Data
				return
			}
			all = append(all, f)
		})
		if err != nil {
			t.Fatalf("cell %s: %v", req.ID, err)
		}
		all = append(all, done)
	}
	var got bytes.Buffer
	for i := range all {
		got.Write(frames.AppendJSON(nil, &all[i]))
		got.WriteByte('\n')
	}
	testkit.Golden(t, filepath.Join("testdata", "shell_transcript.golden"), got.Bytes())
}
