package trustdir

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// other is a third user, neither the user nor the owner of the project.
const other = 54321

// project makes root/srv/proj, a project nobody owns, with its
// .evalhost/modules, and returns it.
func project(t *testing.T, root string) string {
	t.Helper()
	mkdir(t, filepath.Join(root, "srv"), 0o755, 0)
	return projectAt(t, filepath.Join(root, "srv", "proj"))
}

// projectAt makes base, a project nobody owns, with its .evalhost/modules,
// in a directory that exists.
func projectAt(t *testing.T, base string) string {
	t.Helper()
	mkdir(t, filepath.Join(base, ".evalhost", "modules"), 0o755, nobody)
	own(t, filepath.Join(base, ".evalhost"), 0o755, nobody)
	own(t, base, 0o755, nobody)
	return base
}

// TestSafeCodeDir: a safe directory waives the owner of the listed
// directory and of what its owner owns under it, and nothing else: not a
// third user's file in it, not a sibling, not a directory everyone may
// write, not a link another user could repoint on the way to it.
func TestSafeCodeDir(t *testing.T) {
	needRoot(t)
	tests := []struct {
		name  string
		safe  []string                                      // %ROOT% is the test's directory
		setup func(t *testing.T, root string) (base string) // project's by default
		want  *want
		note  string // in the refusal's Note
	}{
		{"another user's project, not listed", nil, nil,
			&want{"srv/proj", Above, Owned, "above it is owned by uid 65534"}, ""},
		{"listed", []string{"%ROOT%/srv/proj"}, nil, nil, ""},
		{"listed with a trailing slash", []string{"%ROOT%/srv/proj/"}, nil, nil, ""},
		{"every directory", []string{"*"}, nil, nil, ""},
		{"every directory under its parent", []string{"%ROOT%/srv/*"}, nil, nil, ""},
		{"only what is under it, not it", []string{"%ROOT%/srv/proj/*"}, nil,
			&want{"srv/proj", Above, Owned, "above it is owned by uid 65534"}, ""},
		{"a subdirectory of the listed project", []string{"%ROOT%/srv/proj"}, func(t *testing.T, root string) string {
			sub := filepath.Join(project(t, root), "notebooks")
			mkdir(t, filepath.Join(sub, ".evalhost", "modules"), 0o755, nobody)
			own(t, filepath.Join(sub, ".evalhost"), 0o755, nobody)
			own(t, sub, 0o755, nobody)
			return sub
		}, nil, ""},
		{"a sibling of the listed project", []string{"%ROOT%/srv/proj"}, func(t *testing.T, root string) string {
			project(t, root)
			sib := mkdir(t, filepath.Join(root, "srv", "proj2", ".evalhost", "modules"), 0o755, nobody)
			own(t, filepath.Dir(sib), 0o755, nobody)
			return mkdir(t, filepath.Join(root, "srv", "proj2"), 0o755, nobody)
		}, &want{"srv/proj2", Above, Owned, "above it is owned by uid 65534"}, ""},
		{"a parent listed for its children, a sibling of theirs", []string{"%ROOT%/srv/a/*"}, func(t *testing.T, root string) string {
			mkdir(t, filepath.Join(root, "srv", "a"), 0o755, 0)
			b := mkdir(t, filepath.Join(root, "srv", "b", ".evalhost", "modules"), 0o755, nobody)
			own(t, filepath.Dir(b), 0o755, nobody)
			return mkdir(t, filepath.Join(root, "srv", "b"), 0o755, nobody)
		}, &want{"srv/b", Above, Owned, "above it is owned by uid 65534"}, ""},
		{"a third user's .evalhost in the listed project", []string{"%ROOT%/srv/proj"}, func(t *testing.T, root string) string {
			base := project(t, root)
			own(t, filepath.Join(base, ".evalhost"), 0o755, other)
			return base
		}, &want{"srv/proj/.evalhost", Holds, Owned, "owned by uid 54321"}, "is uid 65534's, so it trusts uid 65534 there, not uid 54321"},
		{"listed, writable by everyone", []string{"%ROOT%/srv/proj"}, func(t *testing.T, root string) string {
			base := project(t, root)
			own(t, base, 0o777, nobody)
			return base
		}, &want{"srv/proj", Above, OpenToAll, "writable by everyone (mode 0777) without the sticky bit"}, ""},
		{"every directory, one writable by everyone", []string{"*"}, func(t *testing.T, root string) string {
			base := project(t, root)
			own(t, base, 0o777, nobody)
			return base
		}, &want{"srv/proj", Above, OpenToAll, "writable by everyone"}, ""},
		{"listed, its modules group-writable", []string{"%ROOT%/srv/proj"}, func(t *testing.T, root string) string {
			base := project(t, root)
			own(t, filepath.Join(base, ".evalhost", "modules"), 0o775, nobody)
			return base
		}, &want{"srv/proj/.evalhost/modules", Self, Writable, "writable by group (mode 0775)"}, ""},
		{"listed, its owner's directories above it", []string{"%ROOT%/home/colleague/work/proj"}, func(t *testing.T, root string) string {
			mkdir(t, filepath.Join(root, "home"), 0o755, 0)
			base := mkdir(t, filepath.Join(root, "home", "colleague", "work", "proj", ".evalhost", "modules"), 0o755, nobody)
			for d := filepath.Dir(base); d != filepath.Join(root, "home"); d = filepath.Dir(d) {
				own(t, d, 0o755, nobody)
			}
			return filepath.Join(root, "home", "colleague", "work", "proj")
		}, nil, ""},
		{"listed, a third user's directory above it", []string{"%ROOT%/x/proj"}, func(t *testing.T, root string) string {
			base := mkdir(t, filepath.Join(root, "x", "proj", ".evalhost", "modules"), 0o755, nobody)
			own(t, filepath.Dir(base), 0o755, nobody)
			own(t, filepath.Join(root, "x", "proj"), 0o755, nobody)
			own(t, filepath.Join(root, "x"), 0o755, other)
			return filepath.Join(root, "x", "proj")
		}, &want{"x", Above, Owned, "above it is owned by uid 54321"}, "waives nothing"},
		{"listed through a link of the user's", []string{"%ROOT%/mine"}, func(t *testing.T, root string) string {
			base := project(t, root)
			link(t, base, filepath.Join(root, "mine"), pretend)
			return base
		}, nil, ""},
		{"listed through another user's link", []string{"%ROOT%/theirs"}, func(t *testing.T, root string) string {
			base := project(t, root)
			link(t, base, filepath.Join(root, "theirs"), nobody)
			return base
		}, &want{"srv/proj", Above, Owned, "above it is owned by uid 65534"}, "the safe directory %ROOT%/theirs waives nothing"},
		{"a link of its owner's in the listed project", []string{"%ROOT%/srv/proj"}, func(t *testing.T, root string) string {
			base := project(t, root)
			mods := filepath.Join(base, ".evalhost", "modules")
			os.Remove(mods)
			mkdir(t, filepath.Join(base, "mods"), 0o755, nobody)
			link(t, "../mods", mods, nobody)
			return base
		}, nil, ""},
		{"a link in the listed project to a third user's", []string{"%ROOT%/srv/proj"}, func(t *testing.T, root string) string {
			base := project(t, root)
			mods := filepath.Join(base, ".evalhost", "modules")
			os.Remove(mods)
			link(t, mkdir(t, filepath.Join(root, "theirs"), 0o755, other), mods, nobody)
			return base
		}, &want{"theirs", Self, Owned, "owned by uid 54321"}, ""},
		{"listed, in a directory everyone may write", []string{"%ROOT%/tmp/proj"}, func(t *testing.T, root string) string {
			mkdir(t, filepath.Join(root, "tmp"), fs.ModeSticky|0o777, 0)
			return projectAt(t, filepath.Join(root, "tmp", "proj"))
		}, &want{"tmp/proj", Above, Owned, "above it is owned by uid 65534"}, "which everyone may write: were it removed, whoever made it again would own it"},
		{"listed, its owner's directory above it in one everyone may write", []string{"%ROOT%/tmp/colleague/proj"}, func(t *testing.T, root string) string {
			mkdir(t, filepath.Join(root, "tmp"), fs.ModeSticky|0o777, 0)
			mkdir(t, filepath.Join(root, "tmp", "colleague"), 0o755, nobody)
			return projectAt(t, filepath.Join(root, "tmp", "colleague", "proj"))
		}, &want{"tmp/colleague", Above, Owned, "above it is owned by uid 65534"}, "tmp/colleague is uid 65534's in %ROOT%/tmp, which everyone may write"},
		{"listed, in the user's directory in one everyone may write", []string{"%ROOT%/tmp/mine/proj"}, func(t *testing.T, root string) string {
			mkdir(t, filepath.Join(root, "tmp"), fs.ModeSticky|0o777, 0)
			mkdir(t, filepath.Join(root, "tmp", "mine"), 0o755, pretend)
			return projectAt(t, filepath.Join(root, "tmp", "mine", "proj"))
		}, nil, ""},
		{"not a prefix of a name", []string{"%ROOT%/srv/pro"}, func(t *testing.T, root string) string {
			mkdir(t, filepath.Join(root, "srv", "pro"), 0o755, nobody)
			return project(t, root)
		}, &want{"srv/proj", Above, Owned, "above it is owned by uid 65534"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			as(t, pretend)
			root := t.TempDir()
			setup := tt.setup
			if setup == nil {
				setup = project
			}
			base := setup(t, root)
			var entries []string
			for _, e := range tt.safe {
				entries = append(entries, strings.ReplaceAll(e, "%ROOT%", root))
			}
			safe, err := SafeList(entries...)
			if err != nil {
				t.Fatal(err)
			}
			_, err = CodeDir(base, filepath.Join(".evalhost", "modules"), safe)
			check(t, root, err, tt.want)
			if note := strings.ReplaceAll(tt.note, "%ROOT%", root); note != "" {
				var e *Error
				if errors.As(err, &e) && !strings.Contains(e.Note, note) {
					t.Errorf("note %q lacks %q", e.Note, note)
				}
			}
		})
	}
}

