package rawio

import (
	"io"
	"os"
	"syscall"
	"time"
)

// File is a non-blocking, polled file read and written with raw system
// calls; see the package doc.
type File struct {
	f *os.File
	rawConn
}

// Name is the file's name.
func (r *File) Name() string { return r.f.Name() }

// SyscallConn is the file's raw connection (internal/sentinput's reads
// without waiting).
func (r *File) SyscallConn() (syscall.RawConn, error) { return r.f.SyscallConn() }

// SetReadDeadline bounds the reads, as the file's own does.
func (r *File) SetReadDeadline(t time.Time) error { return r.f.SetReadDeadline(t) }

// SetWriteDeadline bounds the writes, as the file's own does.
func (r *File) SetWriteDeadline(t time.Time) error { return r.f.SetWriteDeadline(t) }

// Close closes the file.
func (r *File) Close() error { return r.f.Close() }

var (
	_ io.ReadWriteCloser = (*File)(nil)
)
