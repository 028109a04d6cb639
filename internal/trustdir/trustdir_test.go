package trustdir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// nobody is the uid the tests give what "another user" owns; changing an
// owner needs root (CI runs as root; elsewhere these tests skip).
const nobody = 65534

// pretend is a uid the tests judge for instead of their own, so that a
// file root owns (all the tests make, as root) is root's and not the
// user's: one that pretend owns is the user's.
const pretend = 4242

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("changing a file's owner needs root")
	}
}

// as judges for uid for the rest of the test.
func as(t *testing.T, uid int) {
	old := geteuid
	geteuid = func() int { return uid }
	t.Cleanup(func() { geteuid = old })
}

func mkdir(t *testing.T, path string, mode fs.FileMode, uid int) string {
	t.Helper()
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
	own(t, path, mode, uid)
	return path
}

func own(t *testing.T, path string, mode fs.FileMode, uid int) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(path, uid, uid); err != nil {
		t.Fatal(err)
	}
}

func link(t *testing.T, target, path string, uid int) string {
	t.Helper()
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(path, uid, uid); err != nil {
		t.Fatal(err)
	}
	return path
}

func file(t *testing.T, path string, mode fs.FileMode, uid int) string {
	t.Helper()
	if err := os.WriteFile(path, []byte("X = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	own(t, path, mode, uid)
	return path
}

// want is a refusal: where (relative to the test's directory, "" for none)
// and what.
type want struct {
	at      string
	role    Role
	problem Problem
	text    string // in Error()
}

func check(t *testing.T, root string, err error, w *want) {
	t.Helper()
	if w == nil {
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		return
	}
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrUntrusted) {
		t.Fatalf("got %v, want a refusal of %s: %s", err, w.at, w.text)
	}
	if at := filepath.Join(root, w.at); e.At != at || e.Role != w.role || e.Problem != w.problem {
		t.Errorf("refusal at %s (role %d, problem %d), want at %s (role %d, problem %d): %v", e.At, e.Role, e.Problem, at, w.role, w.problem, err)
	}
	if !strings.Contains(err.Error(), w.text) {
		t.Errorf("error %q lacks %q", err, w.text)
	}
}

// TestCodeDir: the project modules dir is refused where anyone but the user
// and root could change what runs from it: .evalhost or modules of another
// user's, or writable by others, a link of another user's anywhere on the
// way, a directory above either of them (or above a link's target) that
// another user owns or everyone may write without the sticky bit.
func TestCodeDir(t *testing.T) {
	needRoot(t)
	tests := []struct {
		name  string
		setup func(t *testing.T, base string)
		want  *want
	}{
		{"own dirs", func(t *testing.T, base string) {
			mkdir(t, filepath.Join(base, ".evalhost", "modules"), 0o755, pretend)
			own(t, filepath.Join(base, ".evalhost"), 0o700, pretend)
		}, nil},
		{"root's dirs, closed to others", func(t *testing.T, base string) {
			mkdir(t, filepath.Join(base, ".evalhost", "modules"), 0o755, 0)
		}, nil},
		{".evalhost of another user", func(t *testing.T, base string) {
			mkdir(t, filepath.Join(base, ".evalhost", "modules"), 0o755, pretend)
			own(t, filepath.Join(base, ".evalhost"), 0o755, nobody)
		}, &want{"base/.evalhost", Holds, Owned, "the directory " + "%ROOT%/base/.evalhost that holds it is owned by uid 65534, not by you (uid 4242)"}},
		{"modules of another user", func(t *testing.T, base string) {
			mkdir(t, filepath.Join(base, ".evalhost", "modules"), 0o755, nobody)
			own(t, filepath.Join(base, ".evalhost"), 0o755, pretend)
		}, &want{"base/.evalhost/modules", Self, Owned, "it is owned by uid 65534"}},
		{"modules group-writable", func(t *testing.T, base string) {
			mkdir(t, filepath.Join(base, ".evalhost", "modules"), 0o775, pretend)
			own(t, filepath.Join(base, ".evalhost"), 0o755, pretend)
		}, &want{"base/.evalhost/modules", Self, Writable, "it is writable by group (mode 0775)"}},
		{"root's modules writable by others", func(t *testing.T, base string) {
			mkdir(t, filepath.Join(base, ".evalhost", "modules"), 0o777|fs.ModeSticky, 0)
		}, &want{"base/.evalhost/modules", Self, Writable, "writable by group and others (mode 0777)"}},
		{".evalhost writable by others", func(t *testing.T, base string) {
			mkdir(t, filepath.Join(base, ".evalhost", "modules"), 0o755, pretend)
			own(t, filepath.Join(base, ".evalhost"), 0o757, pretend)
		}, &want{"base/.evalhost", Holds, Writable, "that holds it is writable by others (mode 0757)"}},
		// The tester's case: another user's .evalhost in a sticky /tmp,
		// its modules a link to a package root owns.
		{"another user's link to root's code", func(t *testing.T, base string) {
			own(t, base, 0o777|fs.ModeSticky, 0)
			stdlib := mkdir(t, filepath.Join(filepath.Dir(base), "usr", "http"), 0o755, 0)
			mkdir(t, filepath.Join(base, ".evalhost"), 0o755, nobody)
			link(t, stdlib, filepath.Join(base, ".evalhost", "modules"), nobody)
		}, &want{"base/.evalhost", Holds, Owned, "owned by uid 65534"}},
		{"modules a link of another user's", func(t *testing.T, base string) {
			mine := mkdir(t, filepath.Join(filepath.Dir(base), "mine"), 0o755, pretend)
			mkdir(t, filepath.Join(base, ".evalhost"), 0o755, pretend)
			link(t, mine, filepath.Join(base, ".evalhost", "modules"), nobody)
		}, &want{"base/.evalhost/modules", Self, LinkOwned, "it is a symbolic link owned by uid 65534, who can point it elsewhere"}},
		{"own link to root's code", func(t *testing.T, base string) {
			stdlib := mkdir(t, filepath.Join(filepath.Dir(base), "usr", "http"), 0o755, 0)
			mkdir(t, filepath.Join(base, ".evalhost"), 0o755, pretend)
			link(t, stdlib, filepath.Join(base, ".evalhost", "modules"), pretend)
		}, nil},
		{"own link to another user's dir", func(t *testing.T, base string) {
			theirs := mkdir(t, filepath.Join(filepath.Dir(base), "theirs"), 0o755, nobody)
			mkdir(t, filepath.Join(base, ".evalhost"), 0o755, pretend)
			link(t, theirs, filepath.Join(base, ".evalhost", "modules"), pretend)
		}, &want{"theirs", Self, Owned, "modules: it leads to %ROOT%/theirs, which is owned by uid 65534"}},
		{"own link to a dir in another user's", func(t *testing.T, base string) {
			theirs := mkdir(t, filepath.Join(filepath.Dir(base), "theirs"), 0o755, nobody)
			mine := mkdir(t, filepath.Join(theirs, "mods"), 0o755, pretend)
			mkdir(t, filepath.Join(base, ".evalhost"), 0o755, pretend)
			link(t, mine, filepath.Join(base, ".evalhost", "modules"), pretend)
		}, &want{"theirs", Above, Owned, "the directory %ROOT%/theirs above it is owned by uid 65534, who can replace what is in it"}},
		{"own link through another user's link", func(t *testing.T, base string) {
			mine := mkdir(t, filepath.Join(filepath.Dir(base), "mine"), 0o755, pretend)
			sticky := mkdir(t, filepath.Join(filepath.Dir(base), "tmp"), 0o777|fs.ModeSticky, 0)
			hop := link(t, mine, filepath.Join(sticky, "hop"), nobody)
			mkdir(t, filepath.Join(base, ".evalhost"), 0o755, pretend)
			link(t, hop, filepath.Join(base, ".evalhost", "modules"), pretend)
		}, &want{"tmp/hop", Self, LinkOwned, "modules: it leads through the symbolic link %ROOT%/tmp/hop, owned by uid 65534"}},
		{"relative own link", func(t *testing.T, base string) {
			mkdir(t, filepath.Join(base, "shared", "mods"), 0o755, pretend)
			mkdir(t, filepath.Join(base, ".evalhost"), 0o755, pretend)
			link(t, "../shared/mods", filepath.Join(base, ".evalhost", "modules"), pretend)
		}, nil},
		{"project dir writable by everyone", func(t *testing.T, base string) {
			own(t, base, 0o777, pretend)
			mkdir(t, filepath.Join(base, ".evalhost", "modules"), 0o755, pretend)
			own(t, filepath.Join(base, ".evalhost"), 0o755, pretend)
		}, &want{"base", Above, OpenToAll, "above it is writable by everyone (mode 0777) without the sticky bit"}},
		{"project dir of another user", func(t *testing.T, base string) {
			own(t, base, 0o755, nobody)
			mkdir(t, filepath.Join(base, ".evalhost", "modules"), 0o755, pretend)
			own(t, filepath.Join(base, ".evalhost"), 0o755, pretend)
		}, &want{"base", Above, Owned, "above it is owned by uid 65534"}},
		{"project dir sticky and open", func(t *testing.T, base string) {
			own(t, base, 0o777|fs.ModeSticky, 0)
			mkdir(t, filepath.Join(base, ".evalhost", "modules"), 0o755, pretend)
			own(t, filepath.Join(base, ".evalhost"), 0o755, pretend)
		}, nil},
		{"project dir group-writable", func(t *testing.T, base string) {
			own(t, base, 0o775, pretend)
			mkdir(t, filepath.Join(base, ".evalhost", "modules"), 0o755, pretend)
			own(t, filepath.Join(base, ".evalhost"), 0o755, pretend)
		}, nil},
		{"modules a file", func(t *testing.T, base string) {
			mkdir(t, filepath.Join(base, ".evalhost"), 0o755, pretend)
			file(t, filepath.Join(base, ".evalhost", "modules"), 0o644, pretend)
		}, &want{"base/.evalhost/modules", Self, NotDir, "it is not a directory"}},
		{"link loop", func(t *testing.T, base string) {
			mkdir(t, filepath.Join(base, ".evalhost"), 0o755, pretend)
			link(t, "modules", filepath.Join(base, ".evalhost", "modules"), pretend)
		}, &want{"base/.evalhost/modules", Self, TooManyLinks, "too many symbolic links"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			as(t, pretend)
			root := t.TempDir()
			base := mkdir(t, filepath.Join(root, "base"), 0o755, pretend)
			tt.setup(t, base)
			got, err := CodeDir(base, filepath.Join(".evalhost", "modules"), nil)
			if tt.want != nil {
				tt.want.text = strings.ReplaceAll(tt.want.text, "%ROOT%", root)
			}
			check(t, root, err, tt.want)
			if err != nil {
				return
			}
			real, err := filepath.EvalSymlinks(filepath.Join(base, ".evalhost", "modules"))
			if err != nil {
				t.Fatal(err)
			}
			if got.Real != real {
				t.Errorf("Real = %s, want %s", got.Real, real)
			}
			fi, _ := os.Stat(real)
			if id, _ := got.ID(); id != mustID(t, fi) {
				t.Errorf("ID = %+v, want the directory's %+v", id, mustID(t, fi))
			}
		})
	}
}

func mustID(t *testing.T, fi fs.FileInfo) ID {
	t.Helper()
	id, ok := IDOf(fi)
	if !ok {
		t.Skip("no inodes here")
	}
	return id
}

func TestCodeDirMissing(t *testing.T) {
	base := t.TempDir()
	if _, err := CodeDir(base, filepath.Join(".evalhost", "modules"), nil); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("CodeDir of nothing = %v, want fs.ErrNotExist", err)
	}
}

