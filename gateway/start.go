package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/runner"
)

// DefaultStartTimeout bounds a kernel start (create, connect, initialise).
const DefaultStartTimeout = 60 * time.Second

// KernelOptions configure a kernel start.
type KernelOptions struct {
	Cwd          string             // chdir and first on sys.path; empty keeps the kernel's
	Env          map[string]*string // the kernel's environment (a nil value unsets); nil keeps the launch env
	Prelude      string             // Python run once after the environment; empty means runner.Prelude()
	NoPrelude    bool               // run no prelude at all
	Modules      []runner.Module    // extension modules, in order (runner.FindModules)
	Grace        time.Duration      // interrupt grace window; 0 means DefaultGrace
	StartTimeout time.Duration      // 0 means DefaultStartTimeout

	maxMessage int64 // 0 means maxMessage; tests lower it to reach the drop path
}

// StartKernel creates a kernel, connects it and initialises it. On any
// failure the kernel is deleted again.
func (c *Client) StartKernel(ctx context.Context, opts KernelOptions) (*Kernel, error) {
	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	grace := opts.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// A kernel create may legitimately take the whole start timeout (a
	// cluster scheduling a pod), so a hung or wrong gateway is told apart
	// first, by the health check and its shorter bound.
	if err := c.healthWithin(ctx, healthTimeout); err != nil {
		return nil, fmt.Errorf("start kernel: %w", err)
	}
	km, err := c.createKernelWith(ctx, c.createBody(opts, timeout))
	if err != nil {
		return nil, fmt.Errorf("start kernel: %w", err)
	}
	k, err := c.connect(ctx, km.ID, grace, opts.maxMessage)
	if err != nil {
		dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer dcancel()
		_ = c.deleteKernel(dctx, km.ID)
		return nil, fmt.Errorf("start kernel: %w", err)
	}
	if err := k.initialise(ctx, opts); err != nil {
		_ = k.Close()
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (start timeout %v)", err, timeout)
		}
		return nil, fmt.Errorf("start kernel %s: %w", km.ID, err)
	}
	return k, nil
}

// initialise applies cwd/env, patches input, reads the kernel's facts, runs
// the prelude and loads extension modules.
func (k *Kernel) initialise(ctx context.Context, opts KernelOptions) error {
	env, tools := takeBridge(opts.Env)
	k.tools = tools
	// Its reply on control says the gateway carries the control channel's
	// interrupts (interrupter); it comes while the start snippet runs.
	_, _ = k.send(ctx, "control", "kernel_info_request", struct{}{})
	out, err := k.runInternal(ctx, "initialise", setupCode(opts.Cwd, exactEnv(env))+startCode())
	if err != nil {
		return err
	}
	if k.ready, k.controlInterrupts, err = readyFrame(out); err != nil {
		return err
	}
	k.warnings = warnLines(out) // the start snippet's (sync_flushes)
	prelude := opts.Prelude
	if prelude == "" {
		prelude = runner.Prelude()
	}
	if !opts.NoPrelude && strings.TrimSpace(prelude) != "" {
		// IPython makes the prelude's docstring the namespace's __doc__
		// (each statement is compiled as a module); a script's argparse
		// shows __doc__, so the kernel's own is put back.
		const keepDoc, putBack = "__evh_doc = globals().get('__doc__')\n", "\n__doc__ = __evh_doc\ndel __evh_doc\n"
		if _, err := k.runInternal(ctx, "prelude", keepDoc+prelude+putBack); err != nil {
			return err
		}
	}
	if k.tools != nil {
		if _, err := k.runInternal(ctx, "tool bridge", toolCommCode()); err != nil {
			return err
		}
	}
	if code, refused := modulesCode(opts.Modules); code != "" || len(refused) > 0 {
		k.warnings = append(k.warnings, refused...)
		if code != "" {
			out, err := k.runInternal(ctx, "extension modules", code)
			if err != nil {
				return err
			}
			k.warnings = append(k.warnings, warnLines(out)...)
		}
	}
	return nil
}

// launchEnv are the variables a kernel starts with that are not Jupyter's
// own and may not be its caller's: the gateway's PATH (createKernel sends
// an empty env), and the LC_CTYPE Python sets for itself when it starts
// without a locale (PEP 538).
var launchEnv = []string{"PATH", "LC_CTYPE"}

