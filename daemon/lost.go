package daemon

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/evalhost/evalhost/sessions"
)

// A background process that ends takes its sessions' state with it. Its
// successor tells each such session's next cell why
// (sessions.Registry.NoteLost), whichever command runs it and however long
// after: "lost.json" carries the sessions (their keys and languages) across,
// written by the process at a clean end (with what it could not tell yet,
// sessions.Registry.Untold) and by the client that finds a crashed one's
// state file.

// maxLost and maxLostBytes bound lost.json: the newest entries are kept,
// and the file is always small enough for readLost.
const (
	maxLost      = 256
	maxLostBytes = 1 << 20
)

// endedWhy is a loss's why for process pid, which ended as how says.
func endedWhy(pid int, how string) string {
	return "ended with the background process (pid " + strconv.Itoa(pid) + "), which " + how
}

// stamp is when a process ended, for how: a notice read days later says
// which end it means.
func stamp(t time.Time) string { return t.Format("2006-01-02 15:04") }

// addLost appends losses to the file name in dir, written whole.
func addLost(dir *os.Root, name string, losses []sessions.Loss) error {
	if len(losses) == 0 {
		return nil
	}
	entries := append(readLost(dir, name), losses...)
	if len(entries) > maxLost {
		entries = entries[len(entries)-maxLost:]
	}
	b, err := json.Marshal(entries)
	for err == nil && len(b) > maxLostBytes && len(entries) > 1 {
		entries = entries[len(entries)/4+1:] // the oldest go first
		b, err = json.Marshal(entries)
	}
	if err != nil || len(b) > maxLostBytes {
		return err // nil: one entry too large to keep (a name of megabytes)
	}
	return replaceFile(dir, name, b)
}

// forgetLost takes out of lost.json the losses the end of process pid
// caused (their why is endedWhy's for pid) in the sessions told answers
// true for.
func forgetLost(paths Paths, pid int, told func(sessions.Key) bool) error {
	dir, err := os.OpenRoot(paths.Dir)
	if err != nil {
		return err
	}
	defer dir.Close()
	name := filepath.Base(paths.Lost)
	entries := readLost(dir, name)
	by := endedWhy(pid, "")
	kept := slices.DeleteFunc(slices.Clone(entries), func(l sessions.Loss) bool {
		return told(l.Key) && strings.HasPrefix(l.Why, by)
	})
	switch {
	case len(kept) == len(entries):
		return nil
	case len(kept) == 0:
		if err := dir.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	b, err := json.Marshal(kept)
	if err != nil {
		return err
	}
	return replaceFile(dir, name, b)
}

// takeLost reads and removes the file name in dir; a missing or
// unreadable one costs only the notices.
func takeLost(dir *os.Root, name string) []sessions.Loss {
	entries := readLost(dir, name)
	if err := dir.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil // it would be told again by the next process
	}
	return entries
}

// readLost reads a regular file only: the directory is the user's own, but
// a FIFO there must not hang the process's start.
func readLost(dir *os.Root, name string) []sessions.Loss {
	f, err := dir.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(f, maxLostBytes+1))
	if err != nil || len(b) > maxLostBytes {
		return nil
	}
	var entries []sessions.Loss
	if json.Unmarshal(b, &entries) != nil {
		return nil
	}
	return entries
}
