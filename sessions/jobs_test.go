package sessions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// ticker is a Python cell that prints "line N" every period until the file
// release exists, then "end <count>".
func ticker(release string, period time.Duration) Cell {
	return Cell{Language: LangPython, Timeout: time.Second, OnTimeout: OnTimeoutDetach, Code: fmt.Sprintf(`
import os, time
n = 0
while not os.path.exists(%q):
    print("line", n, flush=True)
    n += 1
    time.sleep(%g)
print("end", n, flush=True)
`, release, period.Seconds())}
}

func release(t *testing.T, path string) {
	t.Helper()
	if err := releaseFile(path); err != nil {
		t.Fatal(err)
	}
}

func releaseFile(path string) error { return os.WriteFile(path, nil, 0o600) }

// jobEnds counts OnJobEnd calls per job.
type jobEnds struct {
	mu   sync.Mutex
	seen map[string][]JobInfo
}

func (e *jobEnds) hook(info JobInfo) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.seen == nil {
		e.seen = map[string][]JobInfo{}
	}
	e.seen[info.ID] = append(e.seen[info.ID], info)
}

func (e *jobEnds) of(id string) []JobInfo {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.seen[id]
}

var lineRe = regexp.MustCompile(`^line (\d+)$`)

// checkLines fails unless text is "line k", "line k+1", … (and optionally
// "end n" with n the next number), returning the next expected number.
func checkLines(t *testing.T, text string, from int) int {
	t.Helper()
	next := from
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if l == "" {
			continue
		}
		if m := lineRe.FindStringSubmatch(l); m != nil {
			if n, _ := strconv.Atoi(m[1]); n != next {
				t.Fatalf("line %d where line %d was due (lost or doubled output) in %q", n, next, text)
			}
			next++
			continue
		}
		if l != fmt.Sprintf("end %d", next) {
			t.Fatalf("unexpected line %q (after line %d) in %q", l, next-1, text)
		}
	}
	return next
}

