//go:build !linux

package termrelay

import (
	"fmt"
	"os"
	"runtime"
)

// reopen: only Linux names a descriptor's terminal here (/proc/self/fd).
func reopen(*os.File) (*os.File, error) {
	return nil, fmt.Errorf("termrelay: %w on %s", ErrUnsupported, runtime.GOOS)
}
