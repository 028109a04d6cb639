//go:build !linux

package launch

import "os"

// Exe is the file to re-execute as a reaper: this program's path, which
// must still hold it.
func Exe() (string, error) { return os.Executable() }
