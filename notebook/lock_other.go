//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package notebook

// heldLock has no flock here: Lock excludes only the Locks of this process
// (lock_local.go), and only Save's check that the file is unchanged guards
// against another process writing.
type heldLock struct{}

func (h *heldLock) try(string) (bool, error) { return true, nil }

func (h *heldLock) release(string) error { return nil }
