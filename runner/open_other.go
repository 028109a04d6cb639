//go:build !unix

package runner

import "os"

// openNoBlock opens path for reading; there are no fifos to wait on here.
func openNoBlock(path string) (*os.File, error) { return os.Open(path) }
