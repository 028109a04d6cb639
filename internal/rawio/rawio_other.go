//go:build !linux

package rawio

import "os"

type rawConn struct{}

// New returns nil: raw calls are used on Linux alone (see the package doc).
func New(f *os.File) *File { return nil }

// Read is never reached: New returns no File here.
func (r *File) Read(p []byte) (int, error) { return r.f.Read(p) }

// Write is never reached: New returns no File here.
func (r *File) Write(p []byte) (int, error) { return r.f.Write(p) }

// WriteSome is never reached: New returns no File here.
func (r *File) WriteSome(p []byte) (int, error) { return r.f.Write(p) }
