package main

import (
	"encoding/base64"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/serve"
	"github.com/evalhost/evalhost/sessions"
	"github.com/evalhost/evalhost/streamsink"
)

// renderer shows a request's frames and results, as text or NDJSON.
type renderer interface {
	frame(cell int, f frames.Frame)
	cellEnd(res sessions.CellResult)
	end(res sessions.Result)
}

// humanRenderer prints what a person wants to see: output as it arrives,
// the text of displays, images as files, tracebacks and failed-cell lines.
type humanRenderer struct {
	stdout, stderr io.Writer
	imagesDir      string     // --images-dir; "" for a new private one
	images         int        // saved so far
	dir            *imagesDir // opened at the first image
	dirErr         error      // why it could not be
	bounded        bool       // print each cell's bounded tail at its end instead of live
	// notices are the host's own "[...]" lines already shown for the cell,
	// so its closing status line does not repeat one.
	notices map[string]bool
	// exitError is the cell's SystemExit error (its frame's Exit; a
	// subclass's ename is its own), held for its end when pythonExits: a
	// script that calls sys.exit(2) shows no traceback under python3, only
	// its status (and a message for sys.exit("text")), which the cell's end
	// gives. Other errors show as they come, before output that follows
	// them (an atexit handler's). pythonExits: the cells may exit so (not
	// --ipython, whose SystemExit is IPython's).
	exitError   string
	pythonExits bool
	// exitReported: the cell's output already holds sys.exit's message
	// (the exit error frame's Reported: the runner wrote it where
	// python3 does, before the exit's atexit output), so its end does not
	// print res.ExitMessage again.
	exitReported bool
	// ended counts the cells that ended (their cellEnd came), in order.
	ended int
	// written is the end of the cell's output so far when bounded (at
	// most keptWritten bytes), and exitWritten what it was at a reported
	// exit's error frame: whether the message the runner wrote just
	// before it was in the output, where the tail may have left it out.
	written, exitWritten []byte
	// reportedError is the cell's error that its output already reports
	// as python3's would (its frame's Reported: the script's own
	// sys.excepthook ran, or the traceback went to a replaced
	// sys.stderr): its traceback is not shown again, nor a "[cell failed]"
	// line, which python3 does not print; run's status is still 1.
	reportedError string
	// heldNotice is the host's last "[...]" line, held until anything else
	// is shown or the cell ends, when holdNotices (a one-shot run, whose
	// notices all come at a cell's end): a cell whose interpreter exited
	// as a script's process does (os._exit(N)) drops the notice of it, as
	// python3 prints nothing. An attached run's notice of a retry shows at
	// once.
	heldNotice  string
	holdNotices bool
	// diesOf says whether run dies of signal n when its interpreter does
	// (one it passed on, a crash's, the OOM killer's): that death is
	// python3's, told by the status alone (and a shell's "Killed"), so its
	// notice is dropped as an own exit's is. Nil: none is.
	diesOf func(n int) bool
	// silenced says whether the run ends by a signal it was sent and dies
	// of as python3 would, without a word (Ctrl-\ or a SIGTERM before the
	// interpreter was up): the cells' ends and the host's notices say
	// nothing, and the shell says "Quit", "Terminated".
	silenced func() bool
	// notRun is the span of cells (from first, n of them) that never
	// started because the run was cancelled before their turn
	// (CellResult.NotStarted): one line tells them all (tellNotRun), not a
	// line each, which for a long script was thousands after a Ctrl-C.
	notRun struct{ first, n int }
	// errorShown: the cell's error (its traceback) was shown on stderr,
	// which says what failed and where as python3's does; its end adds no
	// "[cell N failed]" line, which python3 does not print. Not bounded,
	// whose tail, the traceback with it, goes to stdout.
	errorShown bool
}

