package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/evalhost/evalhost/backend"
	"github.com/evalhost/evalhost/frames"
)

// maxMessage bounds one websocket message held in memory. A larger one (a
// huge image) is read past and dropped with a warning; the kernel lives on.
// Stream text never comes close: the start snippet has the kernel flush its
// streams every maxStreamText.
const maxMessage = 256 << 20

// inboundQueue is how many messages the reader may run ahead of the cell
// that consumes them: enough to ride out bursts of small messages, few
// enough that a flood of ~1 MiB stream messages holds little memory.
const inboundQueue = 16

// inbound is what the reader hands the executing goroutine: a message, or a
// protocol error about one that could not be read.
type inbound struct {
	msg *message
	bad error
}

// Kernel is one remote kernel and its channels websocket.
type Kernel struct {
	client  *Client
	id      string
	session string
	connMu  sync.Mutex
	conn    *websocket.Conn // replaced by reconnect; read it with socket()
	swapped chan struct{}   // closed (and replaced) when reconnect replaces conn
	grace   time.Duration
	links   linkTimes // the keep-alive's and reconnect's times, fixed at connect

	msgs *msgReader // the reader goroutine's; its progress is anyone's

	in     chan inbound
	cancel context.CancelFunc // stops the reader
	wg     sync.WaitGroup     // the reader

	done    chan struct{} // closed when dead or closed
	endOnce sync.Once
	endErr  error // *backend.DeathError or backend.ErrClosed, set before done closes

	busy    atomic.Bool
	cellSeq atomic.Uint64 // numbers the Execute that holds busy
	// interrupts carries Interrupt's requests, each the cellSeq of the cell
	// it was meant for, to that cell's await loop.
	interrupts chan uint64
	controlOK  atomic.Bool // a reply came on the control channel, which so carries interrupts
	// controlInterrupts: the kernel said at start that it handles an
	// interrupt_request on control (ipykernel 6+); ipykernel 5 answers
	// kernel_info there but never an interrupt.
	controlInterrupts bool
	readerHeld        atomic.Bool  // the reader waits for a slow cell to take a message
	heldTimes         atomic.Int64 // how often it has been held
	dropMu            sync.Mutex
	dropCause         error // why keepAlive closed the socket
	stopOnce          sync.Once
	stopErr           error

	ready    frames.Frame
	warnings []frames.Frame

	tools *toolBridge // nil without a tool bridge
}

// ID is the gateway's kernel id.
func (k *Kernel) ID() string { return k.id }

// Ready is the synthesised ready frame (python version, pid, executable).
func (k *Kernel) Ready() frames.Frame { return k.ready }

// Warnings are the warning frames of the start (extension modules that raised).
func (k *Kernel) Warnings() []frames.Frame { return k.warnings }

// Alive reports whether the kernel can take cells.
func (k *Kernel) Alive() bool {
	select {
	case <-k.done:
		return false
	default:
		return true
	}
}

// Done is closed when the kernel died or was closed.
func (k *Kernel) Done() <-chan struct{} { return k.done }

// Err is why the kernel ended: a *backend.DeathError, backend.ErrClosed, or nil
// while it lives.
func (k *Kernel) Err() error {
	if k.Alive() {
		return nil
	}
	return k.endErr
}

// connect opens the channels websocket of kernel id and starts the reader.
func (c *Client) connect(ctx context.Context, id string, grace time.Duration, maxMsg int64) (*Kernel, error) {
	if maxMsg <= 0 {
		maxMsg = maxMessage
	}
	session := newID()
	conn, err := c.dialChannels(ctx, id, session)
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithCancel(context.Background())
	k := &Kernel{client: c, id: id, session: session, conn: conn, swapped: make(chan struct{}), grace: grace, links: currentLinkTimes(), msgs: newMsgReader(maxMsg),
		in: make(chan inbound, inboundQueue), cancel: cancel, done: make(chan struct{}), interrupts: make(chan uint64, 1)}
	k.wg.Add(2)
	go k.readLoop(rctx)
	go k.keepAlive(rctx)
	return k, nil
}

// readLoop hands messages to the executing goroutine and notices death. A
// dropped websocket is reconnected (see reconnect.go) before the kernel is
// declared lost.
func (k *Kernel) readLoop(ctx context.Context) {
	defer k.wg.Done()
	defer func() { _ = k.socket().CloseNow() }()
	for {
		raw, err := k.msgs.next(ctx, k.socket())
		var tooBig *MessageTooBigError
		switch {
		case errors.As(err, &tooBig):
			if !k.enqueue(ctx, inbound{bad: err}) {
				return
			}
			continue
		case err != nil && ctx.Err() != nil:
			return
		case err != nil:
			if cause := k.takeDropCause(); cause != nil {
				err = cause
			}
			if rerr := k.reconnect(ctx, err); rerr != nil {
				k.end(rerr)
				return
			}
			continue
		}
		m, err := decodeMessage(raw)
		if m != nil && m.Channel == "control" {
			k.controlOK.Store(true)
		}
		if !k.enqueue(ctx, inbound{msg: m, bad: err}) {
			return
		}
		if state := deathState(m); state != "" {
			k.end(&backend.DeathError{ExitCode: -1, Reason: fmt.Sprintf(
				"the gateway reported kernel status %q: the kernel process ended, or the gateway lost contact with it", state)})
			return
		}
	}
}