// TestCodeFile: a module is run only when it is a regular file of the
// user's or root's that no one else may write, reached through links and
// directories no one else controls.
func TestCodeFile(t *testing.T) {
	needRoot(t)
	tests := []struct {
		name  string
		setup func(t *testing.T, root, dir string) string // the module's name in dir
		want  *want
	}{
		{"own file", func(t *testing.T, root, dir string) string {
			file(t, filepath.Join(dir, "m.py"), 0o644, pretend)
			return "m.py"
		}, nil},
		{"root's file", func(t *testing.T, root, dir string) string {
			file(t, filepath.Join(dir, "m.py"), 0o644, 0)
			return "m.py"
		}, nil},
		{"another user's file", func(t *testing.T, root, dir string) string {
			file(t, filepath.Join(dir, "m.py"), 0o644, nobody)
			return "m.py"
		}, &want{"mods/m.py", Self, Owned, "it is owned by uid 65534"}},
		{"group-writable", func(t *testing.T, root, dir string) string {
			file(t, filepath.Join(dir, "m.py"), 0o664, pretend)
			return "m.py"
		}, &want{"mods/m.py", Self, Writable, "writable by group (mode 0664)"}},
		{"world-writable", func(t *testing.T, root, dir string) string {
			file(t, filepath.Join(dir, "m.py"), 0o646, pretend)
			return "m.py"
		}, &want{"mods/m.py", Self, Writable, "writable by others (mode 0646)"}},
		{"a fifo", func(t *testing.T, root, dir string) string {
			if err := syscall.Mkfifo(filepath.Join(dir, "m.py"), 0o644); err != nil {
				t.Skip(err)
			}
			own(t, filepath.Join(dir, "m.py"), 0o644, pretend)
			return "m.py"
		}, &want{"mods/m.py", Self, NotRegular, "not a regular file"}},
		{"own link to an own file", func(t *testing.T, root, dir string) string {
			real := file(t, filepath.Join(mkdir(t, filepath.Join(root, "dotfiles"), 0o755, pretend), "m.py"), 0o644, pretend)
			link(t, real, filepath.Join(dir, "m.py"), pretend)
			return "m.py"
		}, nil},
		{"own link to root's file in another user's dir", func(t *testing.T, root, dir string) string {
			theirs := mkdir(t, filepath.Join(root, "theirs"), 0o755, nobody)
			link(t, file(t, filepath.Join(theirs, "server.py"), 0o644, 0), filepath.Join(dir, "m.py"), pretend)
			return "m.py"
		}, &want{"theirs", Above, Owned, "above it is owned by uid 65534"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			as(t, pretend)
			root := t.TempDir()
			dir := mkdir(t, filepath.Join(root, "mods"), 0o755, pretend)
			name := tt.setup(t, root, dir)
			got, err := CodeFile(dir, name, nil)
			check(t, root, err, tt.want)
			if err == nil {
				fi, _ := os.Stat(filepath.Join(dir, name))
				if id, _ := got.ID(); id != mustID(t, fi) {
					t.Errorf("ID = %+v, want the file's %+v", id, mustID(t, fi))
				}
			}
		})
	}
}

