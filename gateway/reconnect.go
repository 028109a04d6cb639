package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/coder/websocket"

	"github.com/evalhost/evalhost/backend"
)

// A kernel's websocket can drop while the kernel lives on: a proxy or load
// balancer between evalhost and the gateway cuts idle or long connections,
// a network blips, the gateway restarts its handler. The reader then asks
// the gateway whether the kernel still exists and opens its channels again
// under the same session id, for which Jupyter buffers the kernel's
// messages meanwhile and replays them; only when the kernel is gone, or no
// reconnect succeeds within reconnectFor, is the kernel declared lost.

// reconnectFor bounds the attempts to reconnect a dropped websocket.
var reconnectFor = 10 * time.Second

// ReconnectedError is the warning a cell gets when its kernel's websocket
// dropped and was opened again: nothing was lost that the gateway buffered.
type ReconnectedError struct {
	Kernel string
	Cause  error
	After  time.Duration
}

func (e *ReconnectedError) Error() string {
	return fmt.Sprintf("the websocket to kernel %s dropped (%v) and was reconnected after %v; the kernel and its state "+
		"lived on, and the gateway replays what it buffered meanwhile", e.Kernel, e.Cause, e.After.Round(time.Millisecond))
}

// dialChannels opens a kernel's channels websocket. The session id goes in
// the URL as well as in each message, so that after a drop the gateway
// replays what it buffered for this session.
func (c *Client) dialChannels(ctx context.Context, id, session string) (*websocket.Conn, error) {
	h := http.Header{}
	c.authorize(h)
	u := c.channelsURL(id) + "?session_id=" + url.QueryEscape(session)
	conn, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: c.http, HTTPHeader: h})
	if err != nil {
		if resp != nil && resp.StatusCode >= 300 {
			return nil, fmt.Errorf("gateway kernel %s channels: %w", id,
				&HTTPError{Method: "GET", URL: c.channelsURL(id), Status: resp.StatusCode})
		}
		return nil, fmt.Errorf("gateway kernel %s channels: %w", id, err)
	}
	conn.SetReadLimit(-1) // readMessage bounds messages itself, without closing the socket
	return conn, nil
}

// kernelExists asks the gateway whether it still has kernel id.
func (c *Client) kernelExists(ctx context.Context, id string) (bool, error) {
	_, err := c.do(ctx, http.MethodGet, "/api/kernels/"+url.PathEscape(id), nil, http.StatusOK)
	var he *HTTPError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &he) && he.Status == http.StatusNotFound:
		return false, nil
	}
	return false, err
}

// socket is the kernel's current websocket.
func (k *Kernel) socket() *websocket.Conn {
	k.connMu.Lock()
	defer k.connMu.Unlock()
	return k.conn
}

// socketAndSwap is the current websocket and the channel closed when
// reconnect replaces it.
func (k *Kernel) socketAndSwap() (*websocket.Conn, <-chan struct{}) {
	k.connMu.Lock()
	defer k.connMu.Unlock()
	return k.conn, k.swapped
}

// awaitReconnect waits, after a write failed, for the reader to replace the
// socket; false when the kernel ended or ctx is done first. A write that
// fails because the socket dropped is sent again on the new one.
func (k *Kernel) awaitReconnect(ctx context.Context, swapped <-chan struct{}) bool {
	select {
	case <-swapped:
		return true
	case <-k.done:
		return false
	case <-ctx.Done():
		return false
	}
}

// reconnect reopens the channels after the socket failed with cause, and
// tells the running cell. It returns the death to report when it cannot.
func (k *Kernel) reconnect(ctx context.Context, cause error) error {
	start := time.Now()
	deadline := start.Add(k.links.reconnectFor)
	last := cause
	for delay := 50 * time.Millisecond; ; delay = min(delay*2, time.Second) {
		conn, gone, err := k.tryReconnect(ctx, deadline)
		switch {
		case conn != nil:
			k.connMu.Lock()
			old := k.conn
			k.conn = conn
			close(k.swapped)
			k.swapped = make(chan struct{})
			k.connMu.Unlock()
			_ = old.CloseNow()
			k.enqueue(ctx, inbound{bad: &ReconnectedError{Kernel: k.id, Cause: cause, After: time.Since(start)}})
			return nil
		case gone:
			return &backend.DeathError{ExitCode: -1, Reason: fmt.Sprintf(
				"the websocket to kernel %s closed (%v) and the gateway no longer has that kernel: it ended "+
					"(or the gateway restarted), and its state with it", k.id, cause)}
		case ctx.Err() != nil:
			return backend.ErrClosed
		}
		last = err
		if time.Now().Add(delay).After(deadline) {
			return &backend.DeathError{ExitCode: -1, Reason: fmt.Sprintf(
				"the websocket to kernel %s closed (%v) and reconnecting failed for %v (last: %v): the kernel's state "+
					"is lost to evalhost (it may still run on the gateway at %s)", k.id, cause, k.links.reconnectFor, last, k.client.URL())}
		}
		select {
		case <-ctx.Done():
			return backend.ErrClosed
		case <-time.After(delay):
		}
	}
}

// tryReconnect is one attempt: the kernel's existence, then its channels.
func (k *Kernel) tryReconnect(ctx context.Context, deadline time.Time) (conn *websocket.Conn, gone bool, err error) {
	actx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	alive, err := k.client.kernelExists(actx, k.id)
	if err != nil || !alive {
		return nil, err == nil, err
	}
	conn, err = k.client.dialChannels(actx, k.id, k.session)
	return conn, false, err
}
