package heappeak

import (
	"bytes"
	"os"
	"strconv"
)

// ResetRSSPeak lowers the resident-set high-water mark to the resident set
// now, so that RSSPeak then says how far it rose; false where that cannot
// be done.
func ResetRSSPeak() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// RSSPeak is the process's resident-set high-water mark in bytes; false
// where it cannot be read.
func RSSPeak() (uint64, bool) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for line := range bytes.Lines(status) {
		if rest, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			kb, err := strconv.ParseUint(string(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte(" kB"))), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}
