package sessions

import (
	"path/filepath"

	"github.com/evalhost/evalhost/internal/trustdir"
)

// SafeDirectoriesFile is the file in the home that lists the user's safe
// directories: project directories whose .venv and .evalhost/modules they
// trust though another user owns them (internal/trustdir says how).
const SafeDirectoriesFile = "safe-directories"

// SafeDirectories is the list in home's SafeDirectoriesFile, read when a
// judgement first needs it, so a change applies to the next one; nil
// without a home.
func SafeDirectories(home string) *trustdir.Safe {
	if home == "" {
		return nil
	}
	return trustdir.SafeFile(filepath.Join(home, SafeDirectoriesFile))
}
