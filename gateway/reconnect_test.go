package gateway

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evalhost/evalhost/backend"
	"github.com/evalhost/evalhost/frames"
)

// cutProxy forwards TCP to the real gateway and can cut every connection
// at once (a dropped link, a proxy's idle cut) or stop accepting new ones
// (a gateway that went away).
type cutProxy struct {
	ln      net.Listener
	target  string
	mu      sync.Mutex
	open    *sync.Cond // signalled when stalled or closed changes
	conns   []net.Conn
	refuse  bool
	stalled bool // bytes are read but not passed on: a gateway that stopped answering
	closed  bool
	wg      sync.WaitGroup
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target}
	p.open = sync.NewCond(&p.mu)
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		p.closed = true
		p.open.Broadcast()
		p.mu.Unlock()
		p.cut()
		p.wg.Wait()
	})
	return p
}

func (p *cutProxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.refuse {
			p.mu.Unlock()
			c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns = append(p.conns, c, up)
		p.wg.Add(2)
		p.mu.Unlock()
		go p.pipe(up, c)
		go p.pipe(c, up)
	}
}

// pipe copies src to dst, holding what it read while the proxy is stalled.
func (p *cutProxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			for p.stalled && !p.closed {
				p.open.Wait()
			}
			p.mu.Unlock()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *cutProxy) setStalled(v bool) {
	p.mu.Lock()
	p.stalled = v
	p.open.Broadcast()
	p.mu.Unlock()
}

// cut closes every connection through the proxy.
func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *cutProxy) setRefuse(v bool) {
	p.mu.Lock()
	p.refuse = v
	p.mu.Unlock()
}

// proxiedKernel starts a kernel through a cutProxy in front of the test's
// gateway.
func proxiedKernel(t *testing.T) (*Kernel, *cutProxy, *Client) {
	direct := testClient(t)
	u, err := url.Parse(direct.URL())
	if err != nil {
		t.Fatal(err)
	}
	p := newCutProxy(t, u.Host)
	cfg := testGW.cfg
	cfg.URL = "http://" + p.ln.Addr().String()
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkLeaks(t)
	k, err := c.StartKernel(context.Background(), KernelOptions{NoPrelude: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Close() })
	return k, p, direct
}

// A websocket cut mid-cell is reconnected: the cell finishes with its
// output, says what happened, and the kernel keeps its state.
func TestDroppedSocketReconnects(t *testing.T) {
	k, p, _ := proxiedKernel(t)
	var got []string
	done, err := k.Execute(context.Background(), frames.Request{ID: "r1",
		Code: "x = 5\nprint('a', flush=True)\nimport time\ntime.sleep(1)\nprint('b', flush=True)"},
		func(f frames.Frame) {
			got = append(got, summary(f))
			if f.Type == frames.TypeStdout && strings.Contains(f.Data, "a") {
				p.cut()
			}
		})
	all := strings.Join(got, "|")
	if err != nil || done.Status != frames.StatusOK {
		t.Fatalf("Execute = %+v, %v; frames %q", done, err, got)
	}
	if !strings.Contains(all, "stdout:b") || !strings.Contains(all, "was reconnected") {
		t.Errorf("frames %q: want b after the cut and a warning that the socket was reconnected", got)
	}
	got, _, err = run(t, k, context.Background(), frames.Request{ID: "r2", Code: "print(x)"})
	if err != nil || !strings.Contains(strings.Join(got, ""), "stdout:5") {
		t.Errorf("after the reconnect: %q %v, want x kept", got, err)
	}
}

// A kernel the gateway no longer has is declared dead at once, saying so.
func TestDroppedSocketOfGoneKernel(t *testing.T) {
	k, p, direct := proxiedKernel(t)
	if err := direct.deleteKernel(context.Background(), k.ID()); err != nil {
		t.Fatal(err)
	}
	p.cut()
	select {
	case <-k.Done():
	case <-time.After(reconnectFor):
		t.Fatal("the kernel was not declared lost")
	}
	var de *backend.DeathError
	if !errors.As(k.Err(), &de) || !strings.Contains(de.Reason, "no longer has that kernel") {
		t.Errorf("Err = %v, want a death naming the gone kernel", k.Err())
	}
}

