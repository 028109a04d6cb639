package runner

import (
	"os"

	"github.com/evalhost/evalhost/internal/trustdir"
)

// owner returns the uid owning fi and this process's effective uid; ok is
// false where files have no owner (permission bits still apply).
func owner(fi os.FileInfo) (uid, me int, ok bool) {
	uid, ok = trustdir.Owner(fi)
	return uid, os.Geteuid(), ok
}
