//go:build !unix

package trustdir

import (
	"io/fs"
	"os"
)

// Owner is unknown where files carry no uid: nothing is refused for its
// owner, and the mode rules still apply.
func Owner(fs.FileInfo) (uid int, ok bool) { return -1, false }

// IDOf is unknown where files carry no inode.
func IDOf(fs.FileInfo) (ID, bool) { return ID{}, false }

// openNoBlock opens path for reading.
func openNoBlock(path string) (*os.File, error) { return os.Open(path) }
