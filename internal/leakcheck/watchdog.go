package leakcheck

import (
	"fmt"
	"testing"
	"time"
)

// Watchdog panics, naming tb and dumping every goroutine's stack, unless
// stop is called within limit. Register stop with tb.Cleanup before Check
// and it also covers teardown, where a deadlock in Close would hang.
func Watchdog(tb testing.TB, limit time.Duration) (stop func()) {
	name := tb.Name()
	t := time.AfterFunc(limit, func() {
		panic(fmt.Sprintf("deadlock watchdog: %s still running after %v\n%s", name, limit, stacks()))
	})
	return func() { t.Stop() }
}
