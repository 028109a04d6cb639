package sessions

import (
	"os"
	"path/filepath"
	"strconv"
)

// defaultCacheDir is the user's cache dir, or else a directory of the temp
// dir named for the uid: a shared /tmp/evalhost would be the first user's,
// and runner.Path refuses a cache dir another user owns.
func defaultCacheDir() string {
	if dir, err := os.UserCacheDir(); err == nil {
		return dir
	}
	return filepath.Join(os.TempDir(), "evalhost-"+strconv.Itoa(os.Getuid()))
}
