//go:build !unix

package notebook

// umask is what a Unix user's usually is: the platform has none.
func umask() int { return 0o022 }
