//go:build !unix

package main

import "io"

// pollableInput leaves in as it is where pipes are not polled here.
func pollableInput(in io.Reader) (io.Reader, func()) { return in, func() {} }

// pollableOutput leaves out as it is where pipes are not polled here.
func pollableOutput(out io.Writer) (io.Writer, func()) { return out, func() {} }
