package trustdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrUntrusted is matched by every [*Error].
var ErrUntrusted = errors.New("untrusted path")

// Problem is what is wrong with a path.
type Problem int

const (
	// NotDir: a directory was wanted.
	NotDir Problem = iota + 1
	// NotRegular: a regular file was wanted.
	NotRegular
	// Owned: owned by someone other than the user or root.
	Owned
	// LinkOwned: a symbolic link owned by someone other than the user or
	// root, who can point it elsewhere.
	LinkOwned
	// Writable: writable by group or others, where code is loaded from.
	Writable
	// OpenToAll: writable by others without the sticky bit, so they can
	// replace its entries.
	OpenToAll
	// TooManyLinks: more symbolic links than the kernel follows.
	TooManyLinks
	// Replaced: the file opened is not the one judged.
	Replaced
)

// Role is how the path found wanting stands to the path judged.
type Role int

const (
	// Self: the path judged itself (or a link it is).
	Self Role = iota
	// Holds: a directory of the judged part above it (the .evalhost of
	// .evalhost/modules), held to the same rule.
	Holds
	// Above: a directory passed through, or a link followed, on the way.
	Above
)

// Error is a refused path.
type Error struct {
	Path string // the path judged
	At   string // where the problem is: Path, or a directory or link on the way
	Role Role   // how At stands to Path
	// Via is, when a symbolic link led elsewhere, the path as named from
	// Path (Path itself for Self, a directory of it for Holds) whose link
	// led to At, the real path the problem is with and a fix must change;
	// "" when At is named as Path names it.
	Via     string
	Problem Problem     // what is wrong with At
	Owner   int         // At's owner (Owned, LinkOwned)
	Mode    fs.FileMode // At's permission bits (Writable, OpenToAll)
	User    int         // the user judged for
	// For an owner (Owned, LinkOwned), when the judgement had a list of
	// safe directories: SafeFile is where it is read from ("" for a list
	// given), Listing the directory whose listing there would waive this
	// refusal ("" when none would), and Note why the list did not ("" when
	// it did not apply).
	SafeFile, Listing, Note string
}

func (e *Error) Error() string { return Shown(e.Path) + ": " + e.Reason() }

// Trust says how to trust At's owner instead, when listing a safe
// directory would: "if you trust uid N with DIR, list it as a safe
// directory: echo DIR >> FILE"; else "".
func (e *Error) Trust() string {
	if e.Listing == "" || e.SafeFile == "" {
		return ""
	}
	return fmt.Sprintf("if you trust uid %d with %s, list it as a safe directory: %s", e.Owner, Shown(e.Listing), e.Fix())
}

func (e *Error) Unwrap() error { return ErrUntrusted }

// Reason says what is wrong, with At as the subject ("it" when At is Path;
// "it leads to At, which" when a link led there), and why the safe
// directories did not waive it when they could have.
func (e *Error) Reason() string {
	if e.Note == "" {
		return e.reason()
	}
	return e.reason() + " (" + e.Note + ")"
}

func (e *Error) reason() string {
	subject, at := "it", Shown(e.At)
	switch e.Role {
	case Self:
		switch {
		case e.Problem == LinkOwned && e.At != e.Path:
			return fmt.Sprintf("it leads through the symbolic link %s, owned by uid %d, who can point it elsewhere", at, e.Owner)
		case e.Via != "" && e.Problem != TooManyLinks:
			subject = "it leads to " + at + ", which"
		}
	case Holds:
		subject = "the directory " + at + " that holds it"
		switch {
		case e.Problem == LinkOwned:
			subject = "the symbolic link " + at + " that holds it"
		case e.Via != "" && e.Problem != TooManyLinks:
			subject = "the directory " + Shown(e.Via) + " that holds it leads to " + at + ", which"
		}
	case Above:
		subject = "the directory " + at + " above it"
		if e.Problem == LinkOwned {
			subject = "the symbolic link " + at + " on the way to it"
		}
	}
	switch e.Problem {
	case NotDir:
		return subject + " is not a directory"
	case NotRegular:
		return subject + " is not a regular file"
	case Owned:
		if e.Role == Above {
			return fmt.Sprintf("%s is owned by uid %d, who can replace what is in it", subject, e.Owner)
		}
		return fmt.Sprintf("%s is owned by uid %d, not by you (uid %d)", subject, e.Owner, e.User)
	case LinkOwned:
		if e.Role == Self {
			return fmt.Sprintf("it is a symbolic link owned by uid %d, who can point it elsewhere", e.Owner)
		}
		return fmt.Sprintf("%s is owned by uid %d, who can point it elsewhere", subject, e.Owner)
	case Writable:
		return fmt.Sprintf("%s is writable by %s (mode %04o)", subject, writers(e.Mode), e.Mode.Perm())
	case OpenToAll:
		if e.Role == Above {
			return fmt.Sprintf("%s is writable by everyone (mode %04o) without the sticky bit, so anyone can replace what is in it", subject, e.Mode.Perm())
		}
		return fmt.Sprintf("%s is writable by %s (mode %04o) without the sticky bit, so they can replace what is in it", subject, writers(e.Mode), e.Mode.Perm())
	case TooManyLinks:
		return subject + " goes through too many symbolic links"
	case Replaced:
		return subject + " is not the file evalhost checked (something was put in its place since)"
	}
	return subject + " cannot be trusted"
}