// TestSafeAdvice: a refusal for an owner says which directory to list to
// waive it (the project, when it is that user's) and the command.
func TestSafeAdvice(t *testing.T) {
	needRoot(t)
	as(t, pretend)
	root := t.TempDir()
	base := project(t, root)
	list := filepath.Join(mkdir(t, filepath.Join(root, "home"), 0o700, pretend), "safe-directories")
	_, err := CodeDir(base, filepath.Join(".evalhost", "modules"), SafeFile(list))
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v, want a refusal", err)
	}
	if e.Listing != base || e.Fix() != "echo "+base+" >> "+list || e.Note != "" {
		t.Errorf("listing %q, fix %q, note %q; want %s listed in %s", e.Listing, e.Fix(), e.Note, base, list)
	}
	if want := "if you trust uid 65534 with " + base + ", list it as a safe directory: echo "; !strings.HasPrefix(e.Trust(), want) {
		t.Errorf("Trust() = %q, want it to start %q", e.Trust(), want)
	}
	// Done as it says, the project is trusted.
	if err := os.WriteFile(list, []byte(base+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	own(t, list, 0o600, pretend)
	if _, err := CodeDir(base, filepath.Join(".evalhost", "modules"), SafeFile(list)); err != nil {
		t.Errorf("listed as advised, still refused: %v", err)
	}
	// A module of a third user's in it: listing the project cannot help.
	mods := filepath.Join(base, ".evalhost", "modules")
	file(t, filepath.Join(mods, "m.py"), 0o644, other)
	_, err = CodeFile(mods, "m.py", SafeFile(list))
	if !errors.As(err, &e) || e.Listing != "" || e.Fix() != "" || e.Trust() != "" {
		t.Errorf("a third user's module: %v (listing %q, fix %q); want refused with no listing", err, e.Listing, e.Fix())
	}
}

// TestSafeFile: the list file is one entry a line, comments and blank
// lines skipped; a relative entry, or a file another user could write,
// makes the whole list unusable, and the refusal says why.
func TestSafeFile(t *testing.T) {
	needRoot(t)
	tests := []struct {
		name    string
		content string
		mode    fs.FileMode
		uid     int
		note    string // "" for the project trusted
	}{
		{"listed, with comments", "# the team's\n\n  %BASE%  \n", 0o644, pretend, ""},
		{"a relative entry", "/elsewhere\nsrv/proj\n", 0o644, pretend, `%LIST%:2: safe directory "srv/proj" is not an absolute path: write the directory's full path`},
		{"a ~ entry", "~/proj\n", 0o644, pretend, `(~ is not expanded)`},
		{"root's list", "%BASE%\n", 0o644, 0, ""},
		{"writable by group", "%BASE%\n", 0o664, pretend, "%LIST%: it is writable by group (mode 0664); run: chmod go-w %LIST%"},
		{"another user's", "%BASE%\n", 0o644, nobody, "%LIST%: it is owned by uid 65534"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			as(t, pretend)
			root := t.TempDir()
			base := project(t, root)
			list := filepath.Join(mkdir(t, filepath.Join(root, "home"), 0o700, pretend), "safe-directories")
			if err := os.WriteFile(list, []byte(strings.ReplaceAll(tt.content, "%BASE%", base)), 0o600); err != nil {
				t.Fatal(err)
			}
			own(t, list, tt.mode, tt.uid)
			_, err := CodeDir(base, filepath.Join(".evalhost", "modules"), SafeFile(list))
			if tt.note == "" {
				check(t, root, err, nil)
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want a refusal", err)
			}
			if note := strings.ReplaceAll(tt.note, "%LIST%", list); !strings.Contains(e.Note, note) || !strings.Contains(err.Error(), note) {
				t.Errorf("refusal %q: note %q lacks %q", err, e.Note, note)
			}
			if e.Listing != "" {
				t.Errorf("listing %q advised while the list cannot be read", e.Listing)
			}
		})
	}
}

