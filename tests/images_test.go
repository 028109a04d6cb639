package tests

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// svgCell displays an SVG, which run saves to a file.
const svgCell = "class Pic:\n    def _repr_svg_(self): return '<svg>NEW IMAGE</svg>'\nPic()"

// TestImagesDirRefused: --images-dir that another user owns, or that
// others may write without the sticky bit, is a usage error (exit 2) that
// says what is wrong, before any cell runs; a link there of another
// user's (the tester's: /tmp/imgs/cell1-1.svg -> /root/victim.txt) is
// never written through.
func TestImagesDirRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making another user's directory needs root")
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  string
	}{
		{"another user's, open to all", func(t *testing.T, dir string) {
			mkdirAs(t, dir, 0o777, nobody)
		}, "it is owned by uid 65534, not by you (uid 0)"},
		{"another user's", func(t *testing.T, dir string) {
			mkdirAs(t, dir, 0o755, nobody)
		}, "it is owned by uid 65534"},
		{"mine, open to all without the sticky bit", func(t *testing.T, dir string) {
			mkdirAs(t, dir, 0o777, 0)
		}, "it is writable by group and others (mode 0777) without the sticky bit"},
		{"a link of another user's", func(t *testing.T, dir string) {
			real := filepath.Join(filepath.Dir(dir), "real")
			mkdirAs(t, real, 0o755, 0)
			if err := os.Symlink(real, dir); err != nil {
				t.Fatal(err)
			}
			if err := os.Lchown(dir, nobody, nobody); err != nil {
				t.Fatal(err)
			}
		}, "it is a symbolic link owned by uid 65534"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			victim := filepath.Join(root, "victim.txt")
			if err := os.WriteFile(victim, []byte("precious"), 0o600); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(root, "imgs")
			tt.setup(t, dir)
			planted := filepath.Join(dir, "cell2-1.svg") // the second cell's first image
			if err := os.Symlink(victim, planted); err != nil {
				t.Fatal(err)
			}
			os.Lchown(planted, nobody, nobody)
			stdout, stderr, code := runCaptured(t, command(t, "run", "--images-dir", dir, "-c", "print('ran')", "-c", svgCell), false)
			if b, _ := os.ReadFile(victim); string(b) != "precious" {
				t.Fatalf("the victim file now holds %q", b)
			}
			if code != 2 || stdout != "" {
				t.Errorf("exit %d, stdout %q; want 2 before any cell ran", code, stdout)
			}
			for _, want := range []string{"evalhost run: --images-dir " + dir, tt.want} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q: %s", want, stderr)
				}
			}
		})
	}
}

// TestImagesNotWrittenThroughLinks: in a directory others may add names
// to (the user's own, sticky and open to all; or one that another user
// plants a name in before the image is saved), an image never overwrites
// what is already there, link or file: it is saved under a new name,
// which the line about it gives, mode 0644.
func TestImagesNotWrittenThroughLinks(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("planting another user's link needs root")
	}
	root := t.TempDir()
	victim := filepath.Join(root, "victim.txt")
	if err := os.WriteFile(victim, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "imgs")
	mkdirAs(t, dir, 0o777|os.ModeSticky, 0)
	planted := filepath.Join(dir, "cell1-1.svg")
	if err := os.Symlink(victim, planted); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(planted, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	older := filepath.Join(dir, "cell1-2.svg")
	if err := os.WriteFile(older, []byte("an older run's"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCaptured(t, command(t, "run", "--images-dir", dir, "-c", "class Pic:\n    def _repr_svg_(self): return '<svg>NEW IMAGE</svg>'\ndisplay(Pic())\nPic()"), false)
	if b, _ := os.ReadFile(victim); string(b) != "precious" {
		t.Fatalf("the victim file now holds %q", b)
	}
	if b, _ := os.ReadFile(older); string(b) != "an older run's" {
		t.Errorf("an older image was overwritten: %q", b)
	}
	if code != 0 {
		t.Fatalf("exit %d; stderr %s", code, stderr)
	}
	var saved []string
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		path, ok := strings.CutPrefix(line, "[image/svg+xml saved to ")
		if !ok {
			t.Errorf("unexpected line %q", line)
			continue
		}
		saved = append(saved, strings.TrimSuffix(path, "]"))
	}
	if len(saved) != 2 {
		t.Fatalf("saved %q, want 2 images", saved)
	}
	umask := syscall.Umask(0)
	syscall.Umask(umask)
	for _, p := range saved {
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o644&^os.FileMode(umask) || filepath.Dir(p) != dir {
			t.Errorf("%s: %v, %v; want a new regular file of mode 0644 in %s", p, fi, err, dir)
			continue
		}
		if b, _ := os.ReadFile(p); string(b) != "<svg>NEW IMAGE</svg>" {
			t.Errorf("%s holds %q", p, b)
		}
		if p == planted || p == older {
			t.Errorf("saved over %s", p)
		}
	}
}