// enqueue hands item on, blocking while a cell runs (backpressure), and
// dropping the oldest stray message when the queue is full between cells so
// that a death is still noticed. It reports false when the reader must stop.
func (k *Kernel) enqueue(ctx context.Context, item inbound) bool {
	for {
		select {
		case k.in <- item:
			return true
		case <-ctx.Done():
			return false
		default:
		}
		if !k.busy.Load() {
			select {
			case <-k.in:
			default:
			}
			continue
		}
		k.readerHeld.Store(true)
		k.heldTimes.Add(1)
		select {
		case k.in <- item:
			k.readerHeld.Store(false)
			return true
		case <-ctx.Done():
			k.readerHeld.Store(false)
			return false
		case <-time.After(50 * time.Millisecond): // recheck whether a cell still runs
		}
		k.readerHeld.Store(false)
	}
}

// deathState is "dead" or "restarting" when m announces a kernel death.
func deathState(m *message) string {
	if m == nil || m.Channel != "iopub" || m.Header.MsgType != "status" {
		return ""
	}
	var st statusContent
	if json.Unmarshal(m.Content, &st) != nil {
		return ""
	}
	if st.ExecutionState == "dead" || st.ExecutionState == "restarting" {
		return st.ExecutionState
	}
	return ""
}

// end records why the kernel ended, once.
func (k *Kernel) end(err error) {
	k.endOnce.Do(func() {
		k.endErr = err
		close(k.done)
	})
}

// send writes one message on the websocket.
func (k *Kernel) send(ctx context.Context, channel, msgType string, content any) (string, error) {
	return k.sendWith(ctx, channel, msgType, content, nil)
}

// sendWith sends a message with message-level metadata (nil for none).
func (k *Kernel) sendWith(ctx context.Context, channel, msgType string, content any, metadata json.RawMessage) (string, error) {
	m, err := newMessage(k.session, channel, msgType, content)
	if err != nil {
		return "", err
	}
	if metadata != nil {
		m.Metadata = metadata
	}
	if err := k.write(ctx, m); err != nil {
		return "", err
	}
	return m.Header.MsgID, nil
}

func (k *Kernel) write(ctx context.Context, m *message) error {
	raw, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode %s: %w", m.Header.MsgType, err)
	}
	conn, swapped := k.socketAndSwap()
	err = conn.Write(ctx, websocket.MessageText, raw)
	if err != nil && k.awaitReconnect(ctx, swapped) {
		err = k.socket().Write(ctx, websocket.MessageText, raw)
	}
	if err != nil {
		return fmt.Errorf("send %s to kernel %s: %w", m.Header.MsgType, k.id, err)
	}
	return nil
}

// Interrupt asks the running cell to stop, without waiting: the cell's
// Execute interrupts it as it does for a cancelled context (the control
// channel's interrupt_request once the cell's code runs, the REST one only
// when the kernel refuses or its control channel does not take interrupts;
// see interrupter), but the cell is not marked cancelled and no grace
// window starts. With no cell running it does nothing: ipykernel takes an
// idle interrupt late, in the next cell (a KeyboardInterrupt there) or in
// its own loop (the next cell then never got its reply).
func (k *Kernel) Interrupt() error {
	if !k.Alive() {
		return k.endErr
	}
	// The sequence first: read after busy, it could be that of a cell
	// that started after the one busy saw ended. Read before, it is the
	// running cell's, or an ended cell's, which no cell takes.
	seq := k.cellSeq.Load()
	if !k.busy.Load() {
		return nil
	}
	for {
		select {
		case k.interrupts <- seq:
			return nil
		default:
		}
		select {
		case <-k.interrupts: // another's, or an ended cell's
		default:
		}
	}
}

// Close deletes the remote kernel, closes the socket and waits for the reader.
func (k *Kernel) Close() error { return k.stop() }

// Kill ends the kernel now; for a remote kernel that is the same DELETE as
// Close. Safe to call twice and concurrently with Execute.
func (k *Kernel) Kill() error { return k.stop() }

func (k *Kernel) stop() error {
	k.stopOnce.Do(func() {
		k.end(backend.ErrClosed)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err := k.client.deleteKernel(ctx, k.id)
		k.cancel()
		_ = k.socket().CloseNow()
		k.wg.Wait() // the reader closes a socket it reconnected meanwhile
		if k.tools != nil {
			k.tools.close()
		}
		if err != nil && !errors.Is(err, ErrUnreachable) {
			k.stopErr = fmt.Errorf("delete kernel %s: %w", k.id, err)
		}
	})
	return k.stopErr
}