// A gateway that cannot be reached again ends the kernel after
// reconnectFor, and a cell waiting on it ends with that death.
func TestDroppedSocketUnreachable(t *testing.T) {
	old := reconnectFor
	reconnectFor = time.Second
	t.Cleanup(func() { reconnectFor = old })
	k, p, direct := proxiedKernel(t)
	t.Cleanup(func() { _ = direct.deleteKernel(context.Background(), k.ID()) })
	var err error
	_, err = k.Execute(context.Background(), frames.Request{ID: "u1", Code: "print('a', flush=True)\nimport time\ntime.sleep(30)"},
		func(f frames.Frame) {
			if f.Type == frames.TypeStdout {
				p.setRefuse(true)
				p.cut()
			}
		})
	var de *backend.DeathError
	if !errors.As(err, &de) || !strings.Contains(de.Reason, "reconnecting failed") {
		t.Errorf("Execute = %v, want a death saying reconnecting failed", err)
	}
}

// A gateway that stops answering with the connection left open is noticed
// by the pings, and the kernel is declared lost once reconnecting fails.
func TestSilentGatewayNoticed(t *testing.T) {
	oldEvery, oldTimeout, oldFor := pingEvery, pingTimeout, reconnectFor
	// A pong may be slow under -race on a loaded machine: a false drop
	// during the start would be reconnected, but this test is not about that.
	pingEvery, pingTimeout, reconnectFor = 200*time.Millisecond, 2*time.Second, 2*time.Second
	t.Cleanup(func() { pingEvery, pingTimeout, reconnectFor = oldEvery, oldTimeout, oldFor })
	k, p, direct := proxiedKernel(t)
	t.Cleanup(func() { _ = direct.deleteKernel(context.Background(), k.ID()) })
	t.Cleanup(func() { p.setStalled(false) })
	_, err := k.Execute(context.Background(), frames.Request{ID: "s1", Code: "print('a', flush=True)\nimport time\ntime.sleep(60)"},
		func(f frames.Frame) {
			if f.Type == frames.TypeStdout {
				p.setStalled(true)
			}
		})
	var de *backend.DeathError
	if !errors.As(err, &de) || !strings.Contains(de.Reason, "the gateway stopped answering") ||
		!strings.Contains(de.Reason, "reconnecting failed") {
		t.Errorf("Execute = %v, want a death saying the gateway stopped answering and reconnecting failed", err)
	}
}

// Output the kernel wrote while the socket was down is replayed by the
// gateway after the reconnect, in order.
func TestDroppedSocketReplaysOutput(t *testing.T) {
	k, p, _ := proxiedKernel(t)
	reopened := make(chan struct{})
	t.Cleanup(func() { <-reopened })
	var got []string
	done, err := k.Execute(context.Background(), frames.Request{ID: "p1",
		Code: "print('a', flush=True)\nimport time\ntime.sleep(0.3)\nprint('b', flush=True)\ntime.sleep(0.3)\nprint('c', flush=True)"},
		func(f frames.Frame) {
			got = append(got, summary(f))
			if f.Type == frames.TypeStdout && strings.Contains(f.Data, "a") {
				// Down for longer than the cell has left to run.
				p.setRefuse(true)
				p.cut()
				time.AfterFunc(time.Second, func() { p.setRefuse(false); close(reopened) })
			}
		})
	var out strings.Builder
	for _, g := range got {
		if s, ok := strings.CutPrefix(g, "stdout:"); ok {
			out.WriteString(s)
		}
	}
	if err != nil || done.Status != frames.StatusOK || out.String() != "a\nb\nc\n" {
		t.Errorf("Execute = %+v, %v; frames %q: want a, b, c and ok", done, err, got)
	}
}
