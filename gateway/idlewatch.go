package gateway

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// idleWait is how long a cell whose execute_reply is in waits for its idle
// status without any byte arriving before it asks whether the gateway has
// more: iopub may have dropped the status, and a cell must never hang on
// that.
var idleWait = 3 * time.Second

// idleWatch ends a cell whose idle status does not come. After
// execute_reply, idle is awaited while bytes keep coming (a backlog of
// output may trail the reply by seconds, a large display arrive for
// longer). When idleWait passes without any, the gateway is pinged: a
// gateway busy with a large message, which it decodes and encodes before
// it sends a byte (4.4 s for a 200 MB display here, after the reply),
// answers only when it is done, and that message comes first; one that
// answers with nothing before has nothing more to send, and the rest was
// dropped. A ping that fails is asked again after idleWait: a gateway that
// stopped answering is the keep-alive's to notice.
type idleWatch struct {
	t        *time.Timer
	c        <-chan time.Time // nil until execute_reply, and while a ping is out
	pong     chan error       // the answer to the ping out; nil when none is
	progress func() int64     // grows as bytes arrive
	mark     int64            // progress when the timer was set
	ping     func(context.Context) error
	timeout  time.Duration // a ping's
	cancel   context.CancelFunc
	wg       sync.WaitGroup // the ping out
}

func (k *Kernel) newIdleWatch() *idleWatch {
	t := time.NewTimer(idleWait)
	t.Stop()
	return &idleWatch{t: t, progress: k.msgs.progress, timeout: k.links.pingTimeout,
		ping: func(ctx context.Context) error { return k.socket().Ping(ctx) }}
}

// arm (re)starts the wait, dropping a ping that is out: something arrived.
func (w *idleWatch) arm() {
	w.dropPing()
	w.mark = w.progress()
	w.t.Reset(idleWait)
	w.c = w.t.C
}

// fired is called when the wait ended: it starts again if bytes arrived
// meanwhile, else the ping goes out.
func (w *idleWatch) fired() {
	if w.progress() != w.mark {
		w.arm()
		return
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

func (w *idleWatch) warning() string {
	return fmt.Sprintf("the kernel answered the cell, but its idle status had not come after %v without any message: "+
		"Jupyter's iopub channel drops (or holds back) messages when a kernel writes faster than the "+
		"gateway forwards them, so output may be missing", idleWait)
}
