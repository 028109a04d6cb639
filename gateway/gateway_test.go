package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// testGateway is a kernel gateway this package's tests start themselves:
// the shared one belongs to package gateway/shared, which imports this
// package. It has the settings the tests rely on (no iopub throttle, fast
// death detection and kernel deletion); gateway/shared's tests cover the
// shared gateway's own.
type testGateway struct {
	cmd  *exec.Cmd
	cfg  Config
	done chan struct{}
}

func startTestGateway(ctx context.Context, python string) (*testGateway, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	var b [16]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	cmd := exec.Command(python, "-m", "kernel_gateway",
		"--KernelGatewayApp.ip=127.0.0.1", "--KernelGatewayApp.port="+strconv.Itoa(port),
		"--KernelGatewayApp.port_retries=0", "--ZMQChannelsWebsocketConnection.limit_rate=False",
		"--KernelRestarter.time_to_dead=0.25", "--KernelManager.shutdown_wait_time=0.5")
	cmd.Env = append(os.Environ(), "KG_AUTH_TOKEN="+token)
	cmd.Dir = os.TempDir()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	g := &testGateway{cmd: cmd, cfg: Config{URL: "http://127.0.0.1:" + strconv.Itoa(port), Token: token}, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(g.done) }()
	c, err := NewClient(g.cfg)
	if err == nil {
		err = waitHealthy(ctx, c, g.done)
	}
	if err != nil {
		g.stop()
		return nil, err
	}
	return g, nil
}

func waitHealthy(ctx context.Context, c *Client, exited <-chan struct{}) error {
	for {
		hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := c.Health(hctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("the test gateway exited: %v", err)
		case <-ctx.Done():
			return fmt.Errorf("the test gateway never became healthy: %w", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// stop asks the gateway to end its kernels and exit, and kills it if it
// has not within 10 s.
func (g *testGateway) stop() {
	_ = g.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-g.done:
	case <-time.After(10 * time.Second):
		_ = g.cmd.Process.Kill()
		<-g.done
	}
}