// exactEnv is env plus an unset of each launch variable env lacks, so the
// kernel's environment is exactly its caller's; nil stays nil.
func exactEnv(env map[string]*string) map[string]*string {
	if env == nil {
		return nil
	}
	out := make(map[string]*string, len(env)+len(launchEnv))
	for k, v := range env {
		out[k] = v
	}
	for _, k := range launchEnv {
		if _, ok := out[k]; !ok {
			out[k] = nil
		}
	}
	return out
}

// readyFrame reads the start snippet's info line; controlInterrupts says
// the kernel handles an interrupt_request on its control channel.
func readyFrame(out string) (ready frames.Frame, controlInterrupts bool, err error) {
	var info struct {
		Python, Executable, Ipykernel string
		PID                           int
		ControlInterrupt              bool `json:"control_interrupt"`
	}
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, infoMarker); ok {
			if err := json.Unmarshal([]byte(rest), &info); err != nil {
				return frames.Frame{}, false, fmt.Errorf("kernel start snippet printed a bad info line %q: %w", line, err)
			}
			runner := "ipykernel"
			if info.Ipykernel != "" {
				runner += "/" + info.Ipykernel
			}
			return frames.Frame{Type: frames.TypeReady, Runner: runner, Python: info.Python,
				PID: info.PID, Executable: info.Executable}, info.ControlInterrupt, nil
		}
	}
	return frames.Frame{}, false, fmt.Errorf("kernel start snippet printed no info line (is the kernel an IPython kernel?); output: %.200q", out)
}

// warnLines are the warning frames of the warnMarker lines in out.
func warnLines(out string) []frames.Frame {
	var ws []frames.Frame
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, warnMarker); ok {
			var msg string
			if json.Unmarshal([]byte(rest), &msg) != nil {
				msg = rest
			}
			ws = append(ws, frames.Frame{Type: frames.TypeWarning, Message: msg})
		}
	}
	return ws
}

// InternalError is evalhost's own snippet raising in the kernel.
type InternalError struct {
	Step          string
	Ename, Evalue string
	Traceback     []string
}

func (e *InternalError) Error() string {
	return fmt.Sprintf("kernel %s step raised %s: %s", e.Step, e.Ename, e.Evalue)
}

// internalRequest is a silent execute that leaves no history and no count.
func internalRequest(code string) executeRequest {
	return executeRequest{Code: code, Silent: true, UserExpressions: map[string]string{}}
}

// runInternal runs evalhost's own code and returns what it printed to stdout.
func (k *Kernel) runInternal(ctx context.Context, step, code string) (string, error) {
	k.busy.Store(true)
	defer k.busy.Store(false)
	var out strings.Builder
	var raised *InternalError
	err := k.roundTrip(ctx, code, func(m *message) {
		k.noteToolComm(m)
		if k.toolCall(m) { // refused: evalhost's own step is no cell
			return
		}
		switch m.Header.MsgType {
		case "stream":
			if s, err := m.streamed(); err == nil && s.Name == "stdout" {
				out.WriteString(s.Text)
			}
		case "error":
			var e errorContent
			_ = json.Unmarshal(m.Content, &e)
			raised = &InternalError{Step: step, Ename: e.Ename, Evalue: e.Evalue, Traceback: e.Traceback}
		}
	})
	if err != nil {
		return out.String(), fmt.Errorf("kernel %s step: %w", step, err)
	}
	if raised != nil {
		return out.String(), raised
	}
	return out.String(), nil
}

// roundTrip sends code as a silent execute and hands each of its messages to
// on until both its reply and its idle status arrived.
func (k *Kernel) roundTrip(ctx context.Context, code string, on func(*message)) error {
	id, err := k.send(ctx, "shell", "execute_request", internalRequest(code))
	if err != nil {
		return err
	}
	var gotReply, gotIdle bool
	handle := func(in inbound) {
		if in.msg == nil || in.msg.ParentHeader.MsgID != id {
			return
		}
		switch in.msg.Header.MsgType {
		case "execute_reply":
			gotReply = true
		case "status":
			var st statusContent
			gotIdle = gotIdle || json.Unmarshal(in.msg.Content, &st) == nil && st.ExecutionState == "idle"
		default:
			on(in.msg)
		}
	}
	for !(gotReply && gotIdle) {
		select {
		case in := <-k.in:
			handle(in)
		case <-k.done:
			for drained := false; !drained; {
				select {
				case in := <-k.in:
					handle(in)
				default:
					drained = true
				}
			}
			if gotReply && gotIdle {
				return nil
			}
			return k.endErr
		case <-ctx.Done():
			return errors.Join(ctx.Err(), context.Cause(ctx))
		}
	}
	return nil
}
