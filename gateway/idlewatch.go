package gateway

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// idleWait is how long a cell whose execute_reply is in waits for its idle
// status without any byte arriving before it asks the kernel for a marker:
// iopub may have dropped the status, and a cell must never hang on that.
var idleWait = 3 * time.Second

// markerWait bounds the wait for the marker's status, without any byte
// arriving, before the gateway is pinged instead: that status may be
// dropped too, or a kernel may publish none. It is long because the kernel
// may still be handing a large message to the gateway, which meanwhile
// answers a ping at once.
var markerWait = 10 * time.Second

// idleWatch ends a cell whose idle status does not come. After
// execute_reply, idle is awaited while bytes keep coming (a backlog of
// output may trail the reply by seconds, a large display arrive for
// longer). When idleWait passes without any, a kernel_info_request goes out
// on shell as a marker. The kernel handles it after the cell and publishes
// its busy status on iopub after everything the cell published, and iopub
// is one ordered stream from the kernel through the gateway: the marker's
// status arriving before the cell's idle means the idle was dropped. A
// message the kernel is still handing over, a large display whose
// execute_reply overtook it on shell, comes first. The marker's reply on
// shell is not counted, for the same reason: it overtakes iopub.
//
// When markerWait passes without any byte (the marker's status lost as
// well, or a kernel that publishes none), or the marker could not be sent,
// the gateway is pinged: a gateway busy with a large message, which it
// decodes and encodes before it sends a byte (4.4 s for a 200 MB display
// here), answers only when it is done, and that message comes first; one
// that answers with nothing before has nothing more to send. A ping that
// fails is asked again after the wait: a gateway that stopped answering is
// the keep-alive's to notice.
//
// The marker's own messages are parented to it, not to a cell, so every
// consumer of the kernel's messages (this cell after it ended, the next
// one, its cwd/env set-up) passes them by.
type idleWatch struct {
	t        *time.Timer
	c        <-chan time.Time // nil until execute_reply, and while a ping is out
	pong     chan error       // the answer to the ping out; nil when none is
	progress func() int64     // grows as bytes arrive
	mark     int64            // progress when the timer was set
	ping     func(context.Context) error
	send     func(context.Context) (string, error) // sends the marker, returning its msg_id
	asked    bool                                  // the marker was tried
	marker   string                                // its msg_id once sent
	timeout  time.Duration                         // a ping's, and the marker's write
	cancel   context.CancelFunc
	wg       sync.WaitGroup // the ping out
}

func (k *Kernel) newIdleWatch() *idleWatch {
	t := time.NewTimer(idleWait)
	t.Stop()
	return &idleWatch{t: t, progress: k.msgs.progress, timeout: k.links.pingTimeout,
		ping: func(ctx context.Context) error { return k.socket().Ping(ctx) },
		send: func(ctx context.Context) (string, error) {
			return k.send(ctx, "shell", "kernel_info_request", struct{}{})
		}}
}

// arm (re)starts the wait, dropping a ping that is out: something arrived.
func (w *idleWatch) arm() {
	w.dropPing()
	w.mark = w.progress()
	if w.marker != "" {
		w.t.Reset(markerWait)
	} else {
		w.t.Reset(idleWait)
	}
	w.c = w.t.C
}

// fired is called when the wait ended: it starts again if bytes arrived
// meanwhile; else the marker goes out, or, after it, the ping.
func (w *idleWatch) fired() {
	if w.progress() != w.mark {
		w.arm()
		return
	}
	if !w.asked {
		w.asked = true
		ctx, cancel := context.WithTimeout(context.Background(), w.timeout)
		id, err := w.send(ctx)
		cancel()
		if err == nil {
			w.marker = id
			w.arm()
			return
		}
	}
	w.c = nil
	pong := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), w.timeout)
	w.pong, w.cancel = pong, cancel
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		pong <- w.ping(ctx)
	}()
}

// settles reports whether m is the marker's status: every iopub message the
// kernel published before it has arrived, or was dropped.
func (w *idleWatch) settles(m *message) bool {
	return w.marker != "" && m != nil && m.ParentHeader.MsgID == w.marker &&
		m.Channel == "iopub" && m.Header.MsgType == "status"
}

// silent takes the ping's answer: true when the gateway answered and nothing
// arrived since the wait began; otherwise the wait starts again.
func (w *idleWatch) silent(err error) bool {
	w.pong = nil
	if err == nil && w.progress() == w.mark {
		w.dropPing()
		return true
	}
	w.arm()
	return false
}

// dropPing ends the ping that is out, if any, and waits for it.
func (w *idleWatch) dropPing() {
	if w.cancel == nil {
		return
	}
	w.cancel()
	w.wg.Wait()
	w.cancel, w.pong = nil, nil
}

func (w *idleWatch) stop() {
	w.t.Stop()
	w.dropPing()
}

// droppedWarning is the warning of a cell whose idle the marker's status
// overtook.
func droppedWarning() string {
	return "the kernel answered the cell, but its idle status never came: the status of a later request arrived first, " +
		"so Jupyter's iopub channel dropped it (it drops messages when a kernel writes faster than the gateway " +
		"forwards them), and output may be missing"
}

// warning is the warning of a cell ended by the ping.
func (w *idleWatch) warning() string {
	what, wait := "its idle status had not come", idleWait
	if w.marker != "" {
		what, wait = "neither its idle status nor the status of a later request had come", markerWait
	}
	return fmt.Sprintf("the kernel answered the cell, but %s after %v without any message: "+
		"Jupyter's iopub channel drops (or holds back) messages when a kernel writes faster than the "+
		"gateway forwards them, so output may be missing", what, wait)
}
