package trustdir

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode"
)

// Safe is the user's list of safe directories: project directories they
// trust though another user owns them, as git's safe.directory. A nil
// *Safe lists none. It is read, and each entry resolved, when a judgement
// first needs it (a path owned by someone other than the user and root),
// so a judgement of the user's own files costs nothing more.
type Safe struct {
	file string // where it is read from; "" for a list given
	once sync.Once
	list []safeEntry
	err  error
}

// safeEntry is one listed directory.
type safeEntry struct {
	text   string // as listed
	path   string // the directory, cleaned ("" for *)
	all    bool   // "*": every directory
	prefix bool   // "D/*": every directory under D, not D
	dir    string // path's real path, once resolved
	owner  int    // dir's owner, for an exact entry (-1 where files carry none)
	// unusable says why the entry waives nothing: dir is missing, not a
	// directory, or another user controls the way to it.
	unusable error
}

// SafeFile is the list in the file at path: one entry a line, blank lines
// and lines starting with # skipped. A missing file lists none. The file,
// and the way to it, are judged as code is ([CodeFile]): only the user (or
// root) may say whom the user trusts.
func SafeFile(path string) *Safe { return &Safe{file: path} }

// SafeList is a list of entries given (for Go programs and tests), checked
// now and resolved when first needed.
func SafeList(entries ...string) (*Safe, error) {
	s := &Safe{}
	for _, text := range entries {
		e, err := parseSafe(text)
		if err != nil {
			return nil, err
		}
		s.list = append(s.list, e)
	}
	return s, nil
}

// File is where the list is read from, "" for a list given.
func (s *Safe) File() string {
	if s == nil {
		return ""
	}
	return s.file
}

// Listed is an entry of a list as written, and why it waives nothing
// (nil when it may), or whom it trusts where.
type Listed struct {
	Entry    string
	Unusable error
	// Dir is the listed directory's real path ("" for *, or when
	// Unusable); Owner is whom an exact entry lets own it and what is
	// under it (-1 for D/* and *, which trust any owner, or where files
	// carry none).
	Dir   string
	Owner int
}

// Listed reads the list if it was not yet and returns its entries, or why
// it cannot be used (a relative entry, a file another user could write).
func (s *Safe) Listed() ([]Listed, error) {
	list, err := s.entries()
	out := make([]Listed, len(list))
	for i, e := range list {
		out[i] = Listed{Entry: e.text, Unusable: e.unusable, Dir: e.dir, Owner: e.owner}
		if e.unusable != nil {
			out[i].Dir, out[i].Owner = "", -1
		}
	}
	return out, err
}

// entries reads the list once, and resolves each entry where it is now.
func (s *Safe) entries() ([]safeEntry, error) {
	if s == nil {
		return nil, nil
	}
	s.once.Do(func() {
		if s.file != "" {
			s.list, s.err = readSafeFile(s.file)
		}
		s.resolve()
	})
	return s.list, s.err
}

// parseSafe checks one entry: "*", an absolute directory, or one followed
// by "/*".
func parseSafe(text string) (safeEntry, error) {
	e := safeEntry{text: text, owner: -1}
	if text == "*" {
		e.all = true
		return e, nil
	}
	p := text
	if rest, ok := strings.CutSuffix(text, "/*"); ok {
		p, e.prefix = rest, true
		if p == "" {
			p = "/"
		}
	}
	switch {
	case strings.TrimSpace(p) == "":
		return e, fmt.Errorf("an empty safe directory names no directory: write the directory's full path, or * for every directory")
	case !filepath.IsAbs(p):
		hint := ""
		if strings.HasPrefix(p, "~") {
			hint = " (~ is not expanded)"
		}
		return e, fmt.Errorf("safe directory %q is not an absolute path%s: write the directory's full path, as realpath prints it, or * for every directory", text, hint)
	}
	e.path = filepath.Clean(p)
	return e, nil
}

// maxSafeFile bounds the list file: a list of directories, not a data set.
const maxSafeFile = 1 << 20

// readSafeFile reads and checks the list in the file at path.
func readSafeFile(path string) ([]safeEntry, error) {
	data, err := readOwnFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	var e *Error
	switch {
	case errors.As(err, &e) && e.Fix() != "":
		return nil, fmt.Errorf("safe directories in %w; run: %s", err, e.Fix())
	case errors.As(err, &e):
		return nil, fmt.Errorf("safe directories in %w", err) // it names the path
	case err != nil:
		return nil, fmt.Errorf("safe directories %s: %w", path, err)
	}
	var list []safeEntry
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, maxSafeFile)
	for n := 1; sc.Scan(); n++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		e, err := parseSafe(text)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		list = append(list, e)
	}
	return list, sc.Err()
}

// readOwnFile reads a file only the user or root may have written: the
// way to it judged, the file a regular one of theirs that no one else may
// write, held to the file judged once open.
func readOwnFile(path string) ([]byte, error) {
	w := newWalker(path, nil)
	real, fi, err := w.start(path, Self)
	if err != nil {
		return nil, err
	}
	via := ""
	if w.links > 0 {
		via = path
	}
	if err := w.code(real, via, real, fi, Self, false); err != nil {
		return nil, err
	}
	f, err := openNoBlock(real)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ofi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := Opened(real, ofi, Found{Real: real, Info: fi}.Mark()); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSafeFile+1))
	if err == nil && len(data) > maxSafeFile {
		err = fmt.Errorf("larger than %d bytes", maxSafeFile)
	}
	return data, err
}

