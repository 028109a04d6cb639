package remotetest

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/testkit"
)

// launcher is Enterprise Gateway's kernel launcher for remote kernels.
//
//go:embed launch_ipykernel.py
var launcher []byte

// Kernelspec names the fixture's gateway offers.
const (
	LocalKernel  = "evh_local"  // a kernel on this host (EG's LocalProcessProxy)
	RemoteKernel = "evh_remote" // a kernel on the Host, over ssh (DistributedProcessProxy)
)

// GatewayOptions configure StartGateway.
type GatewayOptions struct {
	Host *Host    // where RemoteKernel runs; nil offers LocalKernel only
	Args []string // more Enterprise Gateway flags
	Env  []string // more environment for it
}

// Gateway is a running Jupyter Enterprise Gateway.
type Gateway struct {
	URL        string // http://127.0.0.1:PORT
	Token      string // its auth token (EG_AUTH_TOKEN)
	KernelName string // its default kernelspec: RemoteKernel with a Host, else LocalKernel
	Python     string // the venv's python, which its kernels run
	Dir        string

	t       testing.TB
	cmd     *exec.Cmd
	exited  chan struct{}
	watcher *watcher
}

// Venv is where the Enterprise Gateway venv is looked for.
func Venv() string {
	if v := os.Getenv("EVALHOST_EG_VENV"); v != "" {
		return v
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "evalhost-test", "enterprise-gateway-3.3.0")
}

// Missing says why Enterprise Gateway cannot run here, or "".
func Missing() string {
	py := filepath.Join(Venv(), "bin", "python")
	if out, err := exec.Command(py, "-c", "import enterprise_gateway, ipykernel").CombinedOutput(); err != nil {
		return fmt.Sprintf("Jupyter Enterprise Gateway 3.3 is not installed in %s (run scripts/test-deps.sh): %v: %s",
			Venv(), err, strings.TrimSpace(string(out)))
	}
	return ""
}

// StartGateway starts Enterprise Gateway on loopback with a random token,
// or skips t when it is not installed.
func StartGateway(t testing.TB, opts GatewayOptions) *Gateway {
	t.Helper()
	if why := Missing(); why != "" {
		testkit.Unavailable(t, why)
	}
	g := &Gateway{t: t, Token: randomHex(t, 16), Python: filepath.Join(Venv(), "bin", "python"),
		Dir: markedDir(t), KernelName: LocalKernel, exited: make(chan struct{})}
	home := g.writeFiles(opts.Host)
	port := freePort(t)
	g.URL = "http://127.0.0.1:" + strconv.Itoa(port)
	args := append([]string{"-m", "enterprise_gateway",
		"--EnterpriseGatewayApp.ip=127.0.0.1", "--EnterpriseGatewayApp.port=" + strconv.Itoa(port),
		"--EnterpriseGatewayApp.port_retries=0",
		"--EnterpriseGatewayApp.default_kernel_name=" + g.KernelName,
		// Deaths are noticed in a second (Jupyter's default: 3 s), and a
		// delete waits 1 s for the kernel to go (default 5 s).
		"--KernelRestarter.time_to_dead=1", "--KernelManager.shutdown_wait_time=1",
	}, opts.Args...)
	g.cmd = exec.Command(g.Python, args...)
	g.cmd.Dir = g.Dir
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C.UTF-8",
		"JUPYTER_PATH=" + filepath.Join(g.Dir, "jupyter"),
		"JUPYTER_DATA_DIR=" + filepath.Join(g.Dir, "jupyter"),
		"JUPYTER_RUNTIME_DIR=" + filepath.Join(g.Dir, "runtime"),
		"JUPYTER_CONFIG_DIR=" + filepath.Join(g.Dir, "config"),
		"EG_AUTH_TOKEN=" + g.Token,
		"EG_KERNEL_LOG_DIR=" + g.Dir,
		"EG_KERNEL_LAUNCH_TIMEOUT=40",
	}
	if h := opts.Host; h != nil {
		env = append(env, "EG_REMOTE_HOSTS="+h.IP,
			// The remote launcher sends the kernel's connection info to
			// this address: it must be reachable from the other host.
			"EG_RESPONSE_IP="+h.HostIP, "EG_RESPONSE_PORT="+strconv.Itoa(freePort(t)))
	}
	g.cmd.Env = append(env, opts.Env...)
	log, err := os.Create(filepath.Join(g.Dir, "gateway.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	g.cmd.Stdout, g.cmd.Stderr = log, log
	dieWithParent(g.cmd)
	if err := g.cmd.Start(); err != nil {
		t.Fatalf("starting Enterprise Gateway: %v", err)
	}
	go func() { _ = g.cmd.Wait(); close(g.exited) }()
	// Its local kernels are in sessions of their own: the watcher ends the
	// gateway's process group, then any process whose command line names
	// this fixture's own directory (a local kernel's connection file is
	// under it), which nothing else can.
	pid := g.cmd.Process.Pid
	g.watcher = watch(t, fmt.Sprintf(`kill -TERM -%d 2>/dev/null; kill -CONT -%d 2>/dev/null
for i in $(seq 50); do kill -0 %d 2>/dev/null || break; sleep 0.1; done
kill -KILL -%d 2>/dev/null
for p in /proc/[0-9]*; do
  [ "${p#/proc/}" = $$ ] && continue
  tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -qF %s && kill -KILL "${p#/proc/}" 2>/dev/null
done
true
`, pid, pid, pid, pid, shellQuote(g.Dir)), g.Dir)
	t.Cleanup(g.Stop)
	g.waitReady()
	return g
}

// writeFiles writes the kernelspecs, the launcher and, for a Host, the ssh
// identity and known_hosts Enterprise Gateway's paramiko reads from $HOME.
func (g *Gateway) writeFiles(h *Host) (home string) {
	home = filepath.Join(g.Dir, "home")
	kernels := filepath.Join(g.Dir, "jupyter", "kernels")
	specs := map[string]any{
		LocalKernel: map[string]any{
			"display_name": "Python (evalhost test, local)", "language": "python",
			"argv": []string{g.Python, "-m", "ipykernel_launcher", "-f", "{connection_file}"},
		},
	}
	if h != nil {
		g.KernelName = RemoteKernel
		script := filepath.Join(g.Dir, "launch_ipykernel.py")
		g.write(script, launcher, 0o600)
		specs[RemoteKernel] = map[string]any{
			"display_name": "Python (evalhost test, on " + h.Name + ")", "language": "python",
			"metadata": map[string]any{"process_proxy": map[string]any{
				"class_name": "enterprise_gateway.services.processproxies.distributed.DistributedProcessProxy"}},
			"argv": []string{g.Python, script,
				"--RemoteProcessProxy.kernel-id", "{kernel_id}",
				"--RemoteProcessProxy.response-address", "{response_address}",
				"--RemoteProcessProxy.public-key", "{public_key}",
				"--RemoteProcessProxy.port-range", "{port_range}",
				"--RemoteProcessProxy.spark-context-initialization-mode", "none"},
		}
		key, err := os.ReadFile(h.ClientKey)
		if err != nil {
			g.t.Fatal(err)
		}
		g.write(filepath.Join(home, ".ssh", "id_ed25519"), key, 0o600)
		g.write(filepath.Join(home, ".ssh", "known_hosts"), []byte(h.KnownHosts), 0o600)
	}
	for name, spec := range specs {
		raw, _ := json.MarshalIndent(spec, "", "  ")
		g.write(filepath.Join(kernels, name, "kernel.json"), raw, 0o644)
	}
	return home
}

func (g *Gateway) write(path string, data []byte, mode os.FileMode) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		g.t.Fatal(err)
	}
	if err := os.WriteFile(path, data, mode); err != nil {
		g.t.Fatal(err)
	}
}

