package streamsink

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

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
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("streamsink: artifacts directory: %w", trustdir.ShownError(err))
	}
	if userDir {
		return judgeUserDir(dir)
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

// judgeUserDir refuses a $PI_ARTIFACTS_DIR another user could swap
// artifacts in, saying why and what to do.
func judgeUserDir(dir string) error {
	_, err := trustdir.WriteDir(dir)
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
