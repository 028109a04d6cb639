package shared

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/backend"
	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/gateway"
	"github.com/evalhost/evalhost/internal/tcpowner"
)

// A connection whose other end is another user's process gets nothing:
// not the token, not a request, whatever the call.
func TestForeignListenerGetsNothing(t *testing.T) {
	cases := []struct {
		name string
		call func(ctx context.Context, c *gateway.Client) error
	}{
		{"health check", func(ctx context.Context, c *gateway.Client) error { return c.Health(ctx) }},
		{"kernel start", func(ctx context.Context, c *gateway.Client) error {
			k, err := c.StartKernel(ctx, gateway.KernelOptions{NoPrelude: true})
			if err == nil {
				_ = k.Close()
			}
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sq := startSquatter(t)
			info := Info{URL: "http://" + sq.addr, PID: sq.cmd.Process.Pid, Token: "the-shared-gateway-token"}
			c, err := gateway.NewClient(info.Config())
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err = tc.call(ctx, c)
			if reqs := sq.requests(t); len(reqs) > 0 {
				t.Errorf("another user's listener was sent %q", reqs)
			}
			if !errors.Is(err, ErrForeignListener) || !strings.Contains(err.Error(), "belongs to uid "+strconv.Itoa(squatUID)) ||
				!strings.Contains(err.Error(), "evalhost gateway stop") {
				t.Fatalf("%s through another user's listener: err = %v; want ErrForeignListener naming uid %d and what to do",
					tc.name, err, squatUID)
			}
		})
	}
}

// gateway.json names a pid that still looks like the gateway, but another
// user holds the recorded port: Acquire must not send it the token, and
// starts a gateway of its own instead.
func TestRecordedPortTakenByAnotherUser(t *testing.T) {
	home := freshHome(t)
	sq := startSquatter(t)
	port := sq.addr[strings.LastIndexByte(sq.addr, ':')+1:]
	// Ours, alive, with the argv of a gateway on that port: what a gateway
	// that stopped listening (shutting down, or a reused pid) looks like.
	decoy := exec.Command(testPython, "-c", "import sys; sys.stdin.read()", "kernel_gateway", "--KernelGatewayApp.port="+port)
	stdin, err := decoy.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := decoy.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); _ = decoy.Wait() }()
	dir := dirFor(home, testPython)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	rec := Info{URL: "http://" + sq.addr, PID: decoy.Process.Pid, PythonPath: testPython, Token: "the-shared-gateway-token", StartedAt: time.Now()}
	if err := writeInfo(dir, rec); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ep, err := Acquire(ctx, home, testPython)
	if reqs := sq.requests(t); len(reqs) > 0 {
		t.Errorf("another user's listener on the recorded port was sent %q", reqs)
	}
	if err != nil {
		t.Fatal(err)
	}
	if ep.Reused || ep.URL == rec.URL || ep.PID == rec.PID {
		t.Errorf("Acquire = %+v; want a new gateway, not the recorded one", ep.Info)
	}
	if !isGateway(ep.Info) {
		t.Errorf("the new gateway %+v does not hold its port", ep.Info)
	}
}

// Another user watching for the gateway's start cannot take its port
// first: evalhost used to choose a free port, close it and pass it in the
// gateway's argv, where ps shows it, seconds before the gateway bound it.
func TestSpawnedGatewayPortCannotBeTaken(t *testing.T) {
	home := freshHome(t)
	sq := startSquatter(t, "EVALHOST_SHARED_TEST_SQUAT_PARENT="+strconv.Itoa(os.Getpid()))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ep, err := Acquire(ctx, home, testPython)
	if reqs := sq.requests(t); len(reqs) > 0 {
		t.Errorf("another user took the gateway's port and was sent %q", reqs)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !isGateway(ep.Info) || !listensOn(t, ep) {
		t.Errorf("the gateway %+v does not hold its port", ep.Info)
	}
}

// The gateway ends while a kernel's websocket is open, and another user
// takes its port: reconnecting, and what follows (interrupt, delete), must
// not carry the token there. The kernel is lost, and the cell says why.
func TestEndedGatewaysPortTakenByAnotherUser(t *testing.T) {
	g := startInUse(t)
	ep, k := g.ep, g.k
	// Killed, not closed: its gateway is gone, there is no one to ask.
	defer k.Kill()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := syscall.Kill(ep.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Its port is free only once its last thread has exited: a killed
	// process is a zombie while its other threads, which share its
	// descriptors, still exit. Its reaping (it is our child) waits for them.
	for i := 0; i < 500 && !errors.Is(syscall.Kill(ep.PID, 0), syscall.ESRCH); i++ {
		spawned.reap()
		time.Sleep(20 * time.Millisecond)
	}
	// The kernel's reconnecting goes on for 10 s; the port is taken well
	// within them.
	sq := startSquatter(t, "EVALHOST_SHARED_TEST_SQUAT_PORT="+ep.URL[strings.LastIndexByte(ep.URL, ':')+1:])
	_, err := k.Execute(ctx, frames.Request{ID: "c", Code: "print('secret work')"}, func(frames.Frame) {})
	if reqs := sq.requests(t); len(reqs) > 0 {
		t.Errorf("another user's listener on the ended gateway's port was sent %q", reqs)
	}
	var death *backend.DeathError
	if !errors.As(err, &death) {
		t.Fatalf("cell after the gateway ended: %v; want the kernel lost", err)
	}
}

// listensOn reports whether ep's pid holds the listener at ep's URL.
func listensOn(t *testing.T, ep *Endpoint) bool {
	t.Helper()
	u, err := url.Parse(ep.URL)
	if err != nil {
		t.Fatal(err)
	}
	want, err := netip.ParseAddrPort(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	socks, err := tcpowner.Listening(ep.PID)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range socks {
		if s.Local == want {
			return true
		}
	}
	return false
}

// In a user namespace that does not map the user (unshare -U), every
// unmapped user's socket shows the overflow uid evalhost then runs as, so
// whose a listener is cannot be told: nothing is trusted, not even a
// listener of its own, and the refusal says what to use instead.
func TestUnmappedUserNamespaceTrustsNothing(t *testing.T) {
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("no unshare")
	}
	if err := exec.Command(unshare, "-U", "true").Run(); err != nil {
		t.Skipf("no user namespace here: %v", err)
	}
	cmd := exec.Command(unshare, "-U", os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=unmapped")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "refused") || !strings.Contains(string(out), "overflow uid") {
		t.Fatalf("verifyConn under unshare -U: %v\n%s\nwant a refusal naming the overflow uid", err, out)
	}
}

// helperUnmapped dials a listener of its own and prints what verifyConn
// says of the connection.
func helperUnmapped() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(1)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		fmt.Println("dial:", err)
		os.Exit(1)
	}
	defer c.Close()
	if err := verifyConn(c); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("trusted")
}
