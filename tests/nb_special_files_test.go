//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package tests

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/trustdir"
)

// TestNotebookRefusesWhatIsNoFile: every file argument of every nb
// command (the notebook or script, the text and content files, -f's
// parameters, -o, nb run's default outputs, and the notebook's lock file)
// that names a FIFO, a socket, a character device or a directory is
// refused at once, saying what the path is and what to do, and nothing is
// written. nb run, view, apply,
// edit, insert, delete of a FIFO, and every FIFO input file, waited for a
// writer for ever (apply and edit holding the notebook's lock); a socket
// said "no such device or address"; a device was read (/dev/null as an
// empty text, an empty script); a directory "is a directory"; an output
// "not a regular file", whatever it was.
func TestNotebookRefusesWhatIsNoFile(t *testing.T) {
	const notebook = "ok.ipynb"
	kinds := []struct {
		name, kind string
		make       func(t *testing.T, path string) bool // false: a save that followed it would write outside the test
	}{
		{"a FIFO", "a named pipe (FIFO)", func(t *testing.T, p string) bool {
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skip("no FIFOs:", err)
			}
			return true
		}},
		{"a socket", "a socket", func(t *testing.T, p string) bool {
			l, err := net.Listen("unix", p)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
			return true
		}},
		{"a character device", "a character device", makeDevice},
		{"a directory", "a directory", func(t *testing.T, p string) bool {
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
			return true
		}},
	}
	readRefused := func(flag string) func(shown, kind string) []string {
		return func(shown, kind string) []string {
			return []string{flag + "cannot read " + shown + ": it is " + kind + ", not a regular file"}
		}
	}
	// A file only read may be a pipe (bash's <(...)): a FIFO is refused
	// only when nothing wrote to it, as none does here.
	pipeRefused := func(flag string) func(shown, kind string) []string {
		return func(shown, kind string) []string {
			if kind == "a named pipe (FIFO)" {
				return []string{flag + "cannot read " + shown + ": it is a named pipe (FIFO) and nothing wrote to it: start what writes to it first"}
			}
			return readRefused(flag)(shown, kind)
		}
	}
	notebookDir := func(cmd string) func(shown string) []string {
		return func(shown string) []string {
			return []string{cmd + "cannot read " + shown + ": it is a directory, not a notebook file; give the path of a .ipynb file in it\n"}
		}
	}
	cases := []struct {
		name  string
		at    string                            // the special file's name
		args  func(x string) []string           // x: its path
		stdin string                            // what stdin holds
		code  int                               // the exit code
		shows func(shown, kind string) []string // what stderr says, shown: x by trustdir.Shown
		write bool                              // x is where a notebook is written
		named bool                              // the command names x as "at" (it derives it from ok.ipynb or ok.py)
		also  func(shown, kind string) []string // what a non-directory's refusal adds
		dir   func(shown string) []string       // what a directory's says instead of shows
	}{
		{name: "view FILE", at: "x.ipynb", args: func(x string) []string { return []string{"view", x} }, code: 1, shows: readRefused("nb view: "), dir: notebookDir("nb view: ")},
		{name: "apply FILE", at: "x.ipynb", args: func(x string) []string { return []string{"apply", x} }, stdin: "# %%\n1\n", code: 1, shows: readRefused("nb apply: "), dir: notebookDir("nb apply: ")},
		{name: "edit FILE", at: "x.ipynb", args: func(x string) []string { return []string{"edit", x, "--cell", "0", "--content", "1"} }, code: 1, shows: readRefused("nb edit: "), dir: notebookDir("nb edit: ")},
		{name: "insert FILE", at: "x.ipynb", args: func(x string) []string { return []string{"insert", x, "--cell", "0", "--content", "1"} }, code: 1, shows: readRefused("nb insert: "), dir: notebookDir("nb insert: ")},
		{name: "delete FILE", at: "x.ipynb", args: func(x string) []string { return []string{"delete", x, "--cell", "0"} }, code: 1, shows: readRefused("nb delete: "), dir: notebookDir("nb delete: ")},
		{name: "run FILE.ipynb", at: "x.ipynb", args: func(x string) []string { return []string{"run", x} }, code: 1, shows: readRefused("nb run: "), dir: notebookDir("nb run: ")},
		{name: "run FILE.py", at: "x.py", args: func(x string) []string { return []string{"run", x, "-o", "out.ipynb"} }, code: 1, shows: readRefused("nb run: ")},
		{name: "apply --text-file", at: "t.txt", args: func(x string) []string { return []string{"apply", notebook, "--text-file", x} }, code: 1,
			shows: pipeRefused("nb apply: --text-file: "), also: stdinAdvice},
		{name: "edit --content-file", at: "c.txt", args: func(x string) []string { return []string{"edit", notebook, "--cell", "0", "--content-file", x} }, code: 1,
			shows: pipeRefused("nb edit: --content-file: "), also: stdinAdvice},
		{name: "insert --content-file", at: "c.txt", args: func(x string) []string { return []string{"insert", notebook, "--cell", "0", "--content-file", x} }, code: 1,
			shows: pipeRefused("nb insert: --content-file: "), also: stdinAdvice},
		{name: "run -f", at: "p.yaml", args: func(x string) []string { return []string{"run", notebook, "-f", x, "-o", "out.ipynb"} }, code: 2,
			shows: pipeRefused("nb run: -f: ")},
		{name: "run -o", at: "out.ipynb", args: func(x string) []string { return []string{"run", notebook, "-o", x} }, code: 1, write: true,
			shows: func(shown, kind string) []string {
				return []string{"nb run: write notebook " + shown + ": it is " + kind + ", not a regular file, which a save does not replace: remove it, or give another path; no cell was run"}
			},
			dir: func(shown string) []string {
				return []string{"nb run: write notebook " + shown + ": it is a directory, not a notebook file; give a file's name in it (DIR/NAME.ipynb); no cell was run"}
			}},
		{name: "run to its default output", at: "ok.nbconvert.ipynb", args: func(x string) []string { return []string{"run", notebook} }, code: 1, write: true, named: true,
			shows: func(shown, kind string) []string {
				return []string{"nb run: write notebook " + shown + ": it is " + kind + ", not a regular file, which a save does not replace"}
			},
			dir: func(shown string) []string {
				return []string{"nb run: write notebook " + shown + ": it is a directory, not a notebook file"}
			}},
		{name: "edit with its lock file's name taken", at: ".ok.ipynb.evalhost-lock", args: func(x string) []string { return []string{"edit", notebook, "--cell", "0", "--content", "1"} },
			code: 1, write: true,
			shows: func(shown, kind string) []string {
				return []string{"nb edit: lock notebook ok.ipynb: not a lock file: ", "/.ok.ipynb.evalhost-lock is " + kind + ", not a lock file evalhost made: remove it\n"}
			}},
		{name: "run a script to its paired notebook", at: "ok.ipynb", args: func(x string) []string { return []string{"run", "ok.py"} }, code: 2, write: true, named: true,
			shows: func(shown, kind string) []string {
				return []string{"nb run: " + shown + " is " + kind + "; without -o the executed notebook of ok.py goes there only when nothing is there: remove it, or choose another -o\n"}
			}},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					// Short: a Unix socket's path is bounded.
					dir, err := os.MkdirTemp("", "nb")
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { os.RemoveAll(dir) })
					ok := filepath.Join(dir, notebook)
					if tc.at != notebook {
						if err := os.WriteFile(ok, []byte(nbJSON("x = 1", "python")), 0o644); err != nil {
							t.Fatal(err)
						}
					}
					if err := os.WriteFile(filepath.Join(dir, "ok.py"), []byte("# %%\nx = 1\n"), 0o644); err != nil {
						t.Fatal(err)
					}
					x := filepath.Join(dir, tc.at)
					if !k.make(t, x) && tc.write {
						t.Skip("no device of its own here: a save that followed the link to /dev/null would write in /dev")
					}
					before, _ := os.Lstat(x)
					cmd := command(t, append([]string{"nb"}, tc.args(x)...)...)
					cmd.Dir = dir
					cmd.Stdin = strings.NewReader(tc.stdin)
					stdout, stderr, code := runWithin(t, cmd, 20*time.Second, x)
					if code != tc.code {
						t.Errorf("exit %d, want %d\nstdout %q\nstderr %q", code, tc.code, stdout, stderr)
					}
					shown := trustdir.Shown(x)
					if tc.named {
						shown = trustdir.Shown(tc.at)
					}
					want := tc.shows(shown, k.kind)
					switch {
					case k.kind == "a directory" && tc.dir != nil:
						want = tc.dir(shown)
					case k.kind != "a directory" && tc.also != nil:
						want = append(want, tc.also(shown, k.kind)...)
					}
					for _, w := range want {
						if !strings.Contains(stderr, w) {
							t.Errorf("stderr does not say %q\nstderr %q", w, stderr)
						}
					}
					if now, err := os.Lstat(x); err != nil || now.Mode().Type() != before.Mode().Type() {
						t.Errorf("%s was replaced: %v", tc.at, err)
					}
					if tc.at != notebook {
						if data, _ := os.ReadFile(ok); string(data) != nbJSON("x = 1", "python") {
							t.Errorf("%s changed: %q", notebook, data)
						}
					}
					if _, err := os.Lstat(filepath.Join(dir, "out.ipynb")); tc.at != "out.ipynb" && err == nil {
						t.Errorf("out.ipynb was written")
					}
				})
			}
		})
	}
}

