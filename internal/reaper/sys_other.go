//go:build !linux

package reaper

import "os"

func selfExe() (string, error) { return os.Executable() }
