//go:build !unix

package sessions

// canEnter leaves the check to the interpreter's start where there is no
// access(2).
func canEnter(string) error { return nil }
