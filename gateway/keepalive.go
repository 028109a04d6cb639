package gateway

import (
	"context"
	"fmt"
	"time"
)

// A gateway that stops answering without closing the connection (its host
// powered off, a middlebox dropping packets, the process stopped) leaves a
// websocket that reads nothing and never fails: a cell with a long timeout
// would wait all of it. So the kernel pings the gateway; a ping without a
// pong in time counts as a dropped socket, which is reconnected or, when
// that fails too, ends the kernel (reconnect.go). No ping goes out while
// the reader is held back by a slow consumer: it reads pongs only while it
// reads, so a missing pong would then say nothing about the gateway. Nor
// does a missing pong count while a message arrives: the gateway sends a
// message as one websocket frame, which a pong cannot overtake, and a large
// one over a slow link takes longer than pingTimeout; bytes of it read
// during the wait are an answer too.

// pingEvery is how often the websocket is pinged; pingTimeout how long a
// pong may take.
var (
	pingEvery   = 15 * time.Second
	pingTimeout = 10 * time.Second
)

// linkTimes are a kernel's pingEvery, pingTimeout and reconnectFor, read
// once at connect: a kernel's goroutines never read the package's, which
// tests set for the kernels they start next.
type linkTimes struct{ pingEvery, pingTimeout, reconnectFor time.Duration }

func currentLinkTimes() linkTimes {
	return linkTimes{pingEvery: pingEvery, pingTimeout: pingTimeout, reconnectFor: reconnectFor}
}

// keepAlive pings until ctx ends.
func (k *Kernel) keepAlive(ctx context.Context) {
	defer k.wg.Done()
	t := time.NewTicker(k.links.pingEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		held, arrived := k.heldTimes.Load(), k.msgs.progress()
		if k.readerHeld.Load() {
			continue
		}
		conn := k.socket()
		pctx, cancel := context.WithTimeout(ctx, k.links.pingTimeout)
		err := conn.Ping(pctx)
		cancel()
		// A reader held at any time during the ping may have left the pong
		// unread: that failure says nothing.
		if err != nil && ctx.Err() == nil && k.heldTimes.Load() == held && !k.readerHeld.Load() && conn == k.socket() &&
			k.msgs.progress() == arrived {
			k.setDropCause(fmt.Errorf("no pong to a ping within %v: the gateway stopped answering", k.links.pingTimeout))
			_ = conn.CloseNow() // the reader sees the socket fail and reconnects
		}
	}
}

func (k *Kernel) setDropCause(err error) {
	k.dropMu.Lock()
	k.dropCause = err
	k.dropMu.Unlock()
}

// takeDropCause is why keepAlive closed the socket, once; nil if it did not.
func (k *Kernel) takeDropCause() error {
	k.dropMu.Lock()
	defer k.dropMu.Unlock()
	err := k.dropCause
	k.dropCause = nil
	return err
}
