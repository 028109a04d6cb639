//go:build !unix

package mcp

import "io"

// watchReader cannot tell here when w's reader is gone: the channel never
// closes, and the end of input waits for every answer as before.
func watchReader(io.Writer) (gone <-chan struct{}, stop func()) {
	return make(chan struct{}), func() {}
}