// resolve finds each entry's real directory and owner, and judges the way
// to it: a link on the way must be the user's or root's and no directory
// on it may be writable by everyone without the sticky bit, nor owned by
// anyone but the user, root or (for an exact entry) the listed directory's
// owner, who could otherwise be replaced by whoever controls the way.
func (s *Safe) resolve() {
	for i := range s.list {
		e := &s.list[i]
		if e.all {
			continue
		}
		real, err := filepath.EvalSymlinks(e.path)
		if err != nil {
			e.unusable = err
			continue
		}
		fi, err := os.Lstat(real)
		if err != nil {
			e.unusable = err
			continue
		}
		if !fi.IsDir() {
			e.unusable = fmt.Errorf("%s is not a directory", Shown(real))
			continue
		}
		e.dir = real
		if !e.prefix {
			if uid, ok := Owner(fi); ok {
				e.owner = uid
			}
		}
		// The way is judged with an exact entry alone listed, so that
		// directories of its owner's above it pass.
		var way *Safe
		if !e.prefix {
			way = &Safe{list: []safeEntry{*e}}
			way.once.Do(func() {}) // resolved
		}
		got, _, err := newWalker(e.path, way).start(e.path, Self)
		if err == nil && got != real {
			err = fmt.Errorf("%s changed while it was read", Shown(e.path))
		}
		if err == nil && !e.prefix {
			err = claimable(real)
		}
		if err != nil {
			e.unusable = err
		}
	}
}

// waives reports whether the list lets uid (neither the user nor root) own
// what is at p, a real location (its directory's real path and its name).
// onWay is true for a directory a judgement passes through, which an exact
// entry lets its owner own also above the listed directory.
func (s *Safe) waives(p string, uid int, onWay bool) bool {
	list, err := s.entries()
	if err != nil {
		return false
	}
	for _, e := range list {
		switch {
		case e.unusable != nil:
		case e.all:
			return true
		case e.prefix:
			if p != e.dir && within(p, e.dir) {
				return true
			}
		case uid == e.owner && (within(p, e.dir) || onWay && within(e.dir, p)):
			return true
		}
	}
	return false
}

// within reports whether p is dir or below it (both clean).
func within(p, dir string) bool {
	if p == dir {
		return true
	}
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return strings.HasPrefix(p, dir)
}

// advice is, for a path at real location p refused for its owner uid, the
// directory whose listing would waive it (listing) or, when listing cannot
// help, why (note): the list could not be read, an entry that would cover
// p waives nothing, or covers it for another owner. base is the directory
// the judgement started from ("" for none): the project, the narrowest
// listing that helps when its owner is uid.
func (s *Safe) advice(p string, uid int, isDir, isLink bool, base string) (listing, note string) {
	list, err := s.entries()
	if err != nil {
		return "", err.Error()
	}
	for _, e := range list {
		switch {
		case e.all:
		case e.unusable != nil:
			if within(p, e.path) || within(e.path, p) || e.dir != "" && within(p, e.dir) {
				return "", fmt.Sprintf("the safe directory %s waives nothing: %v", Shown(e.text), e.unusable)
			}
		case !e.prefix && within(p, e.dir):
			return "", fmt.Sprintf("the safe directory %s is uid %d's, so it trusts uid %d there, not uid %d", Shown(e.text), e.owner, e.owner, uid)
		}
	}
	if base != "" {
		if b, err := filepath.EvalSymlinks(base); err == nil && (within(p, b) || !isLink && within(b, p)) {
			if fi, err := os.Lstat(b); err == nil {
				if o, ok := Owner(fi); ok && o == uid {
					return listingOf(b)
				}
			}
		}
	}
	if isDir && !isLink {
		return listingOf(p)
	}
	return "", ""
}

// listingOf is dir as the listing advised, or why it cannot be: its name
// (another user's to choose) must read back from a line of the list as
// dir and nothing more, so a newline or a trailing "/*" in it cannot make
// the advised line trust more than dir; and no one else may be able to
// take dir's place ([claimable]).
func listingOf(dir string) (listing, note string) {
	if strings.TrimSpace(dir) != dir || strings.HasSuffix(dir, "/*") || strings.ContainsFunc(dir, unicode.IsControl) {
		return "", fmt.Sprintf("%q cannot be listed as a safe directory: a line of the list is one directory, trimmed of spaces, and D/* means what is under D", dir)
	}
	if err := claimable(dir); err != nil {
		return "", fmt.Sprintf("listing it would not help: %v", err)
	}
	return dir, ""
}

// claimable says whether an exact entry for dir (a real path) could come
// to trust someone the user never chose: it trusts whoever owns dir when
// it is read, so dir, or a directory of another user's above it, must not
// sit in a directory everyone may write (/tmp, sticky or not), where once
// its owner removes it anyone may make it again as theirs.
func claimable(dir string) error {
	me := geteuid()
	for d := dir; ; {
		fi, err := os.Lstat(d)
		if err != nil {
			return err
		}
		if uid, ok := Owner(fi); !ok || uid == me || uid == 0 {
			return nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return nil
		}
		pfi, err := os.Lstat(parent)
		if err != nil {
			return err
		}
		if pfi.Mode().Perm()&0o002 != 0 {
			uid, _ := Owner(fi)
			return fmt.Errorf("%s is uid %d's in %s, which everyone may write: were it removed, whoever made it again would own it", Shown(d), uid, Shown(parent))
		}
		d = parent
	}
}
