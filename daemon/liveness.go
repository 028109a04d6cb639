package daemon

import (
	"encoding/json"
	"errors"
	"os"
	"time"

	"github.com/evalhost/evalhost/serve"
)

// A process can stop answering after its hello (SIGSTOP, a hang, swapped
// out) while a client waits for it. No deadline tells that from work: a
// cell may run 600 s, a request may be queued behind other commands' cells
// in its session, a job's wait may last a day. So a client asks: after
// probeAfter without a byte it sends a ping, which the process answers on
// the connection's reader even while cells run, and a process that sends
// nothing for answerWait after it is hung. A write to it is bounded the same
// way: a live process reads what its clients send at once.
const (
	probeAfter = 2 * time.Second
	answerWait = helloTimeout
)

// probeID is the id of the client's pings; Next drops their pongs.
const probeID = "evalhost-alive"

var (
	pingLine = append(mustLine(map[string]string{"op": "ping", "id": probeID}), '\n')
	pongLine = mustLine(serve.Pong{ID: probeID, Type: serve.TypePong}) // as Next returns it
)

func mustLine(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// liveReader is the connection as a Client reads it: once watch is set
// (after the hello), a read waits at most probeAfter, then answerWait after
// a ping, for a byte. Only the goroutine that calls Next reads it.
type liveReader struct {
	c     *Client
	watch bool
	asked time.Time // when the unanswered ping went; zero: none
	// probeAfter and answerWait are the package's; tests shorten them.
	probeAfter, answerWait time.Duration
}

func (l *liveReader) Read(p []byte) (int, error) {
	if !l.watch {
		return l.c.conn.Read(p)
	}
	for {
		deadline := time.Now().Add(l.probeAfter)
		if !l.asked.IsZero() {
			deadline = l.asked.Add(l.answerWait)
		}
		l.c.conn.SetReadDeadline(deadline)
		n, err := l.c.conn.Read(p)
		if n > 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
			l.asked = time.Time{} // any byte says the process lives
			return n, err
		}
		if !l.asked.IsZero() {
			return 0, l.c.hung(l.answerWait)
		}
		l.asked = time.Now()
		// A ping that cannot be sent is one not answered: a process that
		// is ending stops reading, and still writes its last lines.
		_ = l.c.write(pingLine)
	}
}

// hung is the error for a process that stopped answering this client.
func (c *Client) hung(wait time.Duration) error {
	return &HungError{PID: c.Hello.PID, Wait: wait, Attached: true}
}
