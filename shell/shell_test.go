package shell

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/backend"
	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/testkit"
)

// TestShellCells runs its steps in order in one bash: state a step leaves is
// what the next one sees.
func TestShellCells(t *testing.T) {
	testkit.Clean(t, time.Minute)
	s := startShell(t, Options{})
	dir := t.TempDir()
	tests := []struct {
		name    string
		req     frames.Request
		want    string
		wantErr string // evalue of the error frame; empty means status ok
	}{
		{"echo", frames.Request{Code: "echo hello"}, "hello\n", ""},
		{"cd persists: set", frames.Request{Code: "cd /tmp"}, "", ""},
		{"cd persists: seen", frames.Request{Code: "pwd"}, "/tmp\n", ""},
		{"export persists: set", frames.Request{Code: "export EVH_X=42"}, "", ""},
		{"export persists: a child sees it", frames.Request{Code: "sh -c 'echo $EVH_X'"}, "42\n", ""},
		{"function persists: define", frames.Request{Code: "greet() {\n  echo \"hi $1\"\n}"}, "", ""},
		{"function persists: call", frames.Request{Code: "greet you"}, "hi you\n", ""},
		{"false fails", frames.Request{Code: "false"}, "", "exit status 1"},
		{"last status counts", frames.Request{Code: "false\ntrue"}, "", ""},
		{"status is the last one", frames.Request{Code: "echo a; (exit 7)"}, "a\n", "exit status 7"},
		{"stdout is a terminal", frames.Request{Code: "[ -t 1 ] && echo tty; [ -t 2 ] && echo tty2"}, "tty\ntty2\n", ""},
		{"stdin is not", frames.Request{Code: "[ -t 0 ] || echo notty"}, "notty\n", ""},
		{"read does not hang", frames.Request{Code: "read x; echo \"read=$?\""}, "read=1\n", ""},
		{"cat of stdin ends", frames.Request{Code: "cat; echo end"}, "end\n", ""},
		{"stderr is merged", frames.Request{Code: "echo out; echo err >&2"}, "out\nerr\n", ""},
		{"newlines untranslated", frames.Request{Code: "printf 'a\\nb\\r\\n'"}, "a\nb\r\n", ""},
		{"no newline at end", frames.Request{Code: "printf abc"}, "abc", ""},
		{"previous output does not leak", frames.Request{Code: "printf def"}, "def", ""},
		{"bulk output stays in its cell", frames.Request{Code: "seq 1 20000 | tail -n 1"}, "20000\n", ""},
		{"bulk output", frames.Request{Code: "seq 1 30000 >/dev/null; seq 1 3000 | wc -l"}, "3000\n", ""},
		{"heredoc", frames.Request{Code: "cat <<EOF\nsum $((1+2))\nEOF"}, "sum 3\n", ""},
		{"unicode", frames.Request{Code: "echo 'héllo → 世界'"}, "héllo → 世界\n", ""},
		{"req cwd", frames.Request{Code: "pwd", Cwd: dir}, dir + "\n", ""},
		{"req cwd persists", frames.Request{Code: "pwd"}, dir + "\n", ""},
		{"req cwd missing", frames.Request{Code: "echo never", Cwd: filepath.Join(dir, "nope")},
			"bash: cd: " + filepath.Join(dir, "nope") + ": No such file or directory\n", "exit status 1"},
		{"req env set", frames.Request{Code: `printf '%s|' "$A" "$B"`,
			Env: map[string]*string{"A": shellStr("it's \"q\" $x\nline2\t\\"), "B": shellStr("")}}, "it's \"q\" $x\nline2\t\\||", ""},
		{"req env unset", frames.Request{Code: `echo "${A-unset}"`, Env: map[string]*string{"A": nil}}, "unset\n", ""},
		{"a script's name and arguments", frames.Request{Code: `echo "$(basename "$0") $# $1"`, Argv: []string{"sub/run.sh", "a b"}, File: "/w/sub/run.sh"}, "run.sh 1 a b\n", ""},
		{"a shift lasts to the next cell", frames.Request{Code: `shift; echo "$#"`}, "0\n", ""},
		{"-c gives bash's name back", frames.Request{Code: `[ "$0" = "$BASH" ] && echo bash; echo "$#"`, Argv: []string{"-c"}}, "bash\n0\n", ""},
		{"stdin keeps bash's name", frames.Request{Code: `[ "$0" = "$BASH" ] && echo bash; echo "$1"`, Argv: []string{"-", "x"}, File: "<stdin>"}, "bash\nx\n", ""},
		{"return at top level ends the cell", frames.Request{Code: "echo one\nreturn 4\necho two"}, "one\n", "exit status 4"},
		{"command not found", frames.Request{Code: "evh_no_such_command_x"},
			"", "exit status 127"},
		// A venv's activate sets PS1: bash printed it, and PS0, into every
		// later cell's output ("(venv) $ one").
		{"a prompt a cell sets: set", frames.Request{Code: "PS1='(venv) $ '; PS0='zero '"}, "", ""},
		{"a prompt a cell sets: not in the next cells", frames.Request{Code: "echo one"}, "one\n", ""},
		// A PROMPT_COMMAND a cell sets (direnv's hook) runs after every
		// cell, as a terminal's prompt runs it after every line: it ran
		// once, at the start of the next cell, and was then replaced.
		{"a prompt command: set", frames.Request{Code: `PROMPT_COMMAND='echo "hook $?"'`}, "hook 0\n", ""},
		{"a prompt command: after each cell, the status kept", frames.Request{Code: "echo a; false"}, "a\nhook 1\n", "exit status 1"},
		{"a prompt command: a cell sees it", frames.Request{Code: `echo "${PROMPT_COMMAND%%;*}"`}, "echo \"hook $?\"\nhook 0\n", ""},
		{"a prompt command: one added in front keeps both", frames.Request{Code: `PROMPT_COMMAND="echo two${PROMPT_COMMAND:+;$PROMPT_COMMAND}"`}, "two\nhook 0\n", ""},
		{"a prompt command: both run", frames.Request{Code: "echo b"}, "b\ntwo\nhook 0\n", ""},
		{"a prompt command: unset", frames.Request{Code: "unset PROMPT_COMMAND"}, "", ""},
		{"a prompt command: gone", frames.Request{Code: "echo c"}, "c\n", ""},
		{"stdout redirected for good", frames.Request{Code: "exec 3>&1 >/dev/null; echo hidden"}, "", ""},
		{"and restored", frames.Request{Code: "exec >&3 3>&-; echo back"}, "back\n", ""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.ID = tt.name
			r := shellExec(context.Background(), s, tt.req)
			if r.err != nil {
				t.Fatalf("execute: %v", r.err)
			}
			got := r.stdout()
			if tt.name == "command not found" {
				if !strings.Contains(got, "evh_no_such_command_x: command not found") {
					t.Errorf("stdout = %q, want a command-not-found message", got)
				}
			} else if got != tt.want {
				t.Errorf("stdout = %q, want %q", got, tt.want)
			}
			if r.frames[0].Type != frames.TypeStarted || r.frames[0].ID != tt.name {
				t.Errorf("first frame = %+v, want started with the cell's id", r.frames[0])
			}
			if r.done.Type != frames.TypeDone || r.done.ID != tt.name || r.done.ExecutionCount != i+1 || r.done.Cancelled {
				t.Errorf("done = %+v, want done of cell %d, not cancelled", r.done, i+1)
			}
			ef, hasErr := r.errorFrame()
			switch {
			case tt.wantErr == "" && (r.done.Status != frames.StatusOK || hasErr):
				t.Errorf("status %q, error frame %+v; want ok", r.done.Status, ef)
			case tt.wantErr != "" && (r.done.Status != frames.StatusError || ef.Ename != "ExitStatus" || ef.Evalue != tt.wantErr):
				t.Errorf("status %q, error frame %+v; want error %q", r.done.Status, ef, tt.wantErr)
			}
		})
	}
}

