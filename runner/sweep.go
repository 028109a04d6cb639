package runner

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Temporary names, each with its writer's pid, so that a later start can
// tell a killed writer's leftovers from a live one's: replaceFile's file
// .tmp-<name>.<pid>-<random> beside the file it replaces, and in the cache
// dir a first copy's directory .runner-tmp.<pid>-<random> and an untrusted
// copy's, moved aside, .runner-old.<pid>-<random>.
const (
	tempPrefix = ".tmp-"
	copyPrefix = ".runner-tmp."
	oldPrefix  = ".runner-old."
)

// newTemp creates replaceFile's temporary file beside path.
func newTemp(path string) (*os.File, error) {
	return os.CreateTemp(filepath.Dir(path), tempPrefix+filepath.Base(path)+"."+strconv.Itoa(os.Getpid())+"-")
}

// sweepTemps removes from dir (a runner dir, this user's and 0700) what a
// replaceFile killed before its rename left: a regular file of this user's
// named as newTemp names them whose writer's pid no longer runs. A live
// writer's stays: two starts may repair one dir at once, each writing its
// own file, whose random part no later writer with a reused pid can take
// while it is there. What fails leaves a file for a later repair.
func sweepTemps(dir string) {
	sweep(dir, func(name string) (int, bool) {
		rest, ok := strings.CutPrefix(name, tempPrefix)
		if !ok {
			return 0, false
		}
		return writer(rest)
	}, false)
}

// sweepCopies removes from cacheDir (this user's, writable by no one
// else) the directories a first copy or a move aside killed before it
// finished left, as sweepTemps does files.
func sweepCopies(cacheDir string) {
	sweep(cacheDir, func(name string) (int, bool) {
		for _, p := range []string{copyPrefix, oldPrefix} {
			if rest, ok := strings.CutPrefix(name, p); ok {
				return writer("." + rest)
			}
		}
		return 0, false
	}, true)
}

// sweep removes each entry of dir that pid names, whose pid no longer
// runs, of this user's and a regular file (or with dirs a directory, with
// what it holds).
func sweep(dir string, pid func(name string) (int, bool), dirs bool) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	for _, name := range names {
		p, ok := pid(name)
		if !ok || !processGone(p) {
			continue
		}
		path := filepath.Join(dir, name)
		fi, err := os.Lstat(path)
		if err != nil || dirs != fi.IsDir() || !dirs && !fi.Mode().IsRegular() {
			continue
		}
		if uid, me, ok := owner(fi); ok && uid != me {
			continue
		}
		if dirs {
			os.RemoveAll(path)
		} else {
			os.Remove(path)
		}
	}
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
