package streamsink

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/evalhost/evalhost/internal/trustdir"
)

// ErrUnsafeDir is wrapped by the error a store gives (as a notice in the
// Dump) when its directory would let other users read or replace artifacts.
var ErrUnsafeDir = errors.New("streamsink: unsafe artifacts directory")

// prepareDir creates dir 0700 or checks the one there. A directory the
// store owns is its own business: loose modes are tightened to 0700, since
// nobody else should read spilled output, and another user's directory is
// refused, since its owner could read or replace it. A user's directory is
// theirs: its modes are left as they are (artifacts are 0600 anyway), but
// it is judged as every directory evalhost writes the user's files into
// (trustdir.WriteDir): one another user owns (root aside), one others may
// write without the sticky bit, a link of another user's or a directory
// under one of theirs is refused, since whoever controls it can swap an
// artifact for their own file. A refusal prints the path as trustdir.Shown
// does: a name another user chose may hold a newline or an escape.
func prepareDir(dir string, userDir bool) error {
	if userDir {
		return prepareUserDir(dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("streamsink: artifacts directory: %w", trustdir.ShownError(err))
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("streamsink: artifacts directory: %w", trustdir.ShownError(err))
	}
	perm := fi.Mode().Perm()
	if uid, ok := trustdir.Owner(fi); ok && uid != os.Getuid() {
		return fmt.Errorf("%w: %s belongs to another user (uid %d), who could read or replace your output: remove it, or set PI_ARTIFACTS_DIR to a directory of your own",
			ErrUnsafeDir, trustdir.Shown(dir), uid)
	}
	if perm&0o077 != 0 {
		if err := os.Chmod(dir, perm&0o700); err != nil {
			return fmt.Errorf("%w: %s is open to other users (mode %04o) and could not be made 0700: %w",
				ErrUnsafeDir, trustdir.Shown(dir), perm, trustdir.ShownError(err))
		}
	}
	return nil
}

// prepareUserDir makes a missing $PI_ARTIFACTS_DIR (0700) and judges it.
// It is made as ~/.evalhost is, by one mkdir in a directory that exists
// ([CheckUserDir]), never with what is above it: a named directory whose
// parent is missing is a mistake (a HOME of /nonexistent under it, a
// typo), and root would make it. The parent is judged first
// (trustdir.MakeIn), so nothing is made where it would be refused.
func prepareUserDir(dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		if err := CheckUserDir(dir, ""); err != nil {
			return fmt.Errorf("streamsink: artifacts directory: %w", err)
		}
		if _, err := trustdir.MakeIn(dir); err != nil {
			return userDirRefusal(dir, err)
		}
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("streamsink: artifacts directory: %w", trustdir.ShownError(err))
		}
	}
	return judgeUserDir(dir)
}

// CheckUserDir refuses a $PI_ARTIFACTS_DIR dir that is not a directory
// and cannot be made one by a mkdir: its parent does not exist or is not
// a directory, it is a file, or a symbolic link to nothing. The error
// names the variable and its value and says what to do; home ("" for
// none) is where the artifacts go without the variable. It only looks:
// what it cannot look at (a parent it may not search) is left to the
// first spill, whose notice says what failed.
func CheckUserDir(dir, home string) error {
	what := userDirProblem(dir)
	if what == "" {
		return nil
	}
	instead := "unset it to keep spilled output in evalhost's home"
	if home != "" {
		instead = "unset it to keep spilled output in " + trustdir.Shown(filepath.Join(home, "artifacts"))
	}
	return fmt.Errorf("PI_ARTIFACTS_DIR=%q: want a directory, or one evalhost can make in a directory that exists (%s; "+
		"evalhost makes the artifacts directory alone, never what is above it): make it (mkdir -p %s), or %s",
		dir, what, trustdir.ShellQuote(dir), instead)
}

// userDirProblem says why dir is not a directory and cannot be made one
// by a mkdir; "" when it is, or can, or a look cannot tell.
func userDirProblem(dir string) string {
	fi, err := os.Stat(dir)
	switch {
	case err == nil && fi.IsDir():
		return ""
	case err == nil:
		return trustdir.Shown(dir) + " is not a directory"
	case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
		return ""
	}
	if target, err := os.Readlink(dir); err == nil {
		return missing(dir, target)
	}
	parent := filepath.Dir(dir)
	fi, err = os.Stat(parent)
	switch {
	case err == nil && fi.IsDir():
		return ""
	case err == nil:
		return trustdir.Shown(parent) + " is not a directory"
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		target, _ := os.Readlink(parent)
		return missing(parent, target)
	}
	return ""
}

// missing says that p, a symbolic link to target ("" for none), does not
// lead to anything.
func missing(p, target string) string {
	if target == "" {
		return trustdir.Shown(p) + " does not exist"
	}
	return trustdir.Shown(p) + " is a symbolic link to " + trustdir.Shown(target) + ", which does not exist"
}

// judgeUserDir refuses a $PI_ARTIFACTS_DIR another user could swap
// artifacts in, saying why and what to do.
func judgeUserDir(dir string) error {
	_, err := trustdir.WriteDir(dir)
	return userDirRefusal(dir, err)
}

// userDirRefusal is err, a judgement of $PI_ARTIFACTS_DIR dir (or of the
// directory it is to be made in), as the store gives it: nil for none.
func userDirRefusal(dir string, err error) error {
	var e *trustdir.Error
	switch {
	case err == nil:
		return nil
	case !errors.As(err, &e):
		return fmt.Errorf("streamsink: artifacts directory: %w", trustdir.ShownError(err))
	}
	fix := "use a directory of your own"
	if f := e.Fix(); f != "" {
		fix = "run " + f + ", or " + fix
	}
	reason := e.Reason()
	if e.Problem == trustdir.Owned && e.Role != trustdir.Above {
		reason += ", who could read, replace or forge your artifacts"
	}
	return fmt.Errorf("%w: %s (PI_ARTIFACTS_DIR): %s: %s", ErrUnsafeDir, trustdir.Shown(dir), reason, fix)
}

// parseSize reads a byte count with an optional binary suffix: "1073741824",
// "512K", "512M", "1G", "1T" (also "512MiB", "1GB"; suffixes are 1024-based).
func parseSize(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "I")
	shift := 0
	if n := len(t); n > 0 {
		if i := strings.IndexByte("KMGT", t[n-1]); i >= 0 {
			shift, t = 10*(i+1), t[:n-1]
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
	if err != nil || n < 0 || n > (1<<62)>>shift {
		return 0, errors.New("want a size such as 1073741824 (bytes), 512M or 2G, or 0 for no cap")
	}
	return n << shift, nil
}
