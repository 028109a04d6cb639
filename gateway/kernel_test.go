package gateway

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/backend"
	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/runner"
)

// summary renders a frame compactly for table comparison.
func summary(f frames.Frame) string {
	switch f.Type {
	case frames.TypeStdout, frames.TypeStderr:
		return f.Type.String() + ":" + f.Data
	case frames.TypeDisplay, frames.TypeUpdateDisplay, frames.TypeResult:
		s, _ := f.Bundle.Text("text/plain")
		if h, ok := f.Bundle.Text("text/html"); ok {
			s += "|html=" + h
		}
		if f.DisplayID != "" {
			s += "|id"
		}
		return f.Type.String() + ":" + s
	case frames.TypeError:
		return "error:" + f.Ename + ":" + f.Evalue
	case frames.TypeInput:
		return "input:" + f.Prompt
	case frames.TypeWarning:
		return "warning:" + f.Message
	case frames.TypeClearOutput:
		if f.Wait {
			return "clear_output:wait"
		}
		return "clear_output"
	case frames.TypeDone:
		s := "done:" + f.Status
		if f.Cancelled {
			s += ":cancelled"
		}
		return s
	}
	return f.Type.String()
}

// run executes code and returns the summaries of the emitted frames and
// the done frame, checking that every frame carries the cell's id.
func run(t *testing.T, k *Kernel, ctx context.Context, req frames.Request) ([]string, frames.Frame, error) {
	t.Helper()
	var got []string
	done, err := k.Execute(ctx, req, func(f frames.Frame) {
		if f.ID != req.ID {
			t.Errorf("frame %s has id %q, want %q", f.Type, f.ID, req.ID)
		}
		got = append(got, summary(f))
	})
	if err == nil {
		if done.Type != frames.TypeDone || done.ID != req.ID {
			t.Errorf("done frame = %+v, want type done id %q", done, req.ID)
		}
		got = append(got, summary(done))
	}
	return got, done, err
}

func ptr(s string) *string { return &s }

// hostname is this machine's name, which a local kernel reports too.
func hostname() string {
	h, _ := os.Hostname()
	return h
}

func TestExecuteConformance(t *testing.T) {
	k := shared(t)
	dir := t.TempDir()
	cases := []struct {
		name string
		req  frames.Request
		want []string
	}{
		{"print", frames.Request{Code: "print('hi')"}, []string{"started", "stdout:hi\n", "done:ok"}},
		{"result", frames.Request{Code: "1+1"}, []string{"started", "result:2", "done:ok"}},
		{"none result is silent", frames.Request{Code: "None"}, []string{"started", "done:ok"}},
		{"stderr", frames.Request{Code: "import sys; sys.stderr.write('e\\n'); sys.stderr.flush()"},
			[]string{"started", "stderr:e\n", "done:ok"}},
		{"display and update", frames.Request{Code: "from IPython.display import display, HTML\n" +
			"h = display(HTML('<b>x</b>'), display_id=True)\nh.update(HTML('y'))"},
			[]string{"started", "display:<IPython.core.display.HTML object>|html=<b>x</b>|id",
				"update_display:<IPython.core.display.HTML object>|html=y|id", "done:ok"}},
		{"clear output", frames.Request{Code: "from IPython.display import clear_output\nprint('a', flush=True)\nclear_output(wait=True)"},
			[]string{"started", "stdout:a\n", "clear_output:wait", "done:ok"}},
		{"error", frames.Request{Code: "1/0"},
			[]string{"started", "error:ZeroDivisionError:division by zero", "done:error"}},
		{"stdin fails at once", frames.Request{Code: "x = input('name? ')\nprint('not reached')"},
			[]string{"started", "input:name? ", "error:StdinNotImplementedError:" + stdinMessage, "done:error"}},
		{"cwd and env", frames.Request{Code: "import os, sys\nprint(os.getcwd(), sys.path[0], os.environ['EVH_X'], 'EVH_GONE' in os.environ)",
			Cwd: dir, Env: map[string]*string{"EVH_X": ptr("1"), "EVH_GONE": nil}},
			[]string{"started", "stdout:" + dir + " " + dir + " 1 False\n", "done:ok"}},
		{"missing cwd fails before the code", frames.Request{Code: "print('not reached')", Cwd: filepath.Join(dir, "nope")},
			[]string{"started", "error:FileNotFoundError:evalhost could not apply the cell's cwd/env: working directory '" + filepath.Join(dir, "nope") +
				"' does not exist on the kernel's host " + hostname() + ": a gateway's kernel runs there, not where evalhost runs; " +
				"create the directory there (or mount it), or run evalhost from a directory that exists on both", "done:error"}},
		{"state persists", frames.Request{Code: "counter = 41"}, []string{"started", "done:ok"}},
		{"state read back", frames.Request{Code: "counter + 1"}, []string{"started", "result:42", "done:ok"}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.ID = "c" + string(rune('a'+i))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			got, done, err := run(t, k, ctx, tc.req)
			if err != nil {
				t.Fatalf("Execute: %v", err)
			}
			got = joinStreams(got)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("frames:\n got %q\nwant %q", got, tc.want)
			}
			if tc.want[len(tc.want)-1] == "done:ok" && done.ExecutionCount <= 0 {
				t.Errorf("execution count %d, want > 0", done.ExecutionCount)
			}
		})
	}
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m") // IPython colours its tracebacks

