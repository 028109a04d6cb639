package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"syscall"

	"github.com/evalhost/evalhost/internal/trustdir"
)

// ErrUnsafe is matched by every [*UnsafeDirError]: a directory evalhost
// would load code from that someone else could have written into.
var ErrUnsafe = errors.New("unsafe directory")

// ErrNoHome means no home could be found for evalhost: HOME is unset, the
// user has no home in the password database, and EVALHOST_HOME is unset.
var ErrNoHome = errors.New("no home directory for evalhost")

// UnsafeDirError is a home or modules directory that is not the user's own
// or that others may write to. Reason says which, Fix what to do.
type UnsafeDirError struct {
	What   string // "evalhost home" or "modules directory"
	Path   string
	Reason string
	Fix    string
}

func (e *UnsafeDirError) Error() string {
	return fmt.Sprintf("refusing the %s %s: %s, so another user could plant code that runs as you; %s",
		e.What, e.Path, e.Reason, e.Fix)
}

func (e *UnsafeDirError) Unwrap() error { return ErrUnsafe }

// Home returns evalhost's home, where it keeps its runner cache, modules,
// managed venv, artifacts and gateway files: $EVALHOST_HOME, else
// ~/.evalhost, where ~ is $HOME or, when HOME is unset, the user's home in
// the password database. The path is absolute. A missing home is created
// 0700 (~/.evalhost by one mkdir in a ~ that exists, nothing above it; an
// EVALHOST_HOME with what is missing above it); an existing one, and its modules directory, must pass [CheckDir],
// and no directory above it may let another user replace it (owned by
// someone other than the user or root, or world-writable without the sticky
// bit), nor may a symbolic link on the way belong to another user.
// There is no fallback to a shared temporary directory: with no home at
// all the error ([ErrNoHome]) says to set EVALHOST_HOME.
func Home() (string, error) {
	home, from, err := homePath()
	if err != nil {
		return "", err
	}
	if err := makeHome(home, from); err != nil {
		return "", err
	}
	if err := CheckDir(home, "evalhost home"); err != nil {
		return "", err
	}
	if err := checkAncestors(home); err != nil {
		return "", err
	}
	modules := filepath.Join(home, "modules")
	if err := CheckDir(modules, "modules directory"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	return home, nil
}

// HomePath is where [Home] is, without creating or checking it.
func HomePath() (string, error) {
	home, _, err := homePath()
	return home, err
}

// homePath is HomePath and, for ~/.evalhost, where ~ came from ("HOME" or
// the password database); "" for EVALHOST_HOME.
func homePath() (home, from string, err error) {
	if h := os.Getenv("EVALHOST_HOME"); h != "" {
		abs, err := filepath.Abs(h)
		if err != nil {
			return "", "", fmt.Errorf("EVALHOST_HOME=%q: %w", h, err)
		}
		return abs, "", nil
	}
	base, from, err := userHome()
	if err != nil {
		return "", "", err
	}
	// A relative HOME ("." in some sandboxes) would make every path under
	// the home relative, and an interpreter started in a cell's cwd would
	// run the runner (or modules) found under that project instead.
	abs, err := filepath.Abs(filepath.Join(base, ".evalhost"))
	if err != nil {
		return "", "", fmt.Errorf("HOME=%q: %w", base, err)
	}
	return abs, from, nil
}

// userHome is $HOME, else the password database's home of the user, and
// which of the two it is.
func userHome() (dir, from string, err error) {
	if h, err := os.UserHomeDir(); err == nil && h != "" {
		return h, "HOME", nil
	}
	u, err := user.Current()
	if err != nil {
		return "", "", fmt.Errorf("%w: HOME is not set and the user is not in the password database (%v); set EVALHOST_HOME to a private directory", ErrNoHome, err)
	}
	if u.HomeDir == "" {
		return "", "", fmt.Errorf("%w: HOME is not set and user %s has no home directory in the password database; set EVALHOST_HOME to a private directory", ErrNoHome, u.Username)
	}
	return u.HomeDir, "the password database", nil
}

// makeHome creates a missing home 0700. An EVALHOST_HOME (from "") is
// made with what is missing above it: the user named it. ~/.evalhost is
// one mkdir in the user's home (from names where that came from), never
// the home or what is above it: a home that is not there (/nonexistent, as
// system users have), or that went (or became a link to nowhere) between
// a look and a mkdir, is no home, and root would have made it.
func makeHome(home, from string) error {
	if from == "" {
		if err := os.MkdirAll(home, 0o700); err != nil {
			return fmt.Errorf("create evalhost home %s: %w; set EVALHOST_HOME to a directory of your own", home, err)
		}
		return nil
	}
	beforeMakeHome(home)
	err := os.Mkdir(home, 0o700)
	switch {
	case err == nil || errors.Is(err, fs.ErrExist):
		return nil // what is there is judged next
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return noHome(filepath.Dir(home), from)
	}
	return fmt.Errorf("create evalhost home %s: %w; set EVALHOST_HOME to a directory of your own", home, err)
}

// beforeMakeHome lets a test change the user's home just before
// ~/.evalhost is made in it.
var beforeMakeHome = func(home string) {}

// noHome is the refusal of a user's home (from names where it came from)
// that ~/.evalhost could not be made in: it is not there, or not a
// directory. It says which, as a look now finds it.
func noHome(dir, from string) error {
	what := "does not exist"
	st, err := os.Stat(dir)
	switch {
	case err == nil && !st.IsDir():
		what = "is not a directory"
	case err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
		what = fmt.Sprintf("cannot be read (%v)", err)
	}
	return fmt.Errorf("%w: your home directory %s (from %s) %s, and evalhost does not make it; set EVALHOST_HOME to a private directory",
		ErrNoHome, dir, from, what)
}

// CheckDir refuses a directory evalhost would run code from when it is not
// owned by the user evalhost runs as, or is writable by group or others,
// as ssh refuses a loose ~/.ssh. A symlink is judged by its target. What
// names the directory in the error. A missing directory is an error
// matching fs.ErrNotExist.
func CheckDir(dir, what string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%s %s: %w", what, dir, err)
	}
	if !st.IsDir() {
		return &UnsafeDirError{What: what, Path: dir, Reason: "it is not a directory",
			Fix: "remove it or set EVALHOST_HOME to a directory of your own"}
	}
	if owner, ok := trustdir.Owner(st); ok && owner != os.Geteuid() {
		return &UnsafeDirError{What: what, Path: dir, Reason: fmt.Sprintf("it is owned by uid %d, not by you (uid %d)", owner, os.Geteuid()),
			Fix: "set EVALHOST_HOME to a directory of your own"}
	}
	if perm := st.Mode().Perm(); perm&0o022 != 0 {
		return &UnsafeDirError{What: what, Path: dir, Reason: fmt.Sprintf("it is writable by group or others (mode %04o)", perm),
			Fix: fmt.Sprintf("run: chmod go-w %s", dir)}
	}
	return nil
}