// TestWriteDir: a directory the user's files are written into may be
// shared only with the sticky bit, and must be the user's or root's.
func TestWriteDir(t *testing.T) {
	needRoot(t)
	tests := []struct {
		name  string
		setup func(t *testing.T, root string) string
		want  *want
	}{
		{"own", func(t *testing.T, root string) string { return mkdir(t, filepath.Join(root, "d"), 0o755, pretend) }, nil},
		{"own, sticky and open", func(t *testing.T, root string) string {
			return mkdir(t, filepath.Join(root, "d"), 0o777|fs.ModeSticky, pretend)
		}, nil},
		{"root's, sticky and open (/tmp)", func(t *testing.T, root string) string {
			return mkdir(t, filepath.Join(root, "d"), 0o777|fs.ModeSticky, 0)
		}, nil},
		{"own, open without sticky", func(t *testing.T, root string) string { return mkdir(t, filepath.Join(root, "d"), 0o777, pretend) },
			&want{"d", Self, OpenToAll, "it is writable by group and others (mode 0777) without the sticky bit"}},
		{"own, group-writable", func(t *testing.T, root string) string { return mkdir(t, filepath.Join(root, "d"), 0o775, pretend) },
			&want{"d", Self, OpenToAll, "writable by group (mode 0775) without the sticky bit"}},
		{"another user's", func(t *testing.T, root string) string { return mkdir(t, filepath.Join(root, "d"), 0o755, nobody) },
			&want{"d", Self, Owned, "it is owned by uid 65534, not by you (uid 4242)"}},
		{"another user's link", func(t *testing.T, root string) string {
			return link(t, mkdir(t, filepath.Join(root, "real"), 0o755, pretend), filepath.Join(root, "d"), nobody)
		}, &want{"d", Self, LinkOwned, "symbolic link owned by uid 65534"}},
		{"own link to another user's", func(t *testing.T, root string) string {
			return link(t, mkdir(t, filepath.Join(root, "real"), 0o755, nobody), filepath.Join(root, "d"), pretend)
		}, &want{"real", Self, Owned, "owned by uid 65534"}},
		{"under another user's", func(t *testing.T, root string) string {
			return mkdir(t, filepath.Join(mkdir(t, filepath.Join(root, "theirs"), 0o755, nobody), "d"), 0o755, pretend)
		}, &want{"theirs", Above, Owned, "above it is owned by uid 65534"}},
		{"a file", func(t *testing.T, root string) string { return file(t, filepath.Join(root, "d"), 0o644, pretend) },
			&want{"d", Self, NotDir, "not a directory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			as(t, pretend)
			root := t.TempDir()
			_, err := WriteDir(tt.setup(t, root))
			check(t, root, err, tt.want)
		})
	}
}