// input()'s traceback shows the cell's line and evalhost's frame by its
// name, not a line of the start snippet posing as a cell.
func TestStdinTracebackShowsTheCell(t *testing.T) {
	k := shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var tb string
	if _, err := k.Execute(ctx, frames.Request{ID: "stdin-tb", Code: "answer = input('x? ')"}, func(f frames.Frame) {
		if f.Type == frames.TypeError {
			tb = ansi.ReplaceAllString(strings.Join(f.Traceback, "\n"), "")
		}
	}); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if !strings.Contains(tb, "answer = input('x? ')") || strings.Contains(tb, "__evh_start") || !strings.Contains(tb, "<evalhost>") {
		t.Errorf("traceback:\n%s", tb)
	}
}

func TestInterruptCancelsCell(t *testing.T) {
	k := shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	got, done, err := run(t, k, ctx, frames.Request{ID: "sleep", Code: "import time\nprint('before', flush=True)\ntime.sleep(30)"})
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	want := []string{"started", "stdout:before\n", "error:KeyboardInterrupt:", "done:error:cancelled"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("frames:\n got %q\nwant %q", got, want)
	}
	if !done.Cancelled {
		t.Error("done not cancelled")
	}
	got, _, err = run(t, k, context.Background(), frames.Request{ID: "after", Code: "'alive'"})
	if err != nil || strings.Join(got, ",") != "started,result:'alive',done:ok" {
		t.Errorf("kernel after interrupt: %q, %v", got, err)
	}
}