func TestShellReady(t *testing.T) {
	testkit.Clean(t, time.Minute)
	s := startShell(t, Options{})
	r := s.Ready()
	if r.Type != frames.TypeReady || !strings.HasPrefix(r.Runner, "bash ") || len(r.Runner) < 6 || r.PID != s.Pid() || r.Executable == "" {
		t.Errorf("ready = %+v, want ready with bash version, pid %d and executable", r, s.Pid())
	}
	if !s.Alive() {
		t.Error("a started shell is not Alive")
	}
}

func TestShellExit(t *testing.T) {
	testkit.Clean(t, time.Minute)
	s := startShell(t, Options{})
	r := shellCode(s, "echo bye\nexit 3\necho never")
	if r.err != nil {
		t.Fatalf("execute: %v (an exit is a finished cell, not an error)", r.err)
	}
	ef, _ := r.errorFrame()
	if r.stdout() != "bye\n" || r.done.Status != frames.StatusError || ef.Evalue != "shell exited with status 3" {
		t.Errorf("stdout %q, done %+v, error %+v; want bye, status error, shell exited with status 3", r.stdout(), r.done, ef)
	}
	if s.Alive() {
		t.Error("shell still Alive after exit")
	}
	select {
	case <-s.Done():
	case <-time.After(2 * time.Second):
		t.Error("Done not closed after exit")
	}
	r = shellCode(s, "echo again")
	var de *backend.DeathError
	if !errors.As(r.err, &de) || de.ExitCode != 3 {
		t.Errorf("execute after exit: %v, want a DeathError with exit code 3", r.err)
	}
}