func newHumanRenderer(stdout, stderr io.Writer, imagesDir string, bounded bool) *humanRenderer {
	return &humanRenderer{stdout: stdout, stderr: stderr, imagesDir: imagesDir, bounded: bounded}
}

func (h *humanRenderer) frame(cell int, f frames.Frame) {
	notice := f.Type == frames.TypeStderr && strings.HasPrefix(f.Data, "[") && strings.HasSuffix(f.Data, "]\n")
	// A cell's text goes into its bounded tail until it ends; what comes
	// after (the interpreter's exit output once a cell before the last
	// ended the script) has no tail left to go to, and shows as it comes.
	tailed := h.bounded && cell >= h.ended
	if !notice || tailed || !h.holdNotices {
		h.showNotice()
	}
	switch f.Type {
	case frames.TypeStdout:
		if tailed {
			h.keepWritten(f.Data)
		} else {
			writeText(h.stdout, f.Data)
		}
	case frames.TypeStderr:
		switch {
		case tailed:
			h.keepWritten(f.Data)
		case notice && h.holdNotices:
			h.showNotice()
			h.heldNotice = f.Data
		default:
			writeText(h.stderr, f.Data)
		}
		if notice && !tailed {
			if h.notices == nil {
				h.notices = map[string]bool{}
			}
			h.notices[f.Data] = true
		}
	case frames.TypeDisplay, frames.TypeUpdateDisplay, frames.TypeResult:
		h.display(cell, f.Bundle)
	case frames.TypeError:
		switch {
		case h.silenced != nil && h.silenced():
			// The error of a cell the signal stopped (a shell cell's
			// interrupted status): python3 would have died without a word.
		case h.pythonExits && f.Exit, h.pythonExits && f.Signal != 0 && h.diesOf != nil && h.diesOf(f.Signal):
			// An exit's, or the exit-time death of a signal run dies of
			// too, which python3 dies of silently (cellEnd).
			// An exit error after the SystemExit's (the host's
			// InterpreterExit: an exit of status 120) keeps its report.
			h.exitError, h.exitReported = f.ErrorText(), h.exitReported || f.Exit && f.Reported
			if f.Exit && f.Reported {
				h.exitWritten = append(h.exitWritten[:0], h.written...)
			}
		case h.pythonExits && f.Reported:
			h.reportedError = f.ErrorText()
		case !h.bounded:
			fmt.Fprintln(h.stderr, f.ErrorText())
			h.errorShown = true
		}
		// Bounded, the traceback is in the tail, which goes to stdout:
		// stderr would say nothing of the failure, so the cell's end does.
	case frames.TypeWarning:
		fmt.Fprintf(h.stderr, "[warning: %s]\n", strings.TrimRight(f.Message, "\n"))
	}
}

// stream writes text lent by the session (sessions.Request.Streams), the
// bytes the cell wrote, as they come.
func (h *humanRenderer) stream(_ int, t frames.Type, p []byte) {
	h.showNotice()
	if t == frames.TypeStderr {
		h.stderr.Write(p)
		return
	}
	h.stdout.Write(p)
}