func TestDetachedJobLifecycle(t *testing.T) {
	var ends jobEnds
	r := newTestRegistry(t, Config{OnJobEnd: ends.hook})
	dir := t.TempDir()
	rel := filepath.Join(dir, "release")
	eval(t, r, Request{Session: "a", Cwd: dir, Cells: []Cell{py("kept = 41")}})

	res, c := eval(t, r, Request{Session: "a", Cwd: dir, KeepGoing: true, Cells: []Cell{ticker(rel, 50*time.Millisecond), py("print('never')")}})
	cell := res.Cells[0]
	if res.Status != StatusDetached || res.FailedCell != 0 || cell.Status != StatusDetached || cell.Job == "" {
		t.Fatalf("request %s (failed cell %d), cell %+v; want the cell detached with a job", res.Status, res.FailedCell, cell)
	}
	if !strings.HasPrefix(cell.Output.Text, "line 0\n") || !strings.Contains(c.Output(), "line 0\n") || cell.JobOffset != int64(len(cell.Output.Text)) {
		t.Fatalf("detached output %q (offset %d), streamed %q; want the lines so far, offset at their end", cell.Output.Text, cell.JobOffset, c.Output())
	}
	if res.Cells[1].Status != StatusSkipped || !strings.Contains(res.Cells[1].Message, cell.Job) {
		t.Fatalf("cell after the detached one: %+v; want skipped naming the job", res.Cells[1])
	}
	streamed := len(c.All())
	// The detached result's output, then the job's from its offset on:
	// together, every line once (checked at the end; a page may end
	// within a line).
	var all strings.Builder
	all.WriteString(cell.Output.Text)

	// Only new output from the offset the result gave.
	var info JobInfo
	offset := cell.JobOffset
	waitFor(t, func() bool {
		var err error
		if info, err = r.Job(cell.Job, offset); err != nil {
			t.Fatal(err)
		}
		return info.Output.Text != ""
	})
	if info.State != JobRunning || info.Status != StatusDetached || info.Session != "a" || info.Output.Offset != offset {
		t.Fatalf("job info %+v", info)
	}
	all.WriteString(info.Output.Text)

	t.Run("a request to the busy session is refused naming the job", func(t *testing.T) {
		_, err := r.Queue(Request{Session: "a", Cwd: dir, Cells: []Cell{py("1")}})
		var busy *SessionBusyError
		if !errors.As(err, &busy) || busy.Job != cell.Job || !strings.Contains(err.Error(), cell.Job) {
			t.Fatalf("Queue = %v; want a SessionBusyError naming %s", err, cell.Job)
		}
		if err := r.Reset(context.Background(), "a", dir); !errors.Is(err, ErrSessionBusy) {
			t.Fatalf("Reset = %v; want ErrSessionBusy", err)
		}
	})
	t.Run("another session runs meanwhile", func(t *testing.T) {
		if res, c := eval(t, r, Request{Session: "b", Cwd: dir, Cells: []Cell{py("print('b ran')")}}); res.Status != StatusOK {
			t.Fatalf("session b: %s %q", res.Status, c.Output())
		}
	})
	t.Run("sessions lists the job", func(t *testing.T) {
		for _, s := range r.Sessions() {
			if s.Session == "a" && (s.Job != cell.Job || !s.Busy) {
				t.Fatalf("session a: %+v; want busy with job %s", s, cell.Job)
			}
		}
	})

	release(t, rel)
	done, err := r.WaitJob(context.Background(), cell.Job)
	if err != nil {
		t.Fatal(err)
	}
	if done.State != JobDone || done.Status != StatusOK || done.Result == nil || !strings.Contains(done.Result.Output.Text, "end ") {
		t.Fatalf("waited job: %+v", done)
	}
	if got := ends.of(cell.Job); len(got) != 1 || got[0].Status != StatusOK {
		t.Fatalf("OnJobEnd calls for %s: %+v; want one, ok", cell.Job, got)
	}
	if len(c.All()) != streamed {
		t.Fatalf("the request's emit was called after its cell detached")
	}
	// The rest of the output, to the end.
	for offset = info.Output.Next; ; offset = info.Output.Next {
		if info, err = r.Job(cell.Job, offset); err != nil {
			t.Fatal(err)
		}
		all.WriteString(info.Output.Text)
		if info.Output.Next == info.OutputBytes {
			break
		}
	}
	next := checkLines(t, all.String(), 0)
	if !strings.HasSuffix(all.String(), fmt.Sprintf("end %d\n", next)) {
		t.Fatalf("output ended without its last line: %q", all.String())
	}
	// The session takes requests again, with its state.
	if res, c := eval(t, r, Request{Session: "a", Cwd: dir, Cells: []Cell{py("print(kept + 1)")}}); res.Status != StatusOK || !strings.Contains(c.Output(), "42") {
		t.Fatalf("after the job: %s %q", res.Status, c.Output())
	}
}

// A request queued before the cell ahead of it detached is refused when it
// detaches, instead of waiting for the job.
func TestQueuedRequestRefusedWhenCellDetaches(t *testing.T) {
	r := newTestRegistry(t, Config{})
	dir := t.TempDir()
	rel := filepath.Join(dir, "release")
	first, err := r.Queue(Request{Session: "q", Cwd: dir, Cells: []Cell{ticker(rel, 50*time.Millisecond)}})
	if err != nil {
		t.Fatal(err)
	}
	second, err := r.Queue(Request{Session: "q", Cwd: dir, Cells: []Cell{py("print('second')")}})
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 1)
	go func() {
		_, err := second.Run(context.Background(), nil)
		errs <- err
	}()
	res, err := first.Run(context.Background(), nil)
	if err != nil || res.Status != StatusDetached {
		t.Fatalf("first: %+v %v", res, err)
	}
	if err := <-errs; !errors.Is(err, ErrSessionBusy) || !strings.Contains(err.Error(), res.Cells[0].Job) {
		t.Fatalf("queued request: %v; want ErrSessionBusy naming %s", err, res.Cells[0].Job)
	}
	release(t, rel)
	if _, err := r.WaitJob(context.Background(), res.Cells[0].Job); err != nil {
		t.Fatal(err)
	}
}

