package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/sessions"
)

// run's --timeout is each cell's, and 0 is no limit (python3 has none), as
// nb run's; an attached run refuses 0, whose background process bounds a
// cell at 600 s.
func TestRunTimeoutFlag(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout int
		want    time.Duration
	}{
		{"seconds", 45, 45 * time.Second},
		{"0 is no limit", 0, sessions.NoTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cells, err := collectCells("", runFlags{code: []string{"1", "2"}, timeout: tc.timeout, lang: sessions.LangPython}, strings.NewReader(""), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cells {
				if c.Timeout != tc.want {
					t.Errorf("cell timeout %v, want %v", c.Timeout, tc.want)
				}
			}
		})
	}
	if msg := attachedUnsupported(runFlags{timeout: 0}, false); !strings.Contains(msg, "--timeout 0") {
		t.Errorf("attached --timeout 0: %q, want a refusal", msg)
	}
	if msg := attachedUnsupported(runFlags{timeout: 30}, false); msg != "" {
		t.Errorf("attached --timeout 30 refused: %q", msg)
	}
}