func TestUnsettledInterruptKills(t *testing.T) {
	k := ownKernel(t, KernelOptions{Grace: 300 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	code := "import time\nprint('before', flush=True)\nwhile True:\n    try:\n        time.sleep(10)\n    except KeyboardInterrupt:\n        pass"
	got, _, err := run(t, k, ctx, frames.Request{ID: "stubborn", Code: code})
	if !errors.Is(err, backend.ErrKilled) {
		t.Fatalf("err = %v, want ErrKilled", err)
	}
	if len(got) < 2 || got[1] != "stdout:before\n" {
		t.Errorf("output before the kill lost: %q", got)
	}
	if k.Alive() {
		t.Error("kernel alive after kill")
	}
	if err := k.Kill(); err != nil {
		t.Errorf("second Kill: %v", err)
	}
	if _, err := k.Execute(context.Background(), frames.Request{ID: "x", Code: "1"}, func(frames.Frame) {}); !errors.Is(err, backend.ErrClosed) {
		t.Errorf("Execute after kill: %v, want ErrClosed", err)
	}
}

// TestKernelDeathIsDeathError: what a cell flushed before its kernel died
// arrives, in order, before the death; ipykernel's own flush returns before
// the output is on the socket (flushsync.go), and a SIGKILL right after lost
// a fifth of it.
func TestKernelDeathIsDeathError(t *testing.T) {
	var lines, want []string
	for i := range 20 {
		lines = append(lines, fmt.Sprintf("print(%d, flush=True)\nprint(%d, file=sys.stderr, flush=True)", i, -i))
		want = append(want, fmt.Sprintf("stdout:%d\n", i), fmt.Sprintf("stderr:%d\n", -i))
	}
	for _, tc := range []struct {
		name, code string
		want       []string
	}{
		{"exit after a flushed print", "print('last words', flush=True)\nos._exit(3)", []string{"stdout:last words\n"}},
		{"sigkill after a flushed print", "print('last words', flush=True)\nos.kill(os.getpid(), signal.SIGKILL)",
			[]string{"stdout:last words\n"}},
		{"sigkill after flushed lines on both streams", strings.Join(lines, "\n") + "\nos.kill(os.getpid(), signal.SIGKILL)", want},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := ownKernel(t, KernelOptions{})
			if w := k.Warnings(); len(w) > 0 {
				t.Errorf("start warnings: %+v", w)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			got, _, err := run(t, k, ctx, frames.Request{ID: "die", Code: "import os, signal, sys\n" + tc.code})
			var de *backend.DeathError
			if !errors.As(err, &de) || !errors.Is(err, backend.ErrDied) {
				t.Fatalf("err = %v, want *backend.DeathError", err)
			}
			// ipykernel's timer may flush part of a line (a 0.2 s timer an
			// earlier write set): what matters is what arrived, and in order
			if want := joinStreams(append([]string{"started"}, tc.want...)); !slices.Equal(joinStreams(got), want) {
				t.Errorf("frames before the death:\n got %q\nwant %q", got, want)
			}
			select {
			case <-k.Done():
			default:
				t.Error("Done not closed after death")
			}
			if _, err := k.Execute(ctx, frames.Request{ID: "again", Code: "1"}, func(frames.Frame) {}); !errors.Is(err, backend.ErrDied) {
				t.Errorf("Execute on dead kernel: %v, want ErrDied", err)
			}
		})
	}
}

func TestExecuteBusy(t *testing.T) {
	k := shared(t)
	started := make(chan struct{})
	result := make(chan error, 1)
	go func() {
		_, err := k.Execute(context.Background(), frames.Request{ID: "slow", Code: "import time; time.sleep(0.5)"}, func(f frames.Frame) {
			if f.Type == frames.TypeStarted {
				close(started)
			}
		})
		result <- err
	}()
	<-started
	_, err := k.Execute(context.Background(), frames.Request{ID: "second", Code: "1"}, func(frames.Frame) {})
	if !errors.Is(err, backend.ErrBusy) {
		t.Errorf("concurrent Execute: %v, want ErrBusy", err)
	}
	if err := <-result; err != nil {
		t.Errorf("first Execute: %v", err)
	}
}

// TestStartRunsPreludeAndModules: the kernel runs the prelude and the
// modules runner.FindModules found, each read from the file judged: one
// replaced since is not run, and is a warning, as one that raises is.
func TestStartRunsPreludeAndModules(t *testing.T) {
	user, project := t.TempDir(), t.TempDir()
	write := func(dir, name, src string) string {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(dir, name)
	}
	write(user, "greet.py", "def greet(): return 'user'\n")
	write(project, "greet.py", "def greet(): return 'project'\n")
	write(user, "extra.py", "EXTRA = 7\n")
	write(user, "broken.py", "raise RuntimeError('boom')\n")
	swapped := write(user, "swapped.py", "SWAPPED = 'judged'\n")
	var places []runner.ModulePlace
	for _, d := range []string{user, project, filepath.Join(user, "absent")} {
		places = append(places, runner.ModulePlace{Base: filepath.Dir(d), Rel: filepath.Base(d)})
	}
	mods, refused := runner.FindModules(places)
	if len(refused) > 0 {
		t.Fatal(refused)
	}
	if err := os.Rename(write(t.TempDir(), "other.py", "SWAPPED = 'other'\n"), swapped); err != nil {
		t.Fatal(err)
	}
	k := ownKernel(t, KernelOptions{Prelude: "PRELUDE_OK = True", Modules: mods})
	ready := k.Ready()
	if ready.Type != frames.TypeReady || ready.PID <= 0 || !strings.HasPrefix(ready.Python, "3.") || ready.Executable == "" {
		t.Errorf("ready frame = %+v", ready)
	}
	ws := k.Warnings()
	if len(ws) != 2 || !strings.Contains(ws[0].Message, "extension module "+swapped+" was not loaded: it is not the file evalhost checked") ||
		!strings.Contains(ws[1].Message, "broken.py raised RuntimeError: boom") {
		t.Errorf("warnings = %+v, want one about broken.py and one about swapped.py", ws)
	}
	got, _, err := run(t, k, context.Background(), frames.Request{ID: "use",
		Code: "import os\nprint(PRELUDE_OK, greet(), EXTRA, 'KG_AUTH_TOKEN' in os.environ, 'SWAPPED' in dir())"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"started", "stdout:True project 7 False False\n", "done:ok"}
	if err != nil || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
}

func TestCloseTwiceAndExecuteAfterClose(t *testing.T) {
	k := ownKernel(t, KernelOptions{})
	if err := k.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := k.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := k.Execute(context.Background(), frames.Request{ID: "x", Code: "1"}, func(frames.Frame) {}); !errors.Is(err, backend.ErrClosed) {
		t.Errorf("Execute after Close: %v, want ErrClosed", err)
	}
}

func TestDefaultPreludeIsTheRunners(t *testing.T) {
	k := shared(t)
	got, _, err := run(t, k, context.Background(), frames.Request{ID: "p", Code: "callable(read) and callable(write)"})
	if err != nil || strings.Join(got, ",") != "started,result:True,done:ok" {
		t.Errorf("runner prelude helpers missing: %q, %v", got, err)
	}
}

// Output faster than Jupyter's default iopub limit (1 MB/s) arrives whole:
// the shared gateway is started without that throttle, which would replace
// it with "IOPub data rate exceeded" and still report the cell ok.
func TestBulkOutputNotThrottled(t *testing.T) {
	k := shared(t)
	const lines, width = 160, 65535 // about 10 MiB in well under a second
	n := 0
	done, err := k.Execute(context.Background(), frames.Request{ID: "bulk",
		Code: "import sys\nfor _ in range(160): sys.stdout.write('x' * 65535 + '\\n')"},
		func(f frames.Frame) {
			if f.Type == frames.TypeStdout {
				n += len(f.Data)
			}
			if f.Type == frames.TypeStderr && strings.Contains(f.Data, "rate exceeded") {
				t.Errorf("output was throttled: %q", f.Data)
			}
		})
	if err != nil || done.Status != frames.StatusOK {
		t.Fatalf("done %+v, err %v", done, err)
	}
	if want := lines * (width + 1); n != want {
		t.Fatalf("stdout bytes %d, want %d", n, want)
	}
}

// A cell printing in a tight loop streams: ipykernel would otherwise send
// all of it as one message when the cell ends (see maxStreamText).
func TestBulkOutputStreamsInBoundedMessages(t *testing.T) {
	k := shared(t)
	const blocks = 256 // 16 MiB
	var n, count, largest int
	done, err := k.Execute(context.Background(), frames.Request{ID: "stream",
		Code: fmt.Sprintf("import sys\nb = 'x' * 65535 + '\\n'\nfor _ in range(%d): sys.stdout.write(b)", blocks)},
		func(f frames.Frame) {
			if f.Type == frames.TypeStdout {
				n += len(f.Data)
				count++
				largest = max(largest, len(f.Data))
			}
			if f.Type == frames.TypeWarning {
				t.Errorf("warning: %s", f.Message)
			}
		})
	if err != nil || done.Status != frames.StatusOK {
		t.Fatalf("done %+v, err %v", done, err)
	}
	if want := blocks << 16; n != want {
		t.Fatalf("stdout bytes %d, want %d", n, want)
	}
	if largest > 2*maxStreamText || count < blocks<<16/(2*maxStreamText) {
		t.Errorf("%d stdout frames, the largest %d bytes; want frames of about %d bytes", count, largest, maxStreamText)
	}
}

// A message larger than the kernel's bound is dropped with a warning that
// says so; the kernel and its state live on.
func TestOversizedMessageDropped(t *testing.T) {
	k := ownKernel(t, KernelOptions{maxMessage: 1 << 20})
	var got []string
	done, err := k.Execute(context.Background(), frames.Request{ID: "big",
		Code: "kept = 7\ndisplay({'text/plain': 'y' * 3_000_000}, raw=True)\nprint('after')"},
		func(f frames.Frame) { got = append(got, summary(f)) })
	if err != nil || done.Status != frames.StatusOK {
		t.Fatalf("done %+v, err %v; frames %q", done, err, got)
	}
	text := strings.Join(got, "\n")
	if !strings.Contains(text, "warning:dropped a kernel message of 2.9 MiB") || !strings.Contains(text, "stdout:after") {
		t.Errorf("want a warning about the dropped message and the output after it; got:\n%.2000s", text)
	}
	next, _, err := run(t, k, context.Background(), frames.Request{ID: "next", Code: "kept"})
	if err != nil || !slices.Contains(next, "result:7") {
		t.Fatalf("kernel after the drop: %q, err %v", next, err)
	}
}

// The kernel's own count of what a cell wrote comes back with its reply and
// is checked against what arrived: here the cell inflates the count by 5, as
// if iopub had dropped 5 characters.
func TestWrittenCountComesBack(t *testing.T) {
	k := shared(t)
	got, _, err := run(t, k, context.Background(), frames.Request{ID: "count",
		Code: "import sys\nsys.modules['_evalhost_io'].written[0] += 5\nprint('héllo')"})
	if err != nil {
		t.Fatal(err)
	}
	want := "warning:5 of the 11 characters the cell wrote to stdout had not arrived when it ended"
	if !strings.Contains(strings.Join(got, "\n"), want) {
		t.Errorf("frames %q; want a warning %q", got, want)
	}
	got, _, _ = run(t, k, context.Background(), frames.Request{ID: "next", Code: "print('fine')"})
	if strings.Contains(strings.Join(got, "\n"), "warning") {
		t.Errorf("the next cell's count was not reset: %q", got)
	}
	// IPython runs nothing for a blank cell, not even the hook that resets
	// the count: the count is the cell's before, whose output arrived.
	got, _, _ = run(t, k, context.Background(), frames.Request{ID: "blank", Code: " \n"})
	if strings.Contains(strings.Join(got, "\n"), "warning") {
		t.Errorf("a blank cell after one that printed: %q", got)
	}
}

// joinStreams joins adjacent stdout (or stderr) summaries: ipykernel sends
// what a print wrote in as many stream messages as its flush timer cut it
// into, which a busy machine can make two.
func joinStreams(got []string) []string {
	var out []string
	for _, g := range got {
		if n := len(out); n > 0 {
			for _, p := range []string{"stdout:", "stderr:"} {
				if strings.HasPrefix(g, p) && strings.HasPrefix(out[n-1], p) {
					out[n-1] += strings.TrimPrefix(g, p)
					g = ""
					break
				}
			}
			if g == "" {
				continue
			}
		}
		out = append(out, g)
	}
	return out
}

// The test gateway's kernels keep their IPython history in the test
// process's own directory (testkit.IsolateIPython), not the user's.
func TestKernelIPythonDirIsTheTests(t *testing.T) {
	dir := os.Getenv("IPYTHONDIR")
	if dir == "" {
		t.Fatal("IPYTHONDIR is not set: TestMain did not isolate IPython")
	}
	got, _, err := run(t, shared(t), context.Background(), frames.Request{ID: "hist",
		Code: "print(get_ipython().history_manager.hist_file)"})
	if err != nil || len(got) < 2 || !strings.HasPrefix(strings.TrimPrefix(got[1], "stdout:"), dir+string(os.PathSeparator)) {
		t.Errorf("history file: %q, %v; want it under %s", got, err, dir)
	}
}
