package daemon

import (
	"os"
	"strings"
)

// logTail is what the process wrote to its log since offset, shortened.
func logTail(path string, offset int64) string {
	b, err := os.ReadFile(path)
	if err != nil || int64(len(b)) < offset {
		return ""
	}
	s := strings.TrimSpace(string(b[offset:]))
	if len(s) > 2000 {
		s = "…" + s[len(s)-2000:]
	}
	return s
}