// waitReady waits until GET /api/kernelspecs answers 200 with the token.
func (g *Gateway) waitReady() {
	deadline := time.Now().Add(60 * time.Second)
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		req, _ := http.NewRequest(http.MethodGet, g.URL+"/api/kernelspecs", nil)
		req.Header.Set("Authorization", "token "+g.Token)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		select {
		case <-g.exited:
			g.t.Fatalf("Enterprise Gateway exited before it answered: %s", g.Log())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			g.t.Fatalf("Enterprise Gateway did not answer within 60 s (%v): %s", err, g.Log())
		}
	}
}

// Log is the gateway's output so far.
func (g *Gateway) Log() string {
	out, _ := os.ReadFile(filepath.Join(g.Dir, "gateway.log"))
	return string(out)
}

// Pause stops the gateway process (SIGSTOP): it holds its connections and
// answers nothing. Resume continues it.
func (g *Gateway) Pause()  { _ = g.cmd.Process.Signal(syscall.SIGSTOP) }
func (g *Gateway) Resume() { _ = g.cmd.Process.Signal(syscall.SIGCONT) }

// Stop ends the gateway and its kernels. Safe to call twice.
func (g *Gateway) Stop() {
	if err := g.watcher.run(); err != nil {
		g.t.Errorf("Enterprise Gateway: %v", err)
	}
	<-g.exited
}

// Marker is in the command line of every process a fixture starts, or of
// an ancestor of it below the test process.
const Marker = "evalhost-remotetest-"

// Owns reports whether a process with this command line is a fixture's,
// for leak checks (leakcheck.Options.IgnoreProcess), which run before the
// fixture's own teardown.
func Owns(cmdline string) bool {
	return strings.Contains(cmdline, Marker) || strings.Contains(cmdline, "-m enterprise_gateway")
}

// markedDir is a temporary directory, removed at cleanup, whose path holds
// Marker.
func markedDir(t testing.TB) string {
	dir, err := os.MkdirTemp("", Marker+"*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