func detachOne(t *testing.T, r *Registry, req Request) CellResult {
	t.Helper()
	res, c := eval(t, r, req)
	if res.Cells[0].Status != StatusDetached {
		t.Fatalf("cell %+v (output %q); want detached", res.Cells[0], c.Output())
	}
	return res.Cells[0]
}

func TestJobEndings(t *testing.T) {
	var ends jobEnds
	r := newTestRegistry(t, Config{Grace: 500 * time.Millisecond, OnJobEnd: ends.hook})
	dir := t.TempDir()
	loop := func(code string) Cell {
		return Cell{Language: LangPython, Timeout: time.Second, OnTimeout: OnTimeoutDetach,
			Code: "import time, os, signal\nprint('started', flush=True)\n" + code}
	}
	tests := []struct {
		name      string
		session   string
		cell      Cell
		end       func(id string) (JobInfo, error)
		status    Status
		message   string
		stateLost bool
	}{
		{"stop interrupts it and keeps the session's state", "stop",
			loop("while True: time.sleep(0.05)"),
			func(id string) (JobInfo, error) { return r.StopJob(context.Background(), id) },
			StatusCancelled, reasonStopRequest, false},
		{"an interpreter that dies is reported, not retried", "dies",
			loop("time.sleep(1.5)\nos.kill(os.getpid(), signal.SIGKILL)"),
			func(id string) (JobInfo, error) { return r.WaitJob(context.Background(), id) },
			StatusKilled, "not retried", true},
		{"maxRuntime stops it as a timeout", "max",
			func() Cell { c := loop("while True: time.sleep(0.05)"); c.MaxRuntime = 2 * time.Second; return c }(),
			func(id string) (JobInfo, error) { return r.WaitJob(context.Background(), id) },
			StatusTimeout, "maxRuntime", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eval(t, r, Request{Session: tt.session, Cwd: dir, Cells: []Cell{py("kept = 1")}})
			cell := detachOne(t, r, Request{Session: tt.session, Cwd: dir, Cells: []Cell{tt.cell}})
			info, err := tt.end(cell.Job)
			if err != nil {
				t.Fatal(err)
			}
			res := info.Result
			if info.State != JobDone || res == nil || res.Status != tt.status || !strings.Contains(res.Message, tt.message) ||
				res.StateLost != tt.stateLost || res.Retried {
				t.Fatalf("job ended %+v, result %+v; want %s with %q, stateLost %v, not retried", info, res, tt.status, tt.message, tt.stateLost)
			}
			if got := ends.of(cell.Job); len(got) != 1 || got[0].Status != tt.status {
				t.Fatalf("OnJobEnd: %+v; want one call with %s", got, tt.status)
			}
			want := "True"
			if tt.stateLost {
				want = "False"
			}
			if res, c := eval(t, r, Request{Session: tt.session, Cwd: dir, Cells: []Cell{py("print('kept' in globals())")}}); res.Status != StatusOK || !strings.Contains(c.Output(), want) {
				t.Fatalf("after the job: %s %q; want state kept = %s", res.Status, c.Output(), want)
			}
		})
	}
}

// After CloseSession returns, its job is no longer listed as running: a
// client that saw the close answered must not see the job run on.
func TestJobEndedWhenCloseReturns(t *testing.T) {
	r := newTestRegistry(t, Config{Grace: 2 * time.Second})
	dir := t.TempDir()
	// Ignores the interrupt, so only a kill ends it.
	stubborn := Cell{Language: LangPython, Timeout: time.Second, OnTimeout: OnTimeoutDetach,
		Code: "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('started', flush=True)\nwhile True: time.sleep(0.05)"}
	job := detachOne(t, r, Request{Session: "c", Cwd: dir, Cells: []Cell{stubborn}})
	if !r.CloseSession("c") {
		t.Fatal("CloseSession found no session")
	}
	for _, info := range r.Jobs() {
		if info.ID == job.Job && info.State == JobRunning {
			t.Fatalf("job %s still listed running after CloseSession returned: %+v", job.Job, info)
		}
	}
	info, err := r.Job(job.Job, 0)
	if err != nil || info.Result == nil || info.Status != StatusCancelled || !strings.Contains(info.Message, reasonSessionClosed) {
		t.Fatalf("job of a closed session: %+v %v; want cancelled, saying its session was closed", info, err)
	}
}