// stdinAdvice is what the refusal of a text or content file that is no
// file (a pipe, a device) adds: its text may come on stdin.
func stdinAdvice(shown, kind string) []string {
	return []string{"; or give - and send the text on stdin\n"}
}

// makeDevice makes path a character device: /dev/null's numbers by mknod
// where this user may, else a link to /dev/null (false: a save that
// followed it would write in /dev).
func makeDevice(t *testing.T, path string) bool {
	if syscall.Mknod(path, syscall.S_IFCHR|0o666, 1<<8|3) == nil {
		if f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
			return true
		}
		os.Remove(path) // a nodev mount
	}
	if err := os.Symlink("/dev/null", path); err != nil {
		t.Fatal(err)
	}
	return false
}

// runWithin runs c, failing the test if it has not ended within d (a read
// waiting for a FIFO's writer never ends): it is then killed, and fifo,
// when it is one, opened for writing so that nothing stays blocked on it.
func runWithin(t *testing.T, c *exec.Cmd, d time.Duration, fifo string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb strings.Builder
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case <-done:
	case <-time.After(d):
		c.Process.Kill()
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		<-done
		t.Fatalf("still running after %v\nstdout %q\nstderr %q", d, &out, &errb)
	}
	return out.String(), errb.String(), c.ProcessState.ExitCode()
}

