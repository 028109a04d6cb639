package tests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRunSpillsOnlyWhatIsCut (issue 16): output `run` shows whole, live or
// as --json frames, is not also written to the artifacts directory; a view
// that --max-output cuts still spills every byte, named once.
func TestRunSpillsOnlyWhatIsCut(t *testing.T) {
	const code = "for i in range(300000): print(i)"
	var printed strings.Builder
	for i := range 300000 {
		fmt.Fprintf(&printed, "%d\n", i)
	}
	want := printed.String()
	notice := regexp.MustCompile(`\[full output: artifact://(\S+) \(.*?\) at (.+)\]\n`)
	tests := []struct {
		name  string
		args  []string
		shown func(stdout string) string // the output as the reader gets it
		spill bool
	}{
		{"live", nil, func(s string) string { return s }, false},
		{"json", []string{"--json"}, jsonStdout, false},
		{"json with max-output", []string{"--json", "--max-output", "2000"}, jsonStdout, false},
		{"max-output", []string{"--max-output", "2000"}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			cmd := command(t, append(append([]string{"run"}, tt.args...), "-c", code)...)
			cmd.Env = append(cmd.Env, "EVALHOST_HOME="+home, "PI_ARTIFACTS_DIR=")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("run: %v\n%s", err, stderr.String())
			}
			left, _ := filepath.Glob(filepath.Join(home, "artifacts", "*"))
			if !tt.spill {
				if got := tt.shown(stdout.String()); got != want {
					t.Errorf("the reader got %d bytes, want all %d", len(got), len(want))
				}
				if len(left) > 0 {
					t.Errorf("output shown whole left %v in the artifacts directory", left)
				}
				return
			}
			m := notice.FindStringSubmatch(stdout.String())
			if m == nil || stdout.Len() > 4000 {
				t.Fatalf("want a bounded view with the artifact notice, got %d bytes:\n%.4000s", stdout.Len(), stdout.String())
			}
			if n := strings.Count(stdout.String()+stderr.String(), m[2]); n != 1 {
				t.Errorf("the artifact path is printed %d times, want once", n)
			}
			if len(left) != 1 || filepath.Base(left[0]) != m[1] || left[0] != m[2] {
				t.Errorf("artifacts directory holds %v, want only %s", left, m[2])
			}
			if data, err := os.ReadFile(m[2]); err != nil || string(data) != want {
				t.Errorf("artifact holds %d bytes (%v), want all %d", len(data), err, len(want))
			}
		})
	}
}

// jsonStdout joins the data of run --json's stdout frames.
func jsonStdout(out string) string {
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var f struct{ Type, Data string }
		if json.Unmarshal(sc.Bytes(), &f) == nil && f.Type == "stdout" {
			b.WriteString(f.Data)
		}
	}
	return b.String()
}