// Fix is the command that mends a mode problem, or for an owner the one
// that lists a safe directory that would waive it ([Error.Trust] says
// which); "" for any other (whether taking another user's files over, or
// trusting them, is right is the caller's to say).
func (e *Error) Fix() string {
	q := ShellQuote(e.At)
	switch {
	case (e.Problem == Owned || e.Problem == LinkOwned) && e.Listing != "" && e.SafeFile != "":
		// sh's echo (dash's, zsh's) reads \n in its argument as a newline,
		// and a name of another user's may hold one ("x\n*").
		echo := "echo "
		if strings.ContainsRune(e.Listing, '\\') {
			echo = `printf '%s\n' `
		}
		return echo + ShellQuote(e.Listing) + " >> " + ShellQuote(e.SafeFile)
	case e.Problem == Writable:
		return "chmod go-w " + q
	case e.Problem == OpenToAll && e.Role == Above:
		return "chmod o-w " + q
	case e.Problem == OpenToAll:
		return "chmod go-w " + q + " (or chmod +t " + q + ")"
	}
	return ""
}

func writers(m fs.FileMode) string {
	switch m.Perm() & 0o022 {
	case 0o022:
		return "group and others"
	case 0o020:
		return "group"
	}
	return "others"
}

// ID names a file by device and inode: what a path judged now can be held
// to when it is opened later.
type ID struct {
	Dev, Ino uint64
}

// Found is what a judged path resolved to.
type Found struct {
	Real string      // the path with every link resolved
	Info fs.FileInfo // its Lstat, taken when it was judged
}

// ID is the identity of what was judged; ok is false where files have none.
func (f Found) ID() (ID, bool) { return IDOf(f.Info) }

// Mark is what a judged file was, for [Opened] to hold the file opened
// later to.
type Mark struct {
	ID    ID
	HasID bool // false where files have none: the open file is judged alone
	// Owner is its owner when judged (-1 where files carry none): the
	// user, root, or one a safe directory let own it.
	Owner int
}

// Mark is what was judged, as [Opened] checks it.
func (f Found) Mark() Mark {
	m := Mark{Owner: -1}
	m.ID, m.HasID = f.ID()
	if uid, ok := Owner(f.Info); ok {
		m.Owner = uid
	}
	return m
}

// maxLinks is how many symbolic links a judgement follows, as Linux's
// MAXSYMLINKS.
const maxLinks = 40

// walker resolves names one at a time and judges each step.
type walker struct {
	path  string // what is judged, for errors
	me    int
	links int
	safe  *Safe  // the user's safe directories; nil for none
	base  string // where the judgement started (CodeDir's base), for advice
	kept  int    // an owner trusted as it was when judged (Opened); -1 none
}

// geteuid is the user judged for; tests pretend to be someone else.
var geteuid = os.Geteuid

func newWalker(path string, safe *Safe) *walker {
	return &walker{path: path, me: geteuid(), safe: safe, kept: -1}
}

func (w *walker) fail(at string, role Role, p Problem, fi fs.FileInfo) *Error {
	e := &Error{Path: w.path, At: at, Role: role, Problem: p, User: w.me}
	if fi != nil {
		e.Owner, _ = Owner(fi)
		e.Mode = fi.Mode().Perm()
	}
	return e
}

// trusted reports whether fi's owner is the user or root (or unknown), or
// one the safe directories let own what is at p (its real location; onWay
// for a directory passed through).
func (w *walker) trusted(p string, fi fs.FileInfo, onWay bool) bool {
	uid, ok := Owner(fi)
	return !ok || uid == w.me || uid == 0 || uid == w.kept || w.safe != nil && w.safe.waives(p, uid, onWay)
}

// owned refuses at (whose real location is real) for its owner, with the
// safe directories' advice.
func (w *walker) owned(at, real string, role Role, p Problem, fi fs.FileInfo) *Error {
	e := w.fail(at, role, p, fi)
	if w.safe != nil {
		e.SafeFile = w.safe.File()
		e.Listing, e.Note = w.safe.advice(real, e.Owner, fi.IsDir(), p == LinkOwned, w.base)
	}
	return e
}

