package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"unicode/utf8"

	"github.com/evalhost/evalhost/internal/trustdir"
	"github.com/evalhost/evalhost/sessions"
)

// badSessionName is why name cannot name a session of the background
// process (nil when it can), for run --session and kill to refuse as a
// usage error before the process is asked: empty would become its
// "default" without a word; a name that is not UTF-8 would not be kept
// apart from others (the JSON makes each bad byte U+FFFD); one over
// sessions.MaxSessionIDBytes goes into the interpreters' environment.
func badSessionName(name string) error {
	switch {
	case name == "":
		return errors.New("a session's name is any text but empty")
	case !utf8.ValidString(name):
		return errors.New("a session's name is not UTF-8; the background process would not keep it apart from others (its bad bytes become U+FFFD): use a UTF-8 name")
	case len(name) > sessions.MaxSessionIDBytes:
		return fmt.Errorf("a session's name is %d bytes; at most %d", len(name), sessions.MaxSessionIDBytes)
	}
	return nil
}

// homeError is an evalhost home that cannot be used (config.Home's
// refusal): a usage error, as run and daemon report it.
type homeError struct{ err error }

func (e homeError) Error() string { return e.err.Error() }
func (e homeError) Unwrap() error { return e.err }

// cwdGoneError is a current directory that cannot be read (getwd fails:
// it was removed or moved away while the shell stood in it, or this user
// may no longer search it), which run --session and kill key a session
// by: a usage error, as a one-shot run's refusal of it, each saying what
// to do instead.
type cwdGoneError struct{ err error }

func (e cwdGoneError) Error() string {
	if e.denied() {
		return fmt.Sprintf("the current directory cannot be read (%v): this user may not search it (no x permission)", e.err)
	}
	return fmt.Sprintf("the current directory cannot be read (%v): it was removed or moved away", e.err)
}
func (e cwdGoneError) Unwrap() error { return e.err }

// denied says the directory is there, but not this user's to search:
// getwd's stat of "." needs the x permission the shell's cd did not.
func (e cwdGoneError) denied() bool { return errors.Is(e.err, fs.ErrPermission) }

// cdElsewhere is the advice that starts each refusal of a cwdGoneError
// err: where to cd instead.
func cdElsewhere(err error) string {
	var gone cwdGoneError
	if errors.As(err, &gone) && gone.denied() {
		return "cd to a directory this user may enter"
	}
	return "cd to a directory that exists"
}

// absDir is dir made absolute, "" the current directory, as a session's
// cwd is keyed; a cwdGoneError when the current directory is needed and
// cannot be read.
func absDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", cwdGoneError{err}
	}
	return abs, nil
}

// runDir is a run's session directory, dir made absolute ("" the current
// one), or, when the current directory cannot be read (a cwdGoneError),
// the refusal run gives, one-shot or attached, saying what to do. python3
// runs there, as long as nothing asks for its cwd; evalhost's interpreter
// cannot: a session is keyed by its directory's path and its interpreter
// is started there by that path, and the runner itself asks for its cwd as
// it starts (sys.path's first entry).
func runDir(dir string) (string, error) {
	abs, err := absDir(dir)
	if err != nil {
		return "", fmt.Errorf("%w; %s, or give --cwd DIR", err, cdElsewhere(err))
	}
	return abs, nil
}

// sessionDir is the directory a session of run --session, or the one
// kill names, is keyed by: runDir's or absDir's path abs with its symbolic
// links resolved. One directory reached through a link and by its own path
// is one directory, as python3 sees it (os.getcwd() names it by its own
// path), and so one session: the shell's path ($PWD, which os.Getwd
// prefers) made two. A path that does not resolve (a directory removed
// since, which kill --cwd may name) has what is above it resolved, as far
// as it exists.
func sessionDir(abs string) string {
	if p, err := filepath.EvalSymlinks(abs); err == nil {
		return p
	}
	parent := filepath.Dir(abs)
	if parent == abs {
		return abs
	}
	return filepath.Join(sessionDir(parent), filepath.Base(abs))
}

// relativeFileHint adds to err, when it is a relative FILE's cwdGoneError
// (parseCommandLine), what to do: python3 cannot open such a FILE either,
// where an absolute path runs (until the script asks for its cwd). A
// --cwd DIR (cwdGiven) does not help: FILE is relative to the current
// directory, as python3's, not to DIR. Without it, run refuses the
// removed directory itself too (runDir).
func relativeFileHint(err error, file string, cwdGiven bool) error {
	if !errors.As(err, new(cwdGoneError)) {
		return err
	}
	if cwdGiven {
		return fmt.Errorf("%w; %s, or give %s's absolute path", err, cdElsewhere(err), trustdir.Shown(file))
	}
	return fmt.Errorf("%w; %s, or give --cwd DIR and %s's absolute path", err, cdElsewhere(err), trustdir.Shown(file))
}

// askFailed reports err of a command that asked the background process
// and returns its exit code: a home that cannot be used is a usage error.
func askFailed(cmd string, err error, stderr io.Writer) int {
	fmt.Fprintf(stderr, "evalhost %s: %v\n", cmd, err)
	if errors.As(err, new(homeError)) {
		return exitUsage
	}
	return exitFailed
}

// shownName is a session name as a message shows it: quoted when it holds
// a control character or bytes that are not UTF-8 (trustdir.Shown), `""`
// when empty, and cut after 80 bytes when longer.
func shownName(name string) string {
	switch {
	case name == "":
		return `""`
	case len(name) > 80:
		return fmt.Sprintf("%s… (%d bytes)", trustdir.Shown(name[:80]), len(name))
	}
	return trustdir.Shown(name)
}