// TestMakeIn: the directory a path is to be made in is judged as WriteDir
// judges it once the path is made (passed through), and the refusal names
// the path: nothing is made where it would then be refused.
func TestMakeIn(t *testing.T) {
	needRoot(t)
	tests := []struct {
		name  string
		setup func(t *testing.T, root string) string // the path to make
		want  *want
	}{
		{"in own", func(t *testing.T, root string) string {
			return filepath.Join(mkdir(t, filepath.Join(root, "p"), 0o755, pretend), "d")
		}, nil},
		{"in own, group-writable", func(t *testing.T, root string) string {
			return filepath.Join(mkdir(t, filepath.Join(root, "p"), 0o775, pretend), "d")
		}, nil},
		{"in root's sticky and open (/tmp)", func(t *testing.T, root string) string {
			return filepath.Join(mkdir(t, filepath.Join(root, "p"), 0o777|fs.ModeSticky, 0), "d")
		}, nil},
		{"in own open without sticky", func(t *testing.T, root string) string {
			return filepath.Join(mkdir(t, filepath.Join(root, "p"), 0o777, pretend), "d")
		}, &want{"p", Above, OpenToAll, "the directory " + "%ROOT%/p above it is writable by everyone (mode 0777) without the sticky bit"}},
		{"in another user's", func(t *testing.T, root string) string {
			return filepath.Join(mkdir(t, filepath.Join(root, "p"), 0o755, nobody), "d")
		}, &want{"p", Above, Owned, "above it is owned by uid 65534"}},
		{"through another user's link", func(t *testing.T, root string) string {
			return filepath.Join(link(t, mkdir(t, filepath.Join(root, "real"), 0o755, pretend), filepath.Join(root, "p"), nobody), "d")
		}, &want{"p", Above, LinkOwned, "symbolic link %ROOT%/p on the way to it is owned by uid 65534"}},
		{"in a file", func(t *testing.T, root string) string {
			return filepath.Join(file(t, filepath.Join(root, "p"), 0o644, pretend), "d")
		},
			&want{"p", Above, NotDir, "not a directory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			as(t, pretend)
			root := t.TempDir()
			path := tt.setup(t, root)
			found, err := MakeIn(path)
			if tt.want != nil {
				tt.want.text = strings.ReplaceAll(tt.want.text, "%ROOT%", root)
				if err != nil && !strings.HasPrefix(err.Error(), path+": ") {
					t.Errorf("refusal %q does not name %s", err, path)
				}
			} else if found.Real != filepath.Dir(path) {
				t.Errorf("MakeIn(%s) found %q, want its parent", path, found.Real)
			}
			check(t, root, err, tt.want)
		})
	}
	as(t, pretend)
	if _, err := MakeIn(filepath.Join(t.TempDir(), "no", "d")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("MakeIn in a missing directory = %v, want fs.ErrNotExist", err)
	}
}