// name resolves one name in dir (a real path already passed), following a
// link there, which must be trusted, through its target; it returns the
// real path and the Lstat of what the name ends at. role is the name's, for
// a link's refusal.
func (w *walker) name(dir, name string, role Role) (string, fs.FileInfo, error) {
	p := dir
	switch name {
	case "", ".":
	case "..":
		p = filepath.Dir(dir) // dir is real, so its parent is too
	default:
		p = filepath.Join(dir, name)
	}
	fi, err := os.Lstat(p)
	if err != nil {
		return "", nil, err
	}
	if fi.Mode()&fs.ModeSymlink == 0 {
		return p, fi, nil
	}
	if !w.trusted(p, fi, false) {
		return "", nil, w.owned(p, p, role, LinkOwned, fi)
	}
	if w.links++; w.links > maxLinks {
		return "", nil, w.fail(p, role, TooManyLinks, nil)
	}
	target, err := os.Readlink(p)
	if err != nil {
		return "", nil, err
	}
	from := dir
	if filepath.IsAbs(target) {
		from, target = rootOf(target)
	}
	return w.rel(from, target, role)
}

// rel resolves rel from dir: every name but the last must end at a
// directory, judged as one passed through; the last is returned unjudged.
func (w *walker) rel(dir, rel string, role Role) (string, fs.FileInfo, error) {
	names := strings.Split(filepath.ToSlash(rel), "/")
	var fi fs.FileInfo
	var err error
	for i, n := range names {
		r := role
		if i < len(names)-1 {
			r = Above
		}
		if dir, fi, err = w.name(dir, n, r); err != nil {
			return "", nil, err
		}
		if i < len(names)-1 {
			if err := w.passed(dir, fi); err != nil {
				return "", nil, err
			}
		}
	}
	return dir, fi, nil
}

// passed judges a directory the way goes through.
func (w *walker) passed(dir string, fi fs.FileInfo) error {
	switch {
	case !fi.IsDir():
		return w.fail(dir, Above, NotDir, fi)
	case !w.trusted(dir, fi, true):
		return w.owned(dir, dir, Above, Owned, fi)
	case fi.Mode().Perm()&0o002 != 0 && fi.Mode()&fs.ModeSticky == 0:
		return w.fail(dir, Above, OpenToAll, fi)
	}
	return nil
}

// code judges a directory or file code is loaded from, at p as named for
// errors, real where it is; via is the path whose link led to p ("" for
// none).
func (w *walker) code(p, via, real string, fi fs.FileInfo, role Role, dir bool) error {
	if e := w.codeProblem(p, real, fi, role, dir); e != nil {
		e.Via = via
		return e
	}
	return nil
}

func (w *walker) codeProblem(p, real string, fi fs.FileInfo, role Role, dir bool) *Error {
	switch {
	case dir && !fi.IsDir():
		return w.fail(p, role, NotDir, fi)
	case !dir && !fi.Mode().IsRegular():
		return w.fail(p, role, NotRegular, fi)
	case !w.trusted(real, fi, false):
		return w.owned(p, real, role, Owned, fi)
	case fi.Mode().Perm()&0o022 != 0:
		return w.fail(p, role, Writable, fi)
	}
	return nil
}

