//go:build !linux

package runner

import (
	"testing"
	"time"
)

// awaitLoopWait gives the runner time to reach its event loop's wait:
// without /proc to see it there, a pause.
func awaitLoopWait(t *testing.T, p *proc) { time.Sleep(20 * time.Millisecond) }
