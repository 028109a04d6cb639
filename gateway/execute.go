package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/evalhost/evalhost/backend"
	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/plural"
)

// restFallback is how long a control-channel interrupt may go unanswered
// before the REST interrupt is sent too, on a kernel whose control channel
// never answered (a gateway that does not carry it). One that did answers
// an interrupt late only while the cell holds the GIL (a long C call): the
// SIGINT then waits for the same moment, and a REST one beside it would be
// a second SIGINT, landing in the first one's traceback handling.
var restFallback = 300 * time.Millisecond

// DefaultGrace is how long a cancelled cell may take to end after the
// interrupt before the kernel is killed.
const DefaultGrace = 2 * time.Second

// cell is the state of one Execute.
type cell struct {
	req      frames.Request
	seq      uint64             // its Kernel.cellSeq
	emit     func(frames.Frame) // a frame of the cell, after started
	out      func(frames.Frame) // the caller's emit
	msgID    string
	setupErr *errorContent

	gotReply, gotIdle   bool
	reply               executeReply
	stdinAsked          bool
	interrupted, killed bool             // interrupted: cancelled by its context
	interruptSent       bool             // an interrupt of the cell went out, for its context or Interrupt
	interruptID         string           // the cell's control-channel interrupt_request
	acked, refused      bool             // its interrupt_reply: the kernel signalled itself, or could not
	replyMarker         string           // asks whether an execute_reply is still to come (lostreply.go)
	replyLate           <-chan time.Time // fires when a reply idle overtook is overdue; kept once fired
	replyOverdue        bool             // it fired
	executing           bool             // execute_input seen: the kernel runs the cell's code
	began               bool             // the started frame is out
	pendingInterrupt    bool             // cancelled before that: interrupt once it runs
	received            [2]int           // characters of stdout, stderr that arrived
}

// cellSeq numbers the cells that came without an id.
var cellSeq atomic.Uint64

// Execute runs req as one cell; see the package doc for the contract.
func (k *Kernel) Execute(ctx context.Context, req frames.Request, emit func(frames.Frame)) (frames.Frame, error) {
	if req.Exit {
		return frames.Frame{}, errors.New("execute: an exit request is not a cell; call Close to stop the kernel")
	}
	if req.ID == "" {
		req.ID = "c" + strconv.FormatUint(cellSeq.Add(1), 10)
	}
	if !k.busy.CompareAndSwap(false, true) {
		return frames.Frame{}, fmt.Errorf("execute %s: %w", req.ID, backend.ErrBusy)
	}
	defer k.busy.Store(false)
	seq := k.cellSeq.Add(1)
	if err := k.Err(); err != nil {
		return frames.Frame{}, fmt.Errorf("execute %s: %w", req.ID, err)
	}
	k.discardStale()
	if k.tools != nil {
		k.tools.begin(req.Run)
		defer k.tools.end()
	}
	c := &cell{req: req, out: emit, seq: seq}
	// started goes out when the kernel begins the cell's code (execute_input),
	// as the runner sends it, or before any earlier frame of the cell.
	c.emit = func(f frames.Frame) {
		c.begin()
		emit(f)
	}
	defer c.begin()
	if ok, err := k.applySetup(ctx, c); err != nil {
		return frames.Frame{}, err
	} else if !ok {
		return c.doneFrame(), nil
	}
	if err := k.sendCell(ctx, c); err != nil {
		return frames.Frame{}, err
	}
	return k.await(ctx, c)
}

// discardStale drops messages of earlier cells left in the queue.
func (k *Kernel) discardStale() {
	for {
		select {
		case in := <-k.in:
			k.toolCall(in.msg) // refused: no cell runs
		default:
			return
		}
	}
}

// sendCell sends the cell's execute_request. The run id rides in the
// message's metadata, where the start snippet's pre_run_cell hook reads it
// into EVALHOST_RUN for the tool bridge: no extra round trip per cell. A
// script cell's flag rides there too (scriptMetadataKey).
func (k *Kernel) sendCell(ctx context.Context, c *cell) error {
	var meta json.RawMessage
	if c.req.Run != "" || c.req.Script {
		m := map[string]any{}
		if c.req.Run != "" {
			m[runMetadataKey] = c.req.Run
		}
		if c.req.Script {
			m[scriptMetadataKey] = true
		}
		meta, _ = json.Marshal(m)
	}
	exprs := map[string]string{writtenKey: writtenExpr}
	if blankCell(c.req.Code) {
		// IPython runs nothing for it, not even the pre_run_cell hook that
		// resets the count: the count would be an earlier cell's (or the
		// start snippet's), reported as this cell's lost output.
		exprs = map[string]string{}
	}
	id, err := k.sendWith(context.WithoutCancel(ctx), "shell", "execute_request", executeRequest{
		Code: c.req.Code, StoreHistory: true, AllowStdin: true, StopOnError: true,
		UserExpressions: exprs,
	}, meta)
	if err != nil {
		return k.sendFailed(c, err)
	}
	c.msgID = id
	return nil
}

// applySetup runs the cell's cwd/env/argv snippet first, when it has one. It
// reports false when the snippet raised: the error frame is out, and the
// cell is not run.
func (k *Kernel) applySetup(ctx context.Context, c *cell) (bool, error) {
	code := setupCode(c.req.Cwd, c.req.Env) + argvCode(c.req.Argv, c.req.File)
	if code == "" {
		return true, nil
	}
	err := k.roundTrip(ctx, code, func(m *message) { c.handleSetup(m) })
	if err != nil {
		return false, fmt.Errorf("execute %s: applying cwd/env: %w", c.req.ID, err)
	}
	return c.setupErr == nil, nil
}

