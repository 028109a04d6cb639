package gateway

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// scriptedKernel is a fake gateway with one kernel, "k1", connected: DELETE
// succeeds, and answer is called for each execute_request with the
// request's msg_id; an error from it ends the connection without a close
// frame. A kernel_info_request that answer does not read itself is answered
// as ipykernel does (answerInfo). With slow, the server's connections write
// as slowLink does.
func scriptedKernel(t testing.TB, answer func(ctx context.Context, conn *websocket.Conn, parent string) error, slow *atomic.Bool) *Kernel {
	t.Helper()
	return scriptedGateway(t, answer, slow, nil)
}

// scriptedGateway is scriptedKernel whose other POSTs (the REST interrupt)
// go to rest.
func scriptedGateway(t testing.TB, answer func(ctx context.Context, conn *websocket.Conn, parent string) error, slow *atomic.Bool,
	rest http.HandlerFunc) *Kernel {
	t.Helper()
	checkLeaks(t)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if rest != nil && r.Method == http.MethodPost {
			rest(w, r)
			return
		}
		conn, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		conn.SetReadLimit(-1)
		defer conn.CloseNow()
		for {
			_, raw, err := conn.Read(r.Context())
			if err != nil {
				return
			}
			var req message
			if json.Unmarshal(raw, &req) != nil {
				continue
			}
			switch req.Header.MsgType {
			case "execute_request":
				err = answer(r.Context(), conn, req.Header.MsgID)
			case "kernel_info_request":
				err = answerInfo(r.Context(), conn, req.Header.MsgID)
			}
			if err != nil {
				return
			}
		}
	}))
	if slow != nil {
		srv.Listener = slowListener{srv.Listener, slow}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	c, _ := NewClient(Config{URL: srv.URL})
	k, err := c.connect(context.Background(), "k1", DefaultGrace, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Close() })
	return k
}

// answerInfo answers a kernel_info_request as ipykernel does: a status
// busy and idle on iopub around the reply on shell.
func answerInfo(ctx context.Context, conn *websocket.Conn, parent string) error {
	for _, m := range [][]byte{jupyterMessage("status", parent, []byte(`{"execution_state":"busy"}`)),
		jupyterMessage("kernel_info_reply", parent, []byte(infoReply)),
		jupyterMessage("status", parent, []byte(`{"execution_state":"idle"}`))} {
		if err := conn.Write(ctx, websocket.MessageText, m); err != nil {
			return err
		}
	}
	return nil
}

// sendThenCountInterrupts writes msgs ({type, content}) for parent, then
// reads until the idle watch's kernel_info_request, which it answers,
// counting the interrupt_requests that came before it.
func sendThenCountInterrupts(ctx context.Context, conn *websocket.Conn, parent string, msgs [][2]string, interrupts *atomic.Int32) error {
	for _, m := range msgs {
		if err := conn.Write(ctx, websocket.MessageText, jupyterMessage(m[0], parent, []byte(m[1]))); err != nil {
			return err
		}
	}
	for {
		_, raw, err := conn.Read(ctx)
		if err != nil {
			return err
		}
		var req message
		_ = json.Unmarshal(raw, &req)
		switch req.Header.MsgType {
		case "interrupt_request":
			interrupts.Add(1)
		case "kernel_info_request":
			return answerInfo(ctx, conn, req.Header.MsgID)
		}
	}
}

const infoReply = `{"status":"ok","protocol_version":"5.3","implementation":"ipython","language_info":{"name":"python"}}`

// jupyterMessage is a message of the gateway's websocket; the parent's
// msg_id comes first, at parentAt, so that a large message built once can be
// sent to several cells.
func jupyterMessage(typ, parent string, content []byte) []byte {
	channel := "iopub"
	if strings.HasSuffix(typ, "_reply") {
		channel = "shell"
	}
	b := append([]byte(`{"parent_header":{"msg_id":"`), parent...)
	b = append(b, `"},"header":{"msg_id":"`+newID()+`","msg_type":"`+typ+`"},"channel":"`+channel+`","metadata":{},"content":`...)
	b = append(b, content...)
	return append(b, '}')
}

const parentAt = len(`{"parent_header":{"msg_id":"`)

// slowLink is how a slowListener's connections write while slow is set: a
// gateway sending over a link of about 1.6 MB/s, bytes flowing steadily.
const (
	slowStep  = 16 << 10
	slowPause = 10 * time.Millisecond
)

type slowListener struct {
	net.Listener
	slow *atomic.Bool
}

func (l slowListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return slowConn{c, l.slow}, nil
}

type slowConn struct {
	net.Conn
	slow *atomic.Bool
}

func (c slowConn) Write(p []byte) (int, error) {
	if !c.slow.Load() {
		return c.Conn.Write(p)
	}
	n := 0
	for n < len(p) {
		m, err := c.Conn.Write(p[n:min(len(p), n+slowStep)])
		n += m
		if err != nil {
			return n, err
		}
		time.Sleep(slowPause)
	}
	return n, nil
}
