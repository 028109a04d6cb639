package config

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// checkAncestors refuses a home whose place another user controls: anyone
// who may rename entries in a directory above it (its owner, when that is
// neither the user nor root; everyone, when it is world-writable without
// the sticky bit) can move the checked home aside and put their own, with
// a runner cache or modules of their making, in its place. A symbolic link
// on the way is judged by its owner, who may point it elsewhere; the
// directories of the resolved path are checked too. Group-writable
// directories are let through: a shared project directory is common, and
// its group is trusted with the project's code anyway.
func checkAncestors(home string) error {
	paths := []string{home}
	if real, err := filepath.EvalSymlinks(home); err == nil && real != home {
		paths = append(paths, real)
	}
	for _, p := range paths {
		if err := checkLink(home, p); err != nil {
			return err
		}
		for dir := filepath.Dir(p); ; dir = filepath.Dir(dir) {
			if err := checkAncestor(home, dir); err != nil {
				return err
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	return nil
}

// checkLink refuses a home that is a symbolic link another user owns.
func checkLink(home, p string) error {
	fi, err := os.Lstat(p)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return nil // CheckDir has judged what is there
	}
	if owner, mine := ownedByMe(fi); !mine && owner != 0 {
		return &UnsafeDirError{What: "evalhost home", Path: home,
			Reason: fmt.Sprintf("it is a symbolic link owned by uid %d, who can point it elsewhere", owner),
			Fix:    "set EVALHOST_HOME to a directory of your own"}
	}
	return nil
}

func checkAncestor(home, dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("evalhost home %s: %w", home, err)
	}
	owner, mine := ownedByMe(fi)
	if !mine && owner != 0 {
		kind := "the directory"
		if fi.Mode()&fs.ModeSymlink != 0 {
			kind = "the symbolic link"
		}
		return &UnsafeDirError{What: "evalhost home", Path: home,
			Reason: fmt.Sprintf("%s %s above it is owned by uid %d, who can replace what is in it", kind, dir, owner),
			Fix:    "set EVALHOST_HOME to a directory under one of your own"}
	}
	if fi.IsDir() && fi.Mode().Perm()&0o002 != 0 && fi.Mode()&fs.ModeSticky == 0 {
		return &UnsafeDirError{What: "evalhost home", Path: home,
			Reason: fmt.Sprintf("the directory %s above it is writable by everyone (mode %04o) without the sticky bit, so anyone can replace what is in it", dir, fi.Mode().Perm()),
			Fix:    fmt.Sprintf("run: chmod o-w %s, or set EVALHOST_HOME to a directory under one of your own", dir)}
	}
	return nil
}
