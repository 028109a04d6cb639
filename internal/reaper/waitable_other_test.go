//go:build !linux

package reaper_test

import (
	"time"

	"github.com/evalhost/evalhost/internal/leakcheck"
)

// waitable reports whether pid has exited; the test that uses it runs on
// Linux only.
func waitable(pid int, within time.Duration) bool { return leakcheck.Gone(pid, within) }
