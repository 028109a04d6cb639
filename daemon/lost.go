package daemon

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"strconv"
	"time"
)

// A background process that ends takes its sessions' state with it. Its
// successor tells each such session's next cell why
// (sessions.Registry.NoteLost), whichever command runs it and however
// long after: "lost.json" carries the names across, written by the process
// at a clean end and by the client that finds a crashed one's state file.

// lostEntry is one session whose state a process's end took.
type lostEntry struct {
	Session string `json:"session"`
	Why     string `json:"why"` // follows "its py interpreter"
}

// maxLost bounds lost.json: the newest are kept.
const maxLost = 256

// endedWhy is a lostEntry's why for process pid, which ended as how says.
func endedWhy(pid int, how string) string {
	return "ended with the background process (pid " + strconv.Itoa(pid) + "), which " + how
}

// stamp is when a process ended, for how: a notice read days later says
// which end it means.
func stamp(t time.Time) string { return t.Format("2006-01-02 15:04") }

// addLost appends the names to the file at path, written whole.
func addLost(path string, names []string, why string) error {
	if len(names) == 0 {
		return nil
	}
	entries := readLost(path)
	for _, n := range names {
		entries = append(entries, lostEntry{Session: n, Why: why})
	}
	if len(entries) > maxLost {
		entries = entries[len(entries)-maxLost:]
	}
	b, err := json.Marshal(entries)
	if err != nil {
		return err
	}
	return replaceFile(path, b)
}

// takeLost reads and removes the file at path; an unreadable one is
// dropped, costing only the notices.
func takeLost(path string) []lostEntry {
	entries := readLost(path)
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil // it would be told again by the next process
	}
	return entries
}

func readLost(path string) []lostEntry {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return nil
	}
	var entries []lostEntry
	if json.Unmarshal(b, &entries) != nil {
		return nil
	}
	return entries
}
