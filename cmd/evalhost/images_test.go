package main

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/trustdir"
)

// nobody stands for another local user; chown to it needs root.
const nobody = 65534

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("changing a file's owner needs root")
	}
}

// TestCheckImagesDir: --images-dir is refused when another user could
// plant or replace files in it, also when it is still to be made in a
// directory of theirs; its error names the path, what is wrong and what to
// do.
func TestCheckImagesDir(t *testing.T) {
	needRoot(t)
	tests := []struct {
		name  string
		setup func(t *testing.T, root string) string
		want  string // "" accepted
	}{
		{"own", func(t *testing.T, root string) string { return mkdirOwned(t, root, "imgs", 0o755, 0) }, ""},
		{"own, sticky", func(t *testing.T, root string) string { return mkdirOwned(t, root, "imgs", 0o777|os.ModeSticky, 0) }, ""},
		{"missing, in an own dir", func(t *testing.T, root string) string { return filepath.Join(root, "a", "b") }, ""},
		{"another user's", func(t *testing.T, root string) string { return mkdirOwned(t, root, "imgs", 0o777, nobody) },
			"imgs: it is owned by uid 65534, not by you (uid 0), who could plant or replace the images"},
		{"open to all", func(t *testing.T, root string) string { return mkdirOwned(t, root, "imgs", 0o777, 0) },
			"imgs: it is writable by group and others (mode 0777) without the sticky bit, so they can replace what is in it; run: chmod go-w"},
		{"missing, in another user's dir", func(t *testing.T, root string) string {
			return filepath.Join(mkdirOwned(t, root, "theirs", 0o755, nobody), "imgs", "sub")
		}, "theirs, where it would be made, is owned by uid 65534"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.setup(t, t.TempDir())
			err := checkImagesDir(dir)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var e *UnsafeImagesDirError
			if !errors.As(err, &e) || !errors.Is(err, trustdir.ErrUntrusted) || !strings.Contains(err.Error(), "--images-dir "+dir+": ") ||
				!strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v; want an *UnsafeImagesDirError naming %s with %q", err, dir, tt.want)
			}
		})
	}
}

// TestOpenImagesDirJudgesWhatItMakes: a directory another user made in
// the image directory's place after the flags were checked is refused at
// the first image.
func TestOpenImagesDirJudgesWhatItMakes(t *testing.T) {
	needRoot(t)
	root := t.TempDir()
	dir := filepath.Join(root, "imgs")
	if err := checkImagesDir(dir); err != nil {
		t.Fatal(err)
	}
	mkdirOwned(t, root, "imgs", 0o777, nobody)
	if d, err := openImagesDir(dir); !errors.Is(err, trustdir.ErrUntrusted) {
		t.Fatalf("openImagesDir = %+v, %v; want it refused", d, err)
	}
}

// TestImagesNeverOverwrite: an image takes a free name; a file or a link
// already there keeps its content, and so does what a link points to.
func TestImagesNeverOverwrite(t *testing.T) {
	root := t.TempDir()
	victim := filepath.Join(root, "victim")
	write(t, victim, "precious")
	dir := filepath.Join(root, "imgs")
	d, err := openImagesDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "cell1-1.png"), "older")
	if err := os.Symlink(victim, filepath.Join(dir, "cell1-1_2.png")); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"cell1-1_3.png", "cell1-1_4.png"} {
		path, err := d.create("cell1-1.png", []byte("new"))
		if err != nil || path != filepath.Join(dir, want) {
			t.Fatalf("create = %q, %v; want %s", path, err, want)
		}
		if b, _ := os.ReadFile(path); string(b) != "new" {
			t.Errorf("%s holds %q", path, b)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious" {
		t.Errorf("the link's target now holds %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "cell1-1.png")); string(b) != "older" {
		t.Errorf("the older image now holds %q", b)
	}
}

func mkdirOwned(t *testing.T, parent, name string, mode os.FileMode, uid int) string {
	t.Helper()
	dir := filepath.Join(parent, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(dir, uid, uid); err != nil {
		t.Fatal(err)
	}
	return dir
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestImagesDirRefusalShowsPath: an --images-dir refused (when the flags
// are checked, or at the first image) whose name holds a newline, an
// escape sequence or a bidi override (a name another user may have chosen)
// is named as trustdir.Shown prints it, so it cannot fake a line of advice
// or drive the terminal.
func TestImagesDirRefusalShowsPath(t *testing.T) {
	names := []struct{ name, base string }{
		{"newline", "x\nrun: chmod 777 ~"},
		{"escape", "x\x1b]0;title\a\x1b[2K"},
		{"bidi", "x\u202egnp.lave"},
	}
	situations := []struct {
		name    string
		setup   func(t *testing.T, path string) (dir, named string) // named: the path the error must show
		refused string
	}{
		{"open to all", func(t *testing.T, path string) (string, string) {
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, 0o777); err != nil {
				t.Fatal(err)
			}
			return path, path
		}, "without the sticky bit"},
		{"under a file", func(t *testing.T, path string) (string, string) {
			write(t, path, "")
			return filepath.Join(path, "imgs"), path
		}, "not a directory"},
		{"missing, in another user's dir", func(t *testing.T, path string) (string, string) {
			needRoot(t)
			theirs := mkdirOwned(t, filepath.Dir(path), filepath.Base(path), 0o755, nobody)
			return filepath.Join(theirs, "imgs"), theirs
		}, "where it would be made"},
	}
	for _, sit := range situations {
		for _, n := range names {
			t.Run(sit.name+"/"+n.name, func(t *testing.T) {
				dir, named := sit.setup(t, filepath.Join(t.TempDir(), n.base))
				checkErr := checkImagesDir(dir)
				_, openErr := openImagesDir(dir)
				for what, err := range map[string]error{"checkImagesDir": checkErr, "openImagesDir": openErr} {
					if err == nil {
						t.Fatalf("%s accepted %q", what, dir)
					}
					text := err.Error()
					if i := strings.IndexFunc(text, func(r rune) bool { return !strconv.IsPrint(r) }); i >= 0 {
						t.Errorf("%s: %q prints %q raw", what, text, []rune(text[i:])[0])
					}
					if !strings.Contains(text, trustdir.Shown(named)) {
						t.Errorf("%s: %q does not name %s", what, text, trustdir.Shown(named))
					}
				}
				if !strings.Contains(checkErr.Error(), sit.refused) {
					t.Errorf("checkImagesDir: %v, want it to say %q", checkErr, sit.refused)
				}
			})
		}
	}
}
