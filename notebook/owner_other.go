//go:build !unix

package notebook

import (
	"io/fs"
	"os"
)

// keepOwner does nothing where files have no Unix owner.
func keepOwner(*os.File, fs.FileInfo) {}

// fileOwner: no Unix owner here.
func fileOwner(fs.FileInfo) (int, bool) { return 0, false }