// Jobs left running when bash exits end with it (its reaper ends them),
// which is why Close after an exit looks for nothing by bash's old pid.
func TestShellExitEndsItsSession(t *testing.T) {
	testkit.Clean(t, time.Minute)
	s := startShell(t, Options{})
	r := shellCode(s, "nohup sleep 1000 >/dev/null 2>&1 &\nset -m; nohup sleep 1001 >/dev/null 2>&1 &\necho $!")
	if r.err != nil || len(shellSessionPids(s.Pid())) < 3 {
		t.Fatalf("start jobs: %v; session %v, want bash and two sleeps", r.err, shellSessionPids(s.Pid()))
	}
	if r = shellCode(s, "exit 0"); r.err != nil {
		t.Fatalf("exit: %v", r.err)
	}
	<-s.Done()
	if left := shellSessionPids(s.Pid()); len(left) != 0 {
		t.Errorf("bash exited and was reaped, but its session still has %v", left)
	}
}

func TestShellDeath(t *testing.T) {
	testkit.Clean(t, time.Minute)
	s := startShell(t, Options{})
	r := shellCode(s, "echo before\nkill -9 $$")
	var de *backend.DeathError
	if !errors.As(r.err, &de) || !errors.Is(r.err, backend.ErrDied) || de.Signal != "killed" {
		t.Fatalf("err = %v, want a DeathError for SIGKILL", r.err)
	}
	if r.stdout() != "before\n" {
		t.Errorf("stdout = %q, want the output before the death kept", r.stdout())
	}
	if s.Alive() {
		t.Error("shell Alive after its death")
	}
}

func TestShellCancel(t *testing.T) {
	testkit.Clean(t, time.Minute)
	const grace = 2 * time.Second
	s := startShell(t, Options{Grace: grace})
	// The interpreter itself: a python3 on PATH may be a version manager's
	// shell script (pyenv's shim), which the interrupt can land in first.
	py := "'" + strings.ReplaceAll(testkit.Python(t), "'", `'\''`) + "'"
	tests := []struct {
		name string
		code string
		want string
	}{
		{"external command", "echo start; sleep 30; echo never", "start\n"},
		{"builtin loop", "echo start; while true; do :; done", "start\n"},
		{"pipeline", "echo start; yes | while read -r l; do :; done", "start\n"},
		{"python catching nothing", "echo start; " + py + " -c 'import time; time.sleep(30)' 2>/dev/null; echo never", "start\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			r := shellExec(ctx, s, frames.Request{ID: tt.name, Code: tt.code})
			if r.err != nil {
				t.Fatalf("execute: %v, want a cancelled cell", r.err)
			}
			if !r.done.Cancelled || r.done.Status != frames.StatusError {
				t.Errorf("done = %+v, want cancelled with status error", r.done)
			}
			if got := strings.TrimRight(r.stdout(), "\n") + "\n"; got != tt.want {
				t.Errorf("stdout = %q, want %q (plus the newline bash prints on ^C)", r.stdout(), tt.want)
			}
			// A hang guard, not a timing (load stretches one): each cell
			// runs 30 s or for ever unless the interrupt ends it.
			if r.took > 20*time.Second {
				t.Errorf("took %s: the interrupt did not end the cell", r.took)
			}
			// The shell survives and its state with it.
			if r := shellCode(s, "echo alive"); r.err != nil || r.stdout() != "alive\n" {
				t.Errorf("next cell: %q, %v", r.stdout(), r.err)
			}
		})
	}
}

