//go:build unix

package notebook

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// umask is the process's file mode creation mask. Linux says it in
// /proc/self/status (4.7+), which changes nothing; elsewhere it is read by
// setting it and setting it back, which is the only way POSIX gives.
func umask() int {
	if m, ok := procUmask(); ok {
		return m
	}
	return swapUmask()
}

// procUmask reads the "Umask:" line of /proc/self/status.
func procUmask() (int, bool) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Umask:"); ok {
			m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32)
			return int(m), err == nil
		}
	}
	return 0, false
}

var umaskMu sync.Mutex

// swapUmask reads the mask by setting it and setting it back. The mask
// set meanwhile is 077, so a file another goroutine creates in that moment
// is only more private than asked; the mutex keeps two readers from
// restoring each other's 077.
func swapUmask() int {
	umaskMu.Lock()
	defer umaskMu.Unlock()
	m := syscall.Umask(0o077)
	syscall.Umask(m)
	return m
}
