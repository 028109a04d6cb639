//go:build !unix

package sessions

import (
	"io/fs"
	"os"
)

// statCwd is stat(2) of abs for checkCwd; the directory's identity is
// unknown here (the zero cwdID), so a session is never retired for it.
func statCwd(abs string) (id cwdID, isDir bool, err error) {
	fi, err := os.Stat(abs)
	if pe, ok := err.(*fs.PathError); ok {
		err = pe.Err
	}
	if err != nil {
		return cwdID{}, false, err
	}
	return cwdID{}, fi.IsDir(), nil
}