// rootOf splits an absolute path into its root and the rest.
func rootOf(abs string) (root, rest string) {
	vol := filepath.VolumeName(abs)
	return vol + string(filepath.Separator), strings.TrimLeft(abs[len(vol):], `/\`)
}

// start makes path absolute and walks to it, judging the way; the end is
// returned unjudged (a link there judged as role and followed).
func (w *walker) start(path string, role Role) (string, fs.FileInfo, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", nil, err
	}
	root, rest := rootOf(abs)
	if rest == "" {
		fi, err := os.Lstat(root)
		return root, fi, err
	}
	return w.rel(root, rest, role)
}

// step resolves one name as [walker.name] does and says where a problem
// with what it ends at is best named (at): the path as given, or the real
// one when a link led elsewhere (where a chown or chmod must go), and then
// the path given as via ("" when no link did).
func (w *walker) step(dir, name, given string, role Role) (real string, fi fs.FileInfo, at, via string, err error) {
	before := w.links
	real, fi, err = w.name(dir, name, role)
	if w.links != before {
		return real, fi, real, given, err
	}
	return real, fi, given, "", err
}

// Way judges the way to path (every directory passed through and every
// link followed, path itself too when it is a link) and returns what path
// resolves to, for the caller to judge.
func Way(path string) (Found, error) {
	w := newWalker(path, nil)
	real, fi, err := w.start(path, Self)
	if err != nil {
		return Found{}, err
	}
	return Found{Real: real, Info: fi}, nil
}

// CodeDir judges base/rel, a directory code is run from. The way to base
// and base itself are passed through; every directory rel names (and the
// real one a link among them points to) must be owned by the user or root
// and writable by no one else. safe (nil for none) are the user's safe
// directories, which may let another user own some of it.
func CodeDir(base, rel string, safe *Safe) (Found, error) {
	path := filepath.Join(base, rel)
	w := newWalker(path, safe)
	w.base = base
	dir, fi, err := w.start(base, Above)
	if err != nil {
		return Found{}, err
	}
	if err := w.passed(dir, fi); err != nil {
		return Found{}, err
	}
	names := strings.Split(filepath.ToSlash(filepath.Clean(rel)), "/")
	for i, n := range names {
		role := Holds
		if i == len(names)-1 {
			role = Self
		}
		var via string
		at := filepath.Join(base, filepath.Join(names[:i+1]...))
		if dir, fi, at, via, err = w.step(dir, n, at, role); err != nil {
			return Found{}, err
		}
		if err := w.code(at, via, dir, fi, role, true); err != nil {
			return Found{}, err
		}
	}
	return Found{Real: dir, Info: fi}, nil
}

// CodeFile judges dir/name, a file of code in dir, a directory [CodeDir]
// judged (dir is its Real path): a regular file owned by the user or root
// and writable by no one else, a link to it judged on its way; safe as
// for CodeDir.
func CodeFile(dir, name string, safe *Safe) (Found, error) {
	path := filepath.Join(dir, name)
	w := newWalker(path, safe)
	real, fi, at, via, err := w.step(dir, name, path, Self)
	if err != nil {
		return Found{}, err
	}
	if err := w.code(at, via, real, fi, Self, false); err != nil {
		return Found{}, err
	}
	return Found{Real: real, Info: fi}, nil
}

// CodeDirIn judges dir/name, a directory of code in dir, a directory
// [CodeDir] judged (dir is its Real path), as CodeDir judges the last
// directory rel names, without judging the way to dir again; safe as for
// CodeDir.
func CodeDirIn(dir, name string, safe *Safe) (Found, error) {
	path := filepath.Join(dir, name)
	w := newWalker(path, safe)
	real, fi, at, via, err := w.step(dir, name, path, Self)
	if err != nil {
		return Found{}, err
	}
	if err := w.code(at, via, real, fi, Self, true); err != nil {
		return Found{}, err
	}
	return Found{Real: real, Info: fi}, nil
}

// Opened judges fi, the Stat of a file of code opened at path after
// [CodeFile] judged it ([Found.Mark]): it must be that file, and still a
// regular file that no one else may write, owned by the user, root or
// whom it was owned by when judged (a safe directory let them). Read from
// the open file, the code is then the code judged.
func Opened(path string, fi fs.FileInfo, m Mark) error {
	w := newWalker(path, nil)
	if m.HasID {
		w.kept = m.Owner // of the file judged, checked below
	}
	if err := w.code(path, "", path, fi, Self, false); err != nil {
		return err
	}
	if got, ok := IDOf(fi); m.HasID && (!ok || got != m.ID) {
		return w.fail(path, Self, Replaced, fi)
	}
	return nil
}

// MakeIn judges the directory path is to be made in (path's parent), as
// [WriteDir] judges it once path is made: a directory passed through,
// owned by the user or root, that everyone may write only with the
// sticky bit, on a way no one else controls. A refusal names path, the
// parent as "above it". It returns what the parent resolves to; a parent
// that is missing is an error matching fs.ErrNotExist.
func MakeIn(path string) (Found, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Found{}, err
	}
	w := newWalker(path, nil)
	dir, fi, err := w.start(filepath.Dir(abs), Above)
	if err != nil {
		return Found{}, err
	}
	if err := w.passed(dir, fi); err != nil {
		return Found{}, err
	}
	return Found{Real: dir, Info: fi}, nil
}

// WriteDir judges dir, a directory the user's files are created in: the
// way to it, and dir itself, a directory owned by the user or root that
// others may write only with the sticky bit.
func WriteDir(dir string) (Found, error) {
	w := newWalker(dir, nil)
	real, fi, err := w.start(dir, Self)
	if err != nil {
		return Found{}, err
	}
	at, via := dir, ""
	if w.links > 0 {
		at, via = real, dir
	}
	var p Problem
	switch {
	case !fi.IsDir():
		p = NotDir
	case !w.trusted(real, fi, false):
		p = Owned
	case fi.Mode().Perm()&0o022 != 0 && fi.Mode()&fs.ModeSticky == 0:
		p = OpenToAll
	default:
		return Found{Real: real, Info: fi}, nil
	}
	e := w.fail(at, Self, p, fi)
	e.Via = via
	return Found{}, e
}