func TestJobStoppedByClose(t *testing.T) {
	var ends jobEnds
	r := newTestRegistry(t, Config{Grace: 500 * time.Millisecond, OnJobEnd: ends.hook})
	dir := t.TempDir()
	forever := Cell{Language: LangPython, Timeout: time.Second, OnTimeout: OnTimeoutDetach,
		Code: "import time\nprint('started', flush=True)\nwhile True: time.sleep(0.05)"}
	closed := detachOne(t, r, Request{Session: "c", Cwd: dir, Cells: []Cell{forever}})
	if !r.CloseSession("c") {
		t.Fatal("CloseSession found no session")
	}
	info, err := r.WaitJob(context.Background(), closed.Job)
	if err != nil || info.Result == nil || info.Status != StatusCancelled || !strings.Contains(info.Message, reasonSessionClosed) {
		t.Fatalf("job of a closed session: %+v %v; want cancelled, saying its session was closed", info, err)
	}
	perCall := detachOne(t, r, Request{Session: "p", Cwd: dir, Mode: ModePerCall, Cells: []Cell{forever}})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	got := ends.of(perCall.Job)
	if len(got) != 1 || got[0].Status != StatusCancelled || !strings.Contains(got[0].Message, reasonShutdown) {
		t.Fatalf("job at Close: %+v; want one end, cancelled, saying evalhost shut down", got)
	}
}

func TestDetachableCellEndingInTime(t *testing.T) {
	r := newTestRegistry(t, Config{})
	tests := []struct {
		name   string
		ctx    func() context.Context
		code   string
		status Status
	}{
		{"ends before its timeout: an ordinary result", context.Background, "print('quick')", StatusOK},
		{"cancelled before its timeout: cancelled as any cell", func() context.Context {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			t.Cleanup(cancel)
			return ctx
		}, "import time; time.sleep(30)", StatusCancelled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := r.Eval(tt.ctx(), Request{Session: "e", Cells: []Cell{{Language: LangPython, Code: tt.code,
				Timeout: 10 * time.Second, OnTimeout: OnTimeoutDetach}}}, nil)
			if err != nil || res.Cells[0].Status != tt.status || res.Cells[0].Job != "" {
				t.Fatalf("%+v %v; want %s and no job", res, err, tt.status)
			}
		})
	}
	if jobs := r.Jobs(); len(jobs) != 0 {
		t.Fatalf("jobs %+v; want none", jobs)
	}
}

func TestDetachValidation(t *testing.T) {
	r := newTestRegistry(t, Config{})
	tests := []struct {
		name string
		cell Cell
		want string
	}{
		{"unknown onTimeout", Cell{Language: LangPython, Code: "1", OnTimeout: "wait"}, `onTimeout "wait"`},
		{"maxRuntime without detach", Cell{Language: LangPython, Code: "1", MaxRuntime: time.Minute}, "only to a cell with onTimeout"},
		{"maxRuntime over 24 h", Cell{Language: LangPython, Code: "1", OnTimeout: OnTimeoutDetach, MaxRuntime: 25 * time.Hour}, "out of range"},
		{"detach without a timeout", Cell{Language: LangPython, Code: "1", OnTimeout: OnTimeoutDetach, Timeout: NoTimeout}, "needs a timeout to detach at"},
		{"maxRuntime under the timeout", Cell{Language: LangPython, Code: "1", OnTimeout: OnTimeoutDetach, Timeout: time.Minute, MaxRuntime: time.Second}, "out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.Queue(Request{Cells: []Cell{tt.cell}})
			if !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Queue = %v; want ErrBadRequest with %q", err, tt.want)
			}
		})
	}
	if _, err := r.Job("job-99", 0); !errors.Is(err, ErrNoJob) {
		t.Fatalf("Job(unknown) = %v; want ErrNoJob", err)
	}
	if _, err := r.StopJob(context.Background(), "job-99"); !errors.Is(err, ErrNoJob) {
		t.Fatalf("StopJob(unknown) = %v; want ErrNoJob", err)
	}
}