// sendFailed turns a failed write into the kernel's death.
func (k *Kernel) sendFailed(c *cell, err error) error {
	k.end(&backend.DeathError{ExitCode: -1, Reason: "sending the cell to the kernel failed: " + err.Error()})
	return fmt.Errorf("execute %s: %w", c.req.ID, k.endErr)
}

// blankCell says whether IPython's run_cell returns at once for code, as
// for `not raw_cell or raw_cell.isspace()` (Go's white space, not quite
// Python's: a cell of \x1c-\x1f alone is still counted).
func blankCell(code string) bool {
	return strings.TrimFunc(code, unicode.IsSpace) == ""
}

// reportDropped warns when the kernel wrote more characters than arrived.
func (c *cell) reportDropped() {
	written, ok := c.reply.written()
	if !ok {
		return
	}
	for i, name := range [2]string{"stdout", "stderr"} {
		if lost := written[i] - c.received[i]; lost > 0 {
			c.emit(frames.Frame{Type: frames.TypeWarning, ID: c.req.ID, Message: fmt.Sprintf(
				"%d of the %s the cell wrote to %s had not arrived when it ended: Jupyter's iopub channel "+
					"drops messages when a kernel writes faster than the gateway forwards them (the runner backend has no such limit)",
				lost, plural.Of(written[i], "character"), name)})
		}
	}
}

func (k *Kernel) sendInterrupt() (string, error) {
	return k.send(context.Background(), "control", "interrupt_request", struct{}{})
}

// drain handles what the reader queued before the kernel ended.
func (k *Kernel) drain(c *cell) {
	for {
		select {
		case in := <-k.in:
			k.handle(c, in)
		default:
			return
		}
	}
}

// begin sends the started frame once.
func (c *cell) begin() {
	if !c.began {
		c.began = true
		c.out(frames.Frame{Type: frames.TypeStarted, ID: c.req.ID})
	}
}

func (c *cell) doneFrame() frames.Frame {
	status := frames.StatusOK
	if c.reply.Status != "ok" || c.stdinAsked || c.setupErr != nil {
		status = frames.StatusError
	}
	return frames.Frame{Type: frames.TypeDone, ID: c.req.ID, Status: status,
		ExecutionCount: c.reply.ExecutionCount, Cancelled: c.interrupted && status == frames.StatusError}
}

// handle routes one inbound item to the cell.
func (k *Kernel) handle(c *cell, in inbound) {
	if in.bad != nil {
		c.emit(frames.Frame{Type: frames.TypeWarning, ID: c.req.ID, Message: in.bad.Error()})
		return
	}
	m := in.msg
	if k.toolCall(m) {
		return
	}
	switch parent := m.ParentHeader.MsgID; {
	case parent == c.msgID:
		k.handleCell(c, m)
	case parent == "":
	case parent == c.interruptID:
		c.interruptReplied(m)
	case parent == c.replyMarker:
		c.markerReplied(m)
	}
}

// interruptReplied takes the interrupt_reply: status ok says the kernel
// sent itself SIGINT.
func (c *cell) interruptReplied(m *message) {
	if m.Header.MsgType != "interrupt_reply" {
		return
	}
	var r struct {
		Status string `json:"status"`
	}
	_ = json.Unmarshal(m.Content, &r)
	c.acked, c.refused = r.Status == "ok", r.Status != "ok"
}

func (c *cell) handleSetup(m *message) {
	if m.Header.MsgType != "error" {
		return
	}
	var e errorContent
	if json.Unmarshal(m.Content, &e) == nil {
		c.setupErr = &e
		c.emit(frames.Frame{Type: frames.TypeError, ID: c.req.ID, Ename: e.Ename,
			Evalue: backend.SetupErrorPrefix + e.Evalue, Traceback: e.Traceback})
	}
}

// handleCell maps one message of the cell to frames.
func (k *Kernel) handleCell(c *cell, m *message) {
	f, ok, err := translate(c.req.ID, m)
	if err != nil {
		c.emit(frames.Frame{Type: frames.TypeWarning, ID: c.req.ID, Message: err.Error()})
		return
	}
	if ok {
		switch f.Type {
		case frames.TypeStdout:
			c.received[0] += utf8.RuneCountInString(f.Data)
		case frames.TypeStderr:
			c.received[1] += utf8.RuneCountInString(f.Data)
		}
		c.emit(f)
		return
	}
	switch m.Header.MsgType {
	case "execute_input":
		c.executing = true
		c.begin()
	case "status":
		var st statusContent
		if json.Unmarshal(m.Content, &st) == nil && st.ExecutionState == "idle" {
			c.gotIdle = true
		}
	case "execute_reply":
		c.gotReply = true
		_ = json.Unmarshal(m.Content, &c.reply)
	case "input_request":
		c.answerInput(k, m)
	}
}

// answerInput reports the prompt and sends the empty reply that lets the
// cell's input() return, where the start snippet makes it raise.
func (c *cell) answerInput(k *Kernel, m *message) {
	var ir inputRequest
	_ = json.Unmarshal(m.Content, &ir)
	c.stdinAsked = true
	c.emit(frames.Frame{Type: frames.TypeInput, ID: c.req.ID, Prompt: ir.Prompt})
	reply, err := newMessage(k.session, "stdin", "input_reply", map[string]string{"value": ""})
	if err != nil {
		return
	}
	reply.ParentHeader = parentHeader{MsgID: m.Header.MsgID, MsgType: m.Header.MsgType}
	if err := k.write(context.Background(), reply); err != nil {
		c.emit(frames.Frame{Type: frames.TypeWarning, ID: c.req.ID, Message: "could not answer input_request: " + err.Error()})
	}
}
