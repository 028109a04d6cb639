//go:build unix && !linux

package main

import (
	"os"
	"time"
)

// socketOutput makes nothing here: a socket on stdout is written as it is.
func socketOutput(*os.File) *socketWriter { return nil }

// socketWriter is Linux's (socketout_linux.go).
type socketWriter struct{}

func (*socketWriter) Write(p []byte) (int, error)      { return 0, os.ErrInvalid }
func (*socketWriter) SetWriteDeadline(time.Time) error { return os.ErrInvalid }
func (*socketWriter) Close() error                     { return nil }
func (*socketWriter) asLog(time.Duration)              {}
