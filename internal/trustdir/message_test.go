package trustdir

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestLinkMessage: a refusal reached through a symbolic link names the
// path as given and the target the reason is about, and its fix (a chmod,
// a safe directory to list) names the target, which is what must change:
// "m.py: it is owned by uid 65534" of a link of the user's own sent them
// to chown their link.
func TestLinkMessage(t *testing.T) {
	needRoot(t)
	cases := []struct {
		name  string
		judge func(t *testing.T, root string) error
		want  string // Error(); %ROOT% is the test's directory
		fix   string // Fix()
		trust string // Trust()
	}{
		{"a file of another user's, no link", func(t *testing.T, root string) error {
			file(t, filepath.Join(root, "mods", "m.py"), 0o644, nobody)
			_, err := CodeFile(filepath.Join(root, "mods"), "m.py", nil)
			return err
		}, "%ROOT%/mods/m.py: it is owned by uid 65534, not by you (uid 4242)", "", ""},
		{"a link to another user's file", func(t *testing.T, root string) error {
			theirs := file(t, filepath.Join(root, "theirs.py"), 0o644, nobody)
			link(t, theirs, filepath.Join(root, "mods", "m.py"), pretend)
			_, err := CodeFile(filepath.Join(root, "mods"), "m.py", nil)
			return err
		}, "%ROOT%/mods/m.py: it leads to %ROOT%/theirs.py, which is owned by uid 65534, not by you (uid 4242)", "", ""},
		{"a link to a file others may write", func(t *testing.T, root string) error {
			open := file(t, filepath.Join(root, "open.py"), 0o666, pretend)
			link(t, open, filepath.Join(root, "mods", "m.py"), pretend)
			_, err := CodeFile(filepath.Join(root, "mods"), "m.py", nil)
			return err
		}, "%ROOT%/mods/m.py: it leads to %ROOT%/open.py, which is writable by group and others (mode 0666)", "chmod go-w %ROOT%/open.py", ""},
		{"a link to a link of another user's", func(t *testing.T, root string) error {
			hop := link(t, file(t, filepath.Join(root, "real.py"), 0o644, pretend), filepath.Join(root, "hop.py"), nobody)
			link(t, hop, filepath.Join(root, "mods", "m.py"), pretend)
			_, err := CodeFile(filepath.Join(root, "mods"), "m.py", nil)
			return err
		}, "%ROOT%/mods/m.py: it leads through the symbolic link %ROOT%/hop.py, owned by uid 65534, who can point it elsewhere", "", ""},
		{"a link of another user's", func(t *testing.T, root string) error {
			link(t, file(t, filepath.Join(root, "real.py"), 0o644, pretend), filepath.Join(root, "mods", "m.py"), nobody)
			_, err := CodeFile(filepath.Join(root, "mods"), "m.py", nil)
			return err
		}, "%ROOT%/mods/m.py: it is a symbolic link owned by uid 65534, who can point it elsewhere", "", ""},
		{"a directory linking to another user's, safe directories read", func(t *testing.T, root string) error {
			theirs := mkdir(t, filepath.Join(root, "theirs"), 0o755, nobody)
			link(t, theirs, filepath.Join(root, "mods", "lib"), pretend)
			_, err := CodeDir(filepath.Join(root, "mods"), "lib", SafeFile(filepath.Join(root, "safe-directories")))
			return err
		}, "%ROOT%/mods/lib: it leads to %ROOT%/theirs, which is owned by uid 65534, not by you (uid 4242)",
			"echo %ROOT%/theirs >> %ROOT%/safe-directories", "if you trust uid 65534 with %ROOT%/theirs, list it as a safe directory: echo %ROOT%/theirs >> %ROOT%/safe-directories"},
		{"a directory holding it linking to another user's", func(t *testing.T, root string) error {
			theirs := mkdir(t, filepath.Join(root, "theirs"), 0o755, nobody)
			mkdir(t, filepath.Join(theirs, "sub"), 0o755, pretend)
			link(t, theirs, filepath.Join(root, "mods", "lib"), pretend)
			_, err := CodeDir(filepath.Join(root, "mods"), filepath.Join("lib", "sub"), nil)
			return err
		}, "%ROOT%/mods/lib/sub: the directory %ROOT%/mods/lib that holds it leads to %ROOT%/theirs, which is owned by uid 65534, not by you (uid 4242)", "", ""},
		{"a directory holding it linking to one others may write", func(t *testing.T, root string) error {
			open := mkdir(t, filepath.Join(root, "open"), 0o775, pretend)
			mkdir(t, filepath.Join(open, "sub"), 0o755, pretend)
			link(t, open, filepath.Join(root, "mods", "lib"), pretend)
			_, err := CodeDir(filepath.Join(root, "mods"), filepath.Join("lib", "sub"), nil)
			return err
		}, "%ROOT%/mods/lib/sub: the directory %ROOT%/mods/lib that holds it leads to %ROOT%/open, which is writable by group (mode 0775)", "chmod go-w %ROOT%/open", ""},
		{"a link to a directory, where a file is wanted", func(t *testing.T, root string) error {
			link(t, mkdir(t, filepath.Join(root, "dir.py"), 0o755, pretend), filepath.Join(root, "mods", "m.py"), pretend)
			_, err := CodeFile(filepath.Join(root, "mods"), "m.py", nil)
			return err
		}, "%ROOT%/mods/m.py: it leads to %ROOT%/dir.py, which is not a regular file", "", ""},
		{"a link in a loop", func(t *testing.T, root string) error {
			link(t, "m.py", filepath.Join(root, "mods", "m.py"), pretend)
			_, err := CodeFile(filepath.Join(root, "mods"), "m.py", nil)
			return err
		}, "%ROOT%/mods/m.py: it goes through too many symbolic links", "", ""},
		{"a directory written to, linking to another user's", func(t *testing.T, root string) error {
			theirs := mkdir(t, filepath.Join(root, "theirs"), 0o755, nobody)
			_, err := WriteDir(link(t, theirs, filepath.Join(root, "mods", "out"), pretend))
			return err
		}, "%ROOT%/mods/out: it leads to %ROOT%/theirs, which is owned by uid 65534, not by you (uid 4242)", "", ""},
		{"a directory written to, linking to one open to all", func(t *testing.T, root string) error {
			open := mkdir(t, filepath.Join(root, "open"), 0o777, pretend)
			_, err := WriteDir(link(t, open, filepath.Join(root, "mods", "out"), pretend))
			return err
		}, "%ROOT%/mods/out: it leads to %ROOT%/open, which is writable by group and others (mode 0777) without the sticky bit, so they can replace what is in it",
			"chmod go-w %ROOT%/open (or chmod +t %ROOT%/open)", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			as(t, pretend)
			root := t.TempDir()
			mkdir(t, filepath.Join(root, "mods"), 0o755, pretend)
			err := tc.judge(t, root)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want a refusal", err)
			}
			subst := strings.NewReplacer("%ROOT%", root)
			if got, want := err.Error(), subst.Replace(tc.want); got != want {
				t.Errorf("Error() =\n  %s\nwant\n  %s", got, want)
			}
			if got, want := e.Fix(), subst.Replace(tc.fix); got != want {
				t.Errorf("Fix() = %q, want %q", got, want)
			}
			if got, want := e.Trust(), subst.Replace(tc.trust); got != want {
				t.Errorf("Trust() = %q, want %q", got, want)
			}
		})
	}
}

// TestLinkMessageShown: the path given and the target are both printed
// as Shown prints them.
func TestLinkMessageShown(t *testing.T) {
	e := &Error{Path: "/p/m\n.py", At: "/q/\x1b[2Kx.py", Via: "/p/m\n.py", Role: Self, Problem: Owned, Owner: nobody, User: pretend, Mode: fs.FileMode(0o644)}
	want := `"/p/m\n.py": it leads to "/q/\x1b[2Kx.py", which is owned by uid 65534, not by you (uid 4242)`
	if got := e.Error(); got != want {
		t.Errorf("Error() = %s, want %s", got, want)
	}
	e = &Error{Path: "/p/lib/sub", At: "/q/\nx", Via: "/p/\x1blib", Role: Holds, Problem: Writable, User: pretend, Mode: fs.FileMode(0o775)}
	want = `/p/lib/sub: the directory "/p/\x1blib" that holds it leads to "/q/\nx", which is writable by group (mode 0775)`
	if got := e.Error(); got != want {
		t.Errorf("Error() = %s, want %s", got, want)
	}
}
