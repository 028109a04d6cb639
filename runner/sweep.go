package runner

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Temporary names, each with its writer's pid (which only says who left
// one): replaceFile's file .tmp-<name>.<pid>-<random> beside the file it
// replaces, and in the cache dir a first copy's directory
// .runner-tmp.<pid>-<random> and an untrusted copy's, moved aside,
// .runner-old.<pid>-<random>. They are written under the cache's lock
// (lockCache), so whoever holds it knows no such name is being written:
// what is there, a writer killed before its rename left. Names of another
// form (an older evalhost's, which took no lock) are left alone.
const (
	tempPrefix = ".tmp-"
	copyPrefix = ".runner-tmp."
	oldPrefix  = ".runner-old."
	lockName   = ".runner-lock"
)

// newTemp creates replaceFile's temporary file beside path.
func newTemp(path string) (*os.File, error) {
	return os.CreateTemp(filepath.Dir(path), tempPrefix+filepath.Base(path)+"."+strconv.Itoa(os.Getpid())+"-")
}

// sweepTemps removes from dir (a runner dir, this user's and 0700) what a
// replaceFile killed before its rename left: a regular file of this
// user's named as newTemp names them. Its caller holds the cache's lock.
func sweepTemps(dir string) {
	sweep(dir, func(name string) bool {
		rest, ok := strings.CutPrefix(name, tempPrefix)
		return ok && named(rest)
	}, false)
}

// sweepCopies removes from cacheDir (this user's, writable by no one
// else) the directories a first copy or a move aside killed before it
// finished left, as sweepTemps does files.
func sweepCopies(cacheDir string) {
	sweep(cacheDir, func(name string) bool {
		for _, p := range []string{copyPrefix, oldPrefix} {
			if rest, ok := strings.CutPrefix(name, p); ok {
				return named("." + rest)
			}
		}
		return false
	}, true)
}

// sweep removes each entry of dir that ours names, of this user's and a
// regular file (or with dirs a directory, with what it holds; a link in it
// is removed, not followed).
func sweep(dir string, ours func(name string) bool, dirs bool) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	for _, name := range names {
		if !ours(name) {
			continue
		}
		path := filepath.Join(dir, name)
		fi, err := os.Lstat(path)
		if err != nil || dirs != fi.IsDir() || !dirs && !fi.Mode().IsRegular() || !mine(fi) {
			continue
		}
		if dirs {
			os.RemoveAll(path)
		} else {
			os.Remove(path)
		}
	}
}

// named reports whether a temporary name ends as newTemp's and
// writeCopy's do: "<...>.<pid>-<random>".
func named(name string) bool {
	_, ok := writer(name)
	return ok
}

// writer is the pid in a temporary name's "<...>.<pid>-<random>".
func writer(name string) (int, bool) {
	rest, _, ok := cutLast(name, "-")
	if !ok {
		return 0, false
	}
	_, digits, ok := cutLast(rest, ".")
	if !ok || digits == "" || strings.Trim(digits, "0123456789") != "" {
		return 0, false
	}
	pid, err := strconv.Atoi(digits)
	return pid, err == nil && pid > 0
}

// cutLast is strings.Cut at the last sep.
func cutLast(s, sep string) (before, after string, found bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}
