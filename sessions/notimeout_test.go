package sessions

import (
	"strings"
	"testing"
	"time"
)

func TestClampTimeout(t *testing.T) {
	tests := []struct {
		name    string
		d, want time.Duration
	}{
		{"default", 0, DefaultTimeout},
		{"below the minimum", time.Millisecond, MinTimeout},
		{"above the maximum", time.Hour, MaxTimeout},
		{"in range", 5 * time.Second, 5 * time.Second},
		{"no timeout stays", NoTimeout, NoTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ClampTimeout(tt.d, DefaultTimeout); got != tt.want {
				t.Fatalf("ClampTimeout(%v) = %v, want %v", tt.d, got, tt.want)
			}
		})
	}
}

// A cell without a timeout runs past the registry's default one.
func TestNoTimeoutCell(t *testing.T) {
	r := newTestRegistry(t, Config{DefaultTimeout: time.Second})
	res, c := eval(t, r, Request{Cells: []Cell{{Language: LangPython, Code: "import time; time.sleep(1.5); print('done')", Timeout: NoTimeout}}})
	if res.Status != StatusOK || !strings.Contains(c.Output(), "done") {
		t.Fatalf("cell without a timeout: %+v %q", res.Cells[0], c.Output())
	}
}