// TestWay: the way to a path is judged, its end is not.
func TestWay(t *testing.T) {
	needRoot(t)
	as(t, pretend)
	root := t.TempDir()
	theirs := mkdir(t, filepath.Join(root, "theirs"), 0o755, nobody)
	if got, err := Way(theirs); err != nil || got.Real != theirs {
		t.Errorf("Way(another user's dir) = %+v, %v; want it, unjudged", got, err)
	}
	_, err := Way(mkdir(t, filepath.Join(theirs, "home"), 0o700, pretend))
	check(t, root, err, &want{"theirs", Above, Owned, "above it is owned by uid 65534"})
}

func TestFix(t *testing.T) {
	for _, tt := range []struct {
		e    Error
		want string
	}{
		{Error{At: "/p/m", Role: Self, Problem: Writable}, "chmod go-w /p/m"},
		{Error{At: "/p", Role: Above, Problem: OpenToAll}, "chmod o-w /p"},
		{Error{At: "/p/it's", Role: Self, Problem: OpenToAll}, `chmod go-w '/p/it'\''s' (or chmod +t '/p/it'\''s')`},
		{Error{At: "/p/a\nb'\x1b[", Role: Self, Problem: Writable}, `chmod go-w $'/p/a\nb\'\x1b['`},
		{Error{At: "/p", Role: Self, Problem: Owned}, ""},
		{Error{At: "/p", Role: Self, Problem: LinkOwned}, ""},
		{Error{At: "/p", Role: Self, Problem: Owned, Listing: "/p", SafeFile: "/h/safe-directories"}, "echo /p >> /h/safe-directories"},
		{Error{At: "/p", Role: Self, Problem: Owned, Listing: `/p\n*`, SafeFile: "/h/safe-directories"}, `printf '%s\n' '/p\n*' >> /h/safe-directories`},
	} {
		if got := tt.e.Fix(); got != tt.want {
			t.Errorf("Fix of %+v = %q, want %q", tt.e, got, tt.want)
		}
	}
}

// TestOpened: a file of code opened after it was judged is the one judged
// and still safe, or it is refused.
func TestOpened(t *testing.T) {
	needRoot(t)
	as(t, pretend)
	dir := t.TempDir()
	path := file(t, filepath.Join(dir, "m.py"), 0o644, pretend)
	judged, err := CodeFile(dir, "m.py", nil)
	if err != nil {
		t.Fatal(err)
	}
	mark := judged.Mark()
	stat := func() fs.FileInfo {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	check(t, dir, Opened(path, stat(), mark), nil)
	own(t, path, 0o664, pretend)
	check(t, dir, Opened(path, stat(), mark), &want{"m.py", Self, Writable, "writable by group (mode 0664)"})
	// Another file in its place (renamed over it: a removed file's inode
	// may be reused at once, but only by whoever may write the directory).
	if err := os.Rename(file(t, filepath.Join(t.TempDir(), "other.py"), 0o644, pretend), path); err != nil {
		t.Fatal(err)
	}
	check(t, dir, Opened(path, stat(), mark), &want{"m.py", Self, Replaced, "it is not the file evalhost checked"})
	check(t, dir, Opened(path, stat(), Mark{}), nil)
}