func TestSafeListEntries(t *testing.T) {
	for _, tt := range []struct {
		entry, err string // "" for accepted
	}{
		{"*", ""},
		{"/srv/proj", ""},
		{"/srv/*", ""},
		{"/*", ""},
		{"srv/proj", `safe directory "srv/proj" is not an absolute path: write the directory's full path, as realpath prints it, or * for every directory`},
		{"./proj", "is not an absolute path"},
		{"~/proj", "is not an absolute path (~ is not expanded)"},
		{"", "an empty safe directory names no directory"},
		{"proj/*", "is not an absolute path"},
	} {
		_, err := SafeList(tt.entry)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("SafeList(%q) = %v, want it accepted", tt.entry, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("SafeList(%q) = %v, want %q", tt.entry, err, tt.err)
		}
	}
}

// TestSafeCodeFile: a module the listed directory's owner owns is judged
// safe, and held to that owner once open; a third user's is not.
func TestSafeCodeFile(t *testing.T) {
	needRoot(t)
	as(t, pretend)
	root := t.TempDir()
	base := project(t, root)
	mods := filepath.Join(base, ".evalhost", "modules")
	path := file(t, filepath.Join(mods, "m.py"), 0o644, nobody)
	safe, err := SafeList(base)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CodeFile(mods, "m.py", nil); err == nil {
		t.Fatal("another user's module judged safe with no safe directory")
	}
	judged, err := CodeFile(mods, "m.py", safe)
	if err != nil {
		t.Fatal(err)
	}
	if m := judged.Mark(); m.Owner != nobody {
		t.Errorf("Mark().Owner = %d, want %d", m.Owner, nobody)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	check(t, mods, Opened(path, fi, judged.Mark()), nil)
	own(t, path, 0o644, other)
	fi, _ = os.Stat(path)
	check(t, mods, Opened(path, fi, judged.Mark()), &want{"m.py", Self, Owned, "owned by uid 54321"})
}

// TestSafeAdviceOddNames: the listing a refusal advises, run as printed by
// sh (dash, whose echo reads backslash escapes) and bash, appends one line
// that lists the refused project and nothing else; a project whose name the
// list cannot hold (a newline, space at an end, a trailing "/*") gets no
// listing advised, so a name another user chose cannot make the advised
// command trust more than their project (a "*" line).
func TestSafeAdviceOddNames(t *testing.T) {
	needRoot(t)
	for _, tt := range []struct {
		name     string
		listable bool
	}{
		{"plain", true},
		{"with space", true},
		{"it's", true},
		{"$(touch pwned)", true},
		{`back\nslash`, true},
		{`x\n*`, true},
		{`tab\there`, true},
		{"-n", true},
		{"new\n*", false},
		{"cr\r", false},
		{"trailing ", false},
		{" leading", true},
		{"nbsp\u00a0", false},
		{"*", false},
	} {
		for _, shell := range []string{"sh", "bash"} {
			t.Run(shell+"/"+tt.name, func(t *testing.T) {
				sh, err := exec.LookPath(shell)
				if err != nil {
					t.Skip(err)
				}
				as(t, pretend)
				root := t.TempDir()
				mkdir(t, filepath.Join(root, "srv"), 0o755, 0)
				base := filepath.Join(root, "srv", tt.name)
				mkdir(t, filepath.Join(base, ".evalhost", "modules"), 0o755, nobody)
				own(t, filepath.Join(base, ".evalhost"), 0o755, nobody)
				own(t, base, 0o755, nobody)
				home := mkdir(t, filepath.Join(root, "home"), 0o700, pretend)
				list := filepath.Join(home, "safe-directories")
				_, err = CodeDir(base, filepath.Join(".evalhost", "modules"), SafeFile(list))
				var e *Error
				if !errors.As(err, &e) {
					t.Fatalf("got %v, want a refusal", err)
				}
				if !tt.listable {
					if e.Listing != "" || e.Fix() != "" || e.Trust() != "" {
						t.Fatalf("listing %q advised (%s) for a name the list cannot hold", e.Listing, e.Fix())
					}
					if !strings.Contains(e.Note, "cannot be listed") {
						t.Errorf("note %q does not say why no listing is advised", e.Note)
					}
					return
				}
				if e.Listing != base {
					t.Fatalf("listing %q, want %q", e.Listing, base)
				}
				cmd := exec.Command(sh, "-c", e.Fix())
				cmd.Dir = home
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%s -c %q: %v: %s", shell, e.Fix(), err, out)
				}
				if _, err := os.Lstat(filepath.Join(home, "pwned")); err == nil {
					t.Fatalf("%q ran a command of the name's", e.Fix())
				}
				own(t, list, 0o600, pretend)
				listed, err := SafeFile(list).Listed()
				if err != nil || len(listed) != 1 || listed[0].Entry != base || listed[0].Unusable != nil {
					data, _ := os.ReadFile(list)
					t.Fatalf("%s -c %q listed %+v, %v (file %q); want %q alone", shell, e.Fix(), listed, err, data, base)
				}
				if _, err := CodeDir(base, filepath.Join(".evalhost", "modules"), SafeFile(list)); err != nil {
					t.Errorf("listed as advised, still refused: %v", err)
				}
			})
		}
	}
}

// TestSafeAdviceClaimable: another user's project in a directory everyone
// may write (/tmp) gets no listing advised, since an entry for it would
// trust whoever makes it next; the note says so.
func TestSafeAdviceClaimable(t *testing.T) {
	needRoot(t)
	as(t, pretend)
	root := t.TempDir()
	mkdir(t, filepath.Join(root, "tmp"), fs.ModeSticky|0o777, 0)
	base := projectAt(t, filepath.Join(root, "tmp", "proj"))
	list := filepath.Join(mkdir(t, filepath.Join(root, "home"), 0o700, pretend), "safe-directories")
	_, err := CodeDir(base, filepath.Join(".evalhost", "modules"), SafeFile(list))
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v, want a refusal", err)
	}
	if e.Listing != "" || e.Fix() != "" || !strings.Contains(err.Error(), "listing it would not help: "+base+" is uid 65534's in "+filepath.Join(root, "tmp")+", which everyone may write") {
		t.Errorf("listing %q (%s) advised for a project in a directory everyone may write: %v", e.Listing, e.Fix(), err)
	}
}