// writeText writes live output without copying it into a new []byte, which
// for bulk output cost an allocation, a copy and fresh pages per chunk. An
// io.Writer must neither modify nor retain p, so it cannot tell.
func writeText(w io.Writer, s string) {
	if sw, ok := w.(io.StringWriter); ok {
		sw.WriteString(s)
		return
	}
	w.Write(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// imageTypes are saved to files; a terminal can't show them inline. A PDF
// too: a figure is one under --ipython's %config InlineBackend.figure_format.
var imageTypes = []struct{ mime, ext string }{
	{"image/png", ".png"}, {"image/jpeg", ".jpg"}, {"image/gif", ".gif"}, {"image/svg+xml", ".svg"},
	{"application/pdf", ".pdf"},
}

func (h *humanRenderer) display(cell int, b frames.Bundle) {
	for _, it := range imageTypes {
		data, ok := b.Text(it.mime)
		if !ok {
			continue
		}
		path, err := h.saveImage(cell, it.mime, it.ext, data)
		if err != nil {
			// Say so, and still show the display's text below.
			fmt.Fprintf(h.stderr, "[%s image not saved: %v]\n", it.mime, err)
			break
		}
		fmt.Fprintf(h.stdout, "[%s saved to %s]\n", it.mime, path)
		return
	}
	if h.bounded {
		return // the text is in the cell's bounded tail
	}
	if text := streamsink.DisplayText(b); text != "" {
		io.WriteString(h.stdout, strings.TrimRight(text, "\n")+"\n")
	}
}

func (h *humanRenderer) saveImage(cell int, mime, ext, data string) (string, error) {
	raw := []byte(data)
	if mime != "image/svg+xml" {
		var err error
		if raw, err = base64.StdEncoding.DecodeString(strings.TrimSpace(data)); err != nil {
			return "", fmt.Errorf("bad base64: %w", err)
		}
	}
	if h.dir == nil && h.dirErr == nil {
		h.dir, h.dirErr = openImagesDir(h.imagesDir)
	}
	if h.dirErr != nil {
		return "", h.dirErr
	}
	h.images++
	return h.dir.create(fmt.Sprintf("cell%d-%d%s", cell+1, h.images, ext), raw)
}

// showNotice writes the held notice, if any.
func (h *humanRenderer) showNotice() {
	if h.heldNotice != "" {
		writeText(h.stderr, h.heldNotice)
		h.heldNotice = ""
	}
}

func (h *humanRenderer) cellEnd(res sessions.CellResult) {
	exitError, errorShown, reportedError, exitReported := h.exitError, h.errorShown, h.reportedError, h.exitReported
	h.exitError, h.errorShown, h.reportedError, h.exitReported = "", false, "", false
	exitWritten := h.exitWritten
	h.written, h.exitWritten = h.written[:0], h.exitWritten[:0]
	h.ended = max(h.ended, res.Index+1)
	silent := h.silenced != nil && h.silenced()
	if silent {
		h.heldNotice = ""
	}
	if res.NotStarted() {
		if !silent {
			h.holdNotRun(res.Index)
		}
		return
	}
	h.tellNotRun()
	_, exited := res.ScriptExit()
	// Its interpreter's own exit, or its death of a signal run dies of too:
	// the host's notice of it is not python3's.
	exited = exited || res.Signal != 0 && h.diesOf != nil && h.diesOf(res.Signal)
	ownExit := exited && res.Status == sessions.StatusKilled && h.holdNotices
	if ownExit && h.heldNotice == "["+res.Message+"]\n" {
		h.heldNotice = ""
	}
	h.showNotice()
	if h.bounded {
		if exited && exitError != "" {
			msg := ""
			if exitReported && res.ExitMessage != nil {
				msg = *res.ExitMessage
			}
			// The tail may have left out the message the output held.
			elided := msg != "" && res.Output.Truncated && endsWith(exitWritten, msg+"\n")
			var gone bool
			res.Output.Text, gone = withoutTraceback(res.Output.Text, exitError, msg, elided)
			exitReported = exitReported && !gone // the message goes to stderr, as python3's
		}
		if reportedError != "" {
			res.Output.Text, _ = withoutTraceback(res.Output.Text, reportedError, "", false)
		}
		if ownExit {
			res.Output.Text = strings.TrimSuffix(res.Output.Text, "["+res.Message+"]\n")
		}
		h.printTail(res)
	}
	defer clear(h.notices)
	if exited {
		if res.ExitMessage != nil && !exitReported {
			fmt.Fprintln(h.stderr, *res.ExitMessage)
		}
		return // python3's exit: its status is run's (exitCode)
	}
	if exitError != "" && !h.bounded { // the bounded tail has it
		fmt.Fprintln(h.stderr, exitError)
	}
	if !silent {
		h.statusLine(res, errorShown, reportedError != "")
	}
}

// statusLine says how a cell that did not end ok ended, when its output
// has not said so.
func (h *humanRenderer) statusLine(res sessions.CellResult, errorShown, reported bool) {
	// People count cells from 1, as tracebacks (<cell N>) and editors do.
	name := "cell " + strconv.Itoa(res.Index+1)
	if res.Title != "" {
		name += " (" + res.Title + ")"
	}
	var line string
	switch res.Status {
	case sessions.StatusOK, sessions.StatusSkipped:
		return
	case sessions.StatusError:
		if (errorShown || reported && !h.bounded) && res.Message == "" {
			return // its traceback (or the script's report) said it on stderr, as python3's does
		}
		line = name + " failed"
	case sessions.StatusTimeout:
		line = name + " timed out"
	case sessions.StatusCancelled:
		if (errorShown || reported && !h.bounded) && res.Message == "" {
			return // its KeyboardInterrupt's traceback (or the script's report) said it, as python3's does
		}
		line = name + " was cancelled"
	case sessions.StatusKilled:
		line = name + " was killed"
	default:
		line = name + ": " + string(res.Status)
	}
	if res.Message != "" && !h.notices["["+res.Message+"]\n"] {
		line += ": " + messageAfterStatus(res)
	}
	if res.StateLost {
		line += " (interpreter state was lost)"
	}
	if res.ExecutionCount == 0 && res.DurationMs == 0 {
		fmt.Fprintf(h.stderr, "[%s]\n", line) // it never ran: no duration to give
		return
	}
	fmt.Fprintf(h.stderr, "[%s after %s]\n", line, runTime(res))
}

// runTime is how long a cell ran: its duration less the time job control
// kept its interpreter stopped (a Ctrl-Z until fg), which its timeout did
// not count either, so a timed-out cell's figure is its timeout, not the
// timeout and the stop; the stop is named after it, so the figure is not
// taken for the wall time the run took.
func runTime(res sessions.CellResult) string {
	d, stopped := time.Duration(res.DurationMs)*time.Millisecond, time.Duration(res.StoppedMs)*time.Millisecond
	if stopped <= 0 {
		return d.String()
	}
	return fmt.Sprintf("%s, not counting %s stopped", max(d-stopped, 0), stopped)
}

// withoutTraceback is a bounded tail without the SystemExit traceback
// (or a reported error's) that python3 does not print: the error's text
// as the sink recorded it (a line of its own), the last in the tail (what
// the interpreter printed as it exited may follow), or, when the tail kept
// less than that, a part of it. With msg, sys.exit's message the runner
// wrote just before it goes too; gone says the message is not in the
// text returned, where the output held it: cut, or, elided (the output
// held it and the tail may have left it out), before the tail's start or
// in part at it. The cell's end prints it on stderr, where python3 does,
// as the rest of the tail goes to stdout.
func withoutTraceback(tail, errText, msg string, elided bool) (_ string, gone bool) {
	errText += "\n"
	i := strings.LastIndex(tail, errText)
	if i < 0 || i > 0 && tail[i-1] != '\n' {
		if strings.HasSuffix(errText, tail) {
			return "", msg != "" && elided
		}
		return tail, false
	}
	before, after := tail[:i], tail[i+len(errText):]
	if msg == "" {
		return before + after, false
	}
	if b, ok := strings.CutSuffix(before, msg+"\n"); ok {
		return b + after, true
	}
	if elided && strings.HasSuffix(msg+"\n", before) {
		return after, true // the tail starts in the message, or after it
	}
	return before + after, false
}

// keptWritten bounds humanRenderer.written: the end of a bounded cell's
// output enough to tell a message of sys.exit's from other text.
const keptWritten = 64 << 10

// keepWritten adds a bounded cell's stream text to the end kept of it.
func (h *humanRenderer) keepWritten(data string) {
	h.written = append(h.written, data...)
	if len(h.written) > 2*keptWritten {
		h.written = append(h.written[:0], h.written[len(h.written)-keptWritten:]...)
	}
}

// endsWith says whether the kept end of the output, written, ends with
// s, or, when s is longer than what is kept, is the end of s.
func endsWith(written []byte, s string) bool {
	if len(written) >= len(s) {
		return string(written[len(written)-len(s):]) == s
	}
	return len(written) >= keptWritten && strings.HasSuffix(s, string(written))
}

func (h *humanRenderer) printTail(res sessions.CellResult) {
	out := res.Output
	for _, n := range out.Notices {
		fmt.Fprintln(h.stdout, n)
	}
	if out.Text != "" {
		io.WriteString(h.stdout, strings.TrimRight(out.Text, "\n")+"\n")
	}
}

func (h *humanRenderer) end(sessions.Result) {
	h.showNotice()
	h.tellNotRun()
}

// holdNotRun adds cell i, which never started, to the span notRun tells.
func (h *humanRenderer) holdNotRun(i int) {
	if h.notRun.n > 0 && i != h.notRun.first+h.notRun.n {
		h.tellNotRun()
	}
	if h.notRun.n == 0 {
		h.notRun.first = i
	}
	h.notRun.n++
}

// tellNotRun says which cells never started (notRun), in one line.
func (h *humanRenderer) tellNotRun() {
	switch n := h.notRun.n; {
	case n == 1:
		fmt.Fprintf(h.stderr, "[%s not run: the run was cancelled before it started]\n", cellSpan(h.notRun.first, n))
	case n > 1:
		fmt.Fprintf(h.stderr, "[%s not run: the run was cancelled before they started]\n", cellSpan(h.notRun.first, n))
	}
	h.notRun.n = 0
}

// cellSpan names n cells from first (0-based) as the human view does:
// "cell 3 was", "cells 3–5 were".
func cellSpan(first, n int) string {
	if n == 1 {
		return fmt.Sprintf("cell %d was", first+1)
	}
	return fmt.Sprintf("cells %d–%d were", first+1, first+n)
}

// jsonRenderer writes run --json's NDJSON through serve's encoder, so its
// lines are serve's: each frame tagged with its cell, a cell_end line per
// cell and an end line, none with an id (a run has one request).
type jsonRenderer struct {
	enc   *serve.Encoder
	start time.Time
}

func newJSONRenderer(w io.Writer) *jsonRenderer {
	return &jsonRenderer{enc: serve.NewEncoder(w), start: time.Now()}
}

func (j *jsonRenderer) frame(cell int, f frames.Frame) { j.enc.Frame("", cell, &f) }

func (j *jsonRenderer) cellEnd(res sessions.CellResult) { j.enc.CellEnd("", res, false) }

func (j *jsonRenderer) end(res sessions.Result) {
	j.enc.End("", res, time.Since(j.start))
	j.enc.Flush()
}

// flush writes what the encoder holds (a cell's last frames wait for its
// cell_end), for a run that ends without its end line.
func (j *jsonRenderer) flush() { j.enc.Flush() }

// line writes v as one JSON line, or a render_error line saying why not.
func (j *jsonRenderer) line(v any) {
	if err := j.enc.Line(v); err != nil {
		j.enc.Line(map[string]string{"type": "render_error", "error": err.Error()})
	}
	j.enc.Flush()
}

// messageAfterStatus is a cell's message for a line that has said its
// status: one that starts by saying it (for a reader of --json) does not
// say it twice.
func messageAfterStatus(res sessions.CellResult) string {
	switch res.Status {
	case sessions.StatusTimeout:
		return strings.TrimPrefix(res.Message, "timed out; ")
	case sessions.StatusCancelled:
		return strings.TrimPrefix(res.Message, "cancelled; ")
	}
	return res.Message
}