func TestShellKilledWhenInterruptIgnored(t *testing.T) {
	testkit.Clean(t, time.Minute)
	s := startShell(t, Options{Grace: 300 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	r := shellExec(ctx, s, frames.Request{ID: "k", Code: "echo start; trap '' INT; while true; do :; done"})
	if !errors.Is(r.err, backend.ErrKilled) {
		t.Fatalf("err = %v, want ErrKilled", r.err)
	}
	if r.stdout() != "start\n" {
		t.Errorf("stdout = %q, want the output before the kill kept", r.stdout())
	}
	if s.Alive() {
		t.Error("shell Alive after the kill")
	}
}

// An interrupt that lands while no cell runs must not end, or confuse, the
// next cell.
func TestShellInterruptBetweenCells(t *testing.T) {
	testkit.Clean(t, time.Minute)
	s := startShell(t, Options{})
	// No pause: the cell follows the interrupts at once, as it may.
	for i := range 20 {
		for range 3 {
			if err := s.Interrupt(); err != nil {
				t.Fatalf("interrupt: %v", err)
			}
		}
		r := shellCode(s, "echo ok")
		// Exactly: what the interrupts made bash print at its prompt (a
		// newline each) is no cell's output (Shell.strays).
		if r.err != nil || r.done.Status != frames.StatusOK || r.stdout() != "ok\n" {
			t.Fatalf("cell %d after idle interrupts: stdout %q, done %+v, err %v", i, r.stdout(), r.done, r.err)
		}
	}
}

// A PROMPT_COMMAND of the user's runs once per cell also when an interrupt
// ends the cell (the prompt then runs it, and __evh_end must not again) and
// not at all for interrupts between cells (the prompt's value is ours
// alone there).
func TestShellPromptCommandAndInterrupts(t *testing.T) {
	testkit.Clean(t, time.Minute)
	s := startShell(t, Options{Grace: 2 * time.Second})
	if r := shellCode(s, "PROMPT_COMMAND='echo hook'"); r.err != nil || r.stdout() != "hook\n" {
		t.Fatalf("set: stdout %q, err %v", r.stdout(), r.err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	r := shellExec(ctx, s, frames.Request{ID: "c", Code: "echo start; sleep 30"})
	if r.err != nil || !r.done.Cancelled {
		t.Fatalf("cancelled cell: done %+v, err %v", r.done, r.err)
	}
	if got := r.stdout(); strings.Count(got, "hook") != 1 || !strings.HasPrefix(got, "start\n") {
		t.Errorf("cancelled cell's stdout %q, want start and the hook once", got)
	}
	for i := range 5 {
		for range 3 {
			if err := s.Interrupt(); err != nil {
				t.Fatalf("interrupt: %v", err)
			}
		}
		if r := shellCode(s, "echo ok"); r.err != nil || r.done.Status != frames.StatusOK || r.stdout() != "ok\nhook\n" {
			t.Fatalf("cell %d after idle interrupts: stdout %q, done %+v, err %v", i, r.stdout(), r.done, r.err)
		}
	}
}

// Output a background job writes after its cell ended is reported by the
// cell that is running, or by the next one when none is.
func TestShellBackgroundOutput(t *testing.T) {
	testkit.Clean(t, time.Minute)
	s := startShell(t, Options{})
	// The job writes when told through the FIFO go, and says so through
	// the FIFO wrote; whoever tells it decides when its output comes.
	dir := t.TempDir()
	goFIFO, wroteFIFO := filepath.Join(dir, "go"), filepath.Join(dir, "wrote")
	for _, f := range []string{goFIFO, wroteFIFO} {
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// It ignores SIGINT, as a job meant to outlive an interrupt would.
	job := func(print string) string {
		return fmt.Sprintf("(trap '' INT; cat %[1]s >/dev/null; %[3]s; : > %[2]s) &", goFIFO, wroteFIFO, print)
	}
	release := func() {
		if err := os.WriteFile(goFIFO, nil, 0o600); err != nil {
			t.Error(err)
		}
		if _, err := os.ReadFile(wroteFIFO); err != nil {
			t.Error(err)
		}
	}
	// Once the job waits in cat it ignores SIGINT; until then (before its
	// trap) an interrupt could end it.
	waitCat := func() {
		for deadline := time.Now().Add(10 * time.Second); !slices.ContainsFunc(shellSessionProcs(s.Pid()),
			func(p string) bool { return strings.HasSuffix(p, ":cat\n") }); {
			if time.Now().After(deadline) {
				t.Fatal("the background job never reached cat")
			}
			runtime.Gosched()
		}
	}
	interrupted := func() {
		waitCat()
		if err := s.Interrupt(); err != nil {
			t.Error(err)
		}
		release()
	}
	cancelled := func() {
		waitCat()
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		if r := shellExec(ctx, s, frames.Request{Code: "sleep 5"}); r.err != nil || !r.done.Cancelled {
			t.Errorf("cancelled cell: done %+v, err %v", r.done, r.err)
		}
		release()
	}
	tests := []struct {
		name, print, second string
		between             func()   // what happens between the cells
		want                []string // the second cell's stdout, one of
	}{
		{"while the next cell runs", "echo late",
			fmt.Sprintf(": > %s; cat %s >/dev/null; echo mine", goFIFO, wroteFIFO), func() {}, []string{"late\nmine\n"}},
		{"between cells", "echo late", "echo mine", release, []string{"late\nmine\n"}},
		// bash's newline for the interrupt comes with the job's output, in
		// either order; before it, it is no cell's, after it, which line
		// was bash's cannot be told and it is kept.
		{"between cells, after an interrupt", "echo late", "echo mine", interrupted,
			[]string{"late\nmine\n", "late\n\nmine\n"}},
		// Blank lines are output too: the interrupt costs bash's alone.
		{"blank lines between cells, after an interrupt", "echo; echo", "echo mine", interrupted,
			[]string{"\n\nmine\n"}},
		// The cancelled cell's interrupt reached the cell; the job's blank
		// line in the middle of its output is kept.
		{"a blank line between a job's lines, after a cancelled cell", "echo a; echo; echo b", "echo mine", cancelled,
			[]string{"a\n\nb\nmine\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r1 := shellCode(s, job(tt.print))
			tt.between()
			r2 := shellCode(s, tt.second)
			if r1.err != nil || r2.err != nil {
				t.Fatalf("execute: %v, %v", r1.err, r2.err)
			}
			if r1.stdout() != "" || !slices.Contains(tt.want, r2.stdout()) {
				t.Errorf("stdout = %q then %q, want %q then %q", r1.stdout(), r2.stdout(), "", tt.want)
			}
		})
	}
}

func TestShellBusy(t *testing.T) {
	testkit.Clean(t, time.Minute)
	s := startShell(t, Options{})
	started := make(chan struct{})
	var wg sync.WaitGroup
	var first error
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, first = s.Execute(context.Background(), frames.Request{ID: "a", Code: "sleep 0.5"}, func(f frames.Frame) {
			if f.Type == frames.TypeStarted {
				close(started)
			}
		})
	}()
	<-started
	r := shellCode(s, "echo b")
	wg.Wait()
	if !errors.Is(r.err, backend.ErrBusy) {
		t.Errorf("second execute: %v, want ErrBusy", r.err)
	}
	if first != nil {
		t.Errorf("first execute: %v", first)
	}
}

func TestShellBadRequest(t *testing.T) {
	testkit.Clean(t, time.Minute)
	s := startShell(t, Options{})
	r := shellExec(context.Background(), s, frames.Request{ID: "e", Code: "echo x", Env: map[string]*string{"A-B": shellStr("1")}})
	if !errors.Is(r.err, ErrEnvName) || !strings.Contains(r.err.Error(), `"A-B"`) {
		t.Errorf("err = %v, want ErrEnvName naming the variable", r.err)
	}
	if len(r.frames) != 0 {
		t.Errorf("a rejected request emitted %d frames", len(r.frames))
	}
	if _, err := s.Execute(context.Background(), frames.Request{Exit: true}, func(frames.Frame) {}); err == nil {
		t.Error("an exit request was accepted as a cell")
	}
	if r := shellCode(s, "echo ok"); r.err != nil || r.stdout() != "ok\n" || r.done.ExecutionCount != 1 {
		t.Errorf("after rejected requests: %q, %+v, %v; want ok as cell 1", r.stdout(), r.done, r.err)
	}
}

func TestShellCloseAndKill(t *testing.T) {
	jobs := "sleep 100 & nohup sleep 100 >/dev/null 2>&1 & setsid sleep 100 & (trap '' HUP; sleep 100) &"
	tests := []struct {
		name string
		stop func(*Shell) error
	}{
		{"close", (*Shell).Close},
		{"kill", (*Shell).Kill},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testkit.Clean(t, time.Minute)
			s, err := Start(context.Background(), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if r := shellCode(s, jobs+" sleep 0.1"); r.err != nil {
				t.Fatalf("execute: %v", r.err)
			}
			if err := tt.stop(s); err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			shellCheckGone(t, s)
			for _, again := range []func() error{s.Close, s.Kill} {
				if err := again(); err != nil {
					t.Errorf("second stop: %v", err)
				}
			}
			if r := shellCode(s, "echo x"); !errors.Is(r.err, backend.ErrClosed) {
				t.Errorf("execute after %s: %v, want ErrClosed", tt.name, r.err)
			}
			if s.Alive() {
				t.Errorf("Alive after %s", tt.name)
			}
		})
	}
}

// Close during a running cell kills it; the cell reports ErrClosed.
func TestShellCloseWhileBusy(t *testing.T) {
	testkit.Clean(t, time.Minute)
	s, err := Start(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	res := make(chan error, 1)
	go func() {
		_, err := s.Execute(context.Background(), frames.Request{ID: "a", Code: "sleep 30"}, func(f frames.Frame) {
			if f.Type == frames.TypeStarted {
				close(started)
			}
		})
		res <- err
	}()
	<-started
	if err := s.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if err := <-res; !errors.Is(err, backend.ErrClosed) {
		t.Errorf("execute: %v, want ErrClosed", err)
	}
	shellCheckGone(t, s)
}

func TestShellStartErrors(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// A stand-in that accepts bash's arguments but never answers: it copies
	// what it is sent back to the terminal.
	mute := filepath.Join(t.TempDir(), "mute-bash")
	if err := os.WriteFile(mute, []byte("#!/bin/sh\necho loading\nexec cat\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		opts     Options
		is       error
		wantText string // in the error, which carries the output tail
	}{
		{"no such bash", Options{Bash: "/nonexistent/bash"}, backend.ErrNoInterpreter, "Options.Bash"},
		{"bash not on PATH", Options{Bash: "evh-no-such-bash", Env: []string{"PATH=/nonexistent"}}, backend.ErrNoInterpreter, "evh-no-such-bash"},
		{"dir is a file", Options{Dir: notDir}, nil, "is not a directory"},
		// A cwd removed after the request named it: why, not "not a directory".
		{"dir removed", Options{Dir: filepath.Join(t.TempDir(), "removed")}, fs.ErrNotExist, "no such file or directory"},
		{"exits before ready", Options{Bash: "sleep"}, nil, "sleep: unrecognized option"},
		{"never ready", Options{Bash: mute, StartTimeout: 300 * time.Millisecond}, backend.ErrStartTimeout, "__evh_end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testkit.Clean(t, time.Minute)
			s, err := Start(context.Background(), tt.opts)
			if err == nil {
				s.Kill()
				t.Fatal("started, want an error")
			}
			var se *backend.StartError
			if !errors.As(err, &se) {
				t.Errorf("err = %T %v, want a *backend.StartError", err, err)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("err = %v, want it to match %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("err = %v, want it to contain %q", err, tt.wantText)
			}
		})
	}
}

func TestShellEnvDefaults(t *testing.T) {
	testkit.Clean(t, time.Minute)
	s := startShell(t, Options{Env: []string{"PATH=" + os.Getenv("PATH"), "PAGER=less", "EVH_Y=y"}})
	r := shellCode(s, `echo "$TERM $PAGER $GIT_PAGER $EVH_Y ${HOME-nohome}"`)
	if r.err != nil || r.stdout() != "dumb less cat y nohome\n" {
		t.Errorf("stdout %q, err %v; want the given env plus defaults for what is absent", r.stdout(), r.err)
	}
}

// A cancel right after a cell's first output lands while bash forks the
// next command; it used to reach bash alone, and sleep ran on until the
// grace killed the shell.
func TestShellCancelDuringFork(t *testing.T) {
	s := startShell(t, Options{Grace: 5 * time.Second})
	for i := range 20 {
		ctx, cancel := context.WithCancel(context.Background())
		var out strings.Builder
		d, err := s.Execute(ctx, frames.Request{ID: "fork", Code: "echo sleeping\nsleep 30"}, func(f frames.Frame) {
			out.WriteString(f.Data)
			if strings.Contains(out.String(), "sleeping") {
				cancel()
			}
		})
		cancel()
		if err != nil || !d.Cancelled {
			t.Fatalf("cancel %d: done %+v, err %v; want cancelled", i, d, err)
		}
	}
}