// TestNotebookRunSaysWhatHoldsThePairedName: nb run of a percent script
// without -o writes the notebook paired with it only when nothing holds
// that name, and its refusal says what does when "exists" would mislead:
// a dangling symlink (ls shows it, cat says no such file), a link loop,
// another user's file (not the user's to replace or remove). A file of the
// user's own keeps the advice to name it with -o.
func TestNotebookRunSaysWhatHoldsThePairedName(t *testing.T) {
	const then = "; without -o the executed notebook of s.py goes there only when nothing is there: "
	for _, tc := range []struct {
		name  string
		make  func(t *testing.T, paired string)
		root  bool // only root gives a file to another user
		shows []string
	}{
		{name: "a file of the user's own", make: func(t *testing.T, p string) { os.WriteFile(p, []byte("{}"), 0o644) },
			shows: []string{"s.ipynb exists: without -o the executed notebook of s.py goes there only when it is new; -o s.ipynb replaces it"}},
		{name: "a dangling symlink", make: func(t *testing.T, p string) { os.Symlink("gone/s.ipynb", p) },
			shows: []string{"s.ipynb is a symlink to gone/s.ipynb, which does not exist" + then + "remove the link, or choose another -o\n"}},
		{name: "a link loop", make: func(t *testing.T, p string) { os.Symlink("s.ipynb", p) },
			shows: []string{"s.ipynb is a symlink to s.ipynb, a loop of links that leads to no file" + then + "remove the link, or choose another -o\n"}},
		{name: "another user's file", root: true, make: func(t *testing.T, p string) {
			os.WriteFile(p, []byte("{}"), 0o644)
			os.Lchown(p, 65534, 65534)
		}, shows: []string{"s.ipynb is a file of another user's, ", "(uid 65534)" + then + "choose another -o\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.root && os.Geteuid() != 0 {
				t.Skip("only root gives a file to another user")
			}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "s.py"), []byte("# %%\nx = 1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			paired := filepath.Join(dir, "s.ipynb")
			tc.make(t, paired)
			before, _ := os.Lstat(paired)
			cmd := command(t, "nb", "run", "s.py")
			cmd.Dir = dir
			_, stderr, code := runWithin(t, cmd, 20*time.Second, paired)
			if code != 2 {
				t.Errorf("exit %d, want 2\nstderr %q", code, stderr)
			}
			for _, w := range tc.shows {
				if !strings.Contains(stderr, "evalhost nb run: ") || !strings.Contains(stderr, w) {
					t.Errorf("stderr does not say %q\nstderr %q", w, stderr)
				}
			}
			if now, err := os.Lstat(paired); err != nil || !os.SameFile(now, before) {
				t.Errorf("s.ipynb was replaced: %v", err)
			}
		})
	}
}

// TestNotebookReadsTextFromAPipe: a file nb only reads (--text-file,
// --content-file, -f) may be bash's <(...), a pipe, as cat reads one;
// h36a's refusal of every FIFO had refused it.
func TestNotebookReadsTextFromAPipe(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("needs bash")
	}
	for _, tc := range []struct{ name, args, want string }{
		{"edit --content-file", `nb edit ok.ipynb --cell 0 --content-file <(printf 'y = 2\n')`, `"y = 2\n"`},
		{"apply --text-file", `nb apply ok.ipynb --text-file <(printf '# %%%% [code] cell:0\nz = 3\n')`, `"z = 3"`},
		{"run -f", `nb run ok.ipynb -o out.ipynb -f <(printf 'x: 5\n') && cat out.ipynb`, `x = 5`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "ok.ipynb"), []byte(nbJSON("x = 1", "python")), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := command(t, "--version")
			cmd.Args = []string{"bash", "-c", "set -e; " + strings.Replace(tc.args, "nb ", trustdir.ShellQuote(cmd.Path)+" nb ", 1) + "; cat ok.ipynb"}
			cmd.Path, _ = exec.LookPath("bash")
			cmd.Dir = dir
			stdout, stderr, code := runWithin(t, cmd, 2*time.Minute, "")
			if code != 0 || !strings.Contains(stdout, tc.want) {
				t.Fatalf("exit %d, stdout %s\nstderr %s\nwant %s in it", code, stdout, stderr, tc.want)
			}
		})
	}
}
