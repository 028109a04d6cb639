package runner

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// tempPrefix begins the name of replaceFile's temporary files:
// .tmp-<name>.<pid>-<random>, the pid its writer's.
const tempPrefix = ".tmp-"

// newTemp creates replaceFile's temporary file beside path, named so that
// a later start can tell whose it is (sweepTemps).
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
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	for _, name := range names {
		pid, ok := tempWriter(name)
		if !ok || !processGone(pid) {
			continue
		}
		path := filepath.Join(dir, name)
		fi, err := os.Lstat(path)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if uid, me, ok := owner(fi); ok && uid != me {
			continue
		}
		os.Remove(path)
	}
}

// tempWriter is the writer's pid in a name newTemp made.
func tempWriter(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, tempPrefix)
	if !ok {
		return 0, false
	}
	rest, _, ok = cutLast(rest, "-")
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
