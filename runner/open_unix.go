//go:build unix

package runner

import (
	"os"
	"syscall"
)

// openNoBlock opens path for reading without waiting for a writer, should
// it be a fifo.
func openNoBlock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
