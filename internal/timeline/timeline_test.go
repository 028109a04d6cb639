package timeline

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestMark(t *testing.T) {
	tests := []struct {
		name    string
		enabled bool
		want    string
	}{
		{"off writes nothing", false, ""},
		{"on writes the phase and its detail", true, " spawn python=/usr/bin/python3\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if tt.enabled {
				Enable(&buf)
			}
			defer Enable(nil)
			Mark("spawn", "python", "/usr/bin/python3")
			got := buf.String()
			if tt.want == "" {
				if got != "" {
					t.Fatalf("disabled timeline wrote %q", got)
				}
				return
			}
			if !strings.HasPrefix(got, "evalhost: timeline ") || !strings.HasSuffix(got, tt.want) {
				t.Fatalf("got %q, want a timeline line ending %q", got, tt.want)
			}
		})
	}
}

// MarkAt writes the time it is given, not the time of the call.
func TestMarkAt(t *testing.T) {
	var buf bytes.Buffer
	Enable(&buf)
	defer Enable(nil)
	MarkAt(start.Add(1500*time.Microsecond), "reaper-spare", "pid", 7)
	if got, want := buf.String(), "evalhost: timeline    1.500ms reaper-spare pid=7\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
