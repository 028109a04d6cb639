package shared

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/tcpowner"
)

// kernelConn is the part of a kernel's connection file that says where
// its channels are.
type kernelConn struct {
	Transport string `json:"transport"`
	IP        string `json:"ip"`
	Shell     int    `json:"shell_port"`
	IOPub     int    `json:"iopub_port"`
	Stdin     int    `json:"stdin_port"`
	Control   int    `json:"control_port"`
	HB        int    `json:"hb_port"`
}

// endpoints are the ZMQ addresses of the kernel's five channels.
func (c kernelConn) endpoints() []string {
	var out []string
	for _, p := range []int{c.Shell, c.IOPub, c.Stdin, c.Control, c.HB} {
		if c.Transport == "ipc" {
			out = append(out, fmt.Sprintf("ipc://%s-%d", c.IP, p))
		} else {
			out = append(out, fmt.Sprintf("%s://%s:%d", c.Transport, c.IP, p))
		}
	}
	return out
}

// Another local user can neither reach nor take the ZMQ channels between
// the shared gateway and its kernels, over which go every cell's code and
// output and the kernel's environment. Over TCP on 127.0.0.1 (the
// kernel's default) anyone could connect to them, and take a port that
// jupyter_client chose by binding and closing it; the kernels evalhost's
// gateway starts use unix sockets in a directory only this user may enter.
func TestKernelChannelsClosedToOtherUsers(t *testing.T) {
	needGateway(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	k := testKernel(t, ctx)
	pid, conn := kernelProcess(t, testEP.PID, k.ID())
	eps := conn.endpoints()

	// As another user: reach each channel, and plant a socket beside them.
	out := asOtherUser(t, "dial", "EVALHOST_SHARED_TEST_DIAL="+strings.Join(eps, "\n"))
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(l, "refused ") || !strings.Contains(l, "permission denied") {
			t.Errorf("uid %d: %s", squatUID, l)
		}
	}
	if t.Failed() {
		t.Fatalf("another user reached the kernel's channels %v", eps)
	}

	if conn.Transport != "ipc" {
		t.Fatalf("kernel transport %q, want ipc", conn.Transport)
	}
	if want := testEP.KernelDir + "/"; !strings.HasPrefix(conn.IP, want) {
		t.Errorf("kernel sockets at %s, want them in the gateway's kernel directory %s", conn.IP, testEP.KernelDir)
	}
	fi, err := os.Lstat(filepath.Dir(conn.IP))
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); !fi.IsDir() || fi.Mode().Perm() != 0o700 || int(st.Uid) != os.Geteuid() {
		t.Errorf("kernel socket directory %s: %v owned by %d, want a directory of mode 0700 owned by %d",
			filepath.Dir(conn.IP), fi.Mode(), st.Uid, os.Geteuid())
	}
	listening := unixListeners(t, pid)
	for _, ep := range eps {
		if p := strings.TrimPrefix(ep, "ipc://"); !slices.Contains(listening, p) {
			t.Errorf("the kernel (pid %d) does not listen on %s; it listens on %q", pid, p, listening)
		}
	}

	// The kernel's one TCP listener may be ipykernel's pipe for the output
	// of forked subprocesses (see doc.go): nothing else.
	pipe := strings.TrimSpace(cell(t, k, "import sys; print(getattr(getattr(sys.stdout, 'pub_thread', None), '_pipe_port', 0))"))
	socks, err := tcpowner.Listening(pid)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range socks {
		if strconv.Itoa(int(s.Local.Port())) != pipe {
			t.Errorf("the kernel (pid %d) listens on TCP %v (its subprocess pipe is port %s)", pid, s.Local, pipe)
		}
	}
}

// kernelProcess finds the child of the gateway running kernel id and
// reads its connection file.
func kernelProcess(t *testing.T, gatewayPID int, id string) (int, kernelConn) {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		stat, err := os.ReadFile(p + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) < 2 || f[1] != strconv.Itoa(gatewayPID) {
			continue
		}
		raw, _ := os.ReadFile(p + "/cmdline")
		args := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		i := slices.Index(args, "-f")
		if i < 0 || i+1 >= len(args) || !strings.Contains(args[i+1], id) {
			continue
		}
		var conn kernelConn
		raw, err = os.ReadFile(args[i+1])
		if err == nil {
			err = json.Unmarshal(raw, &conn)
		}
		if err != nil {
			t.Fatalf("connection file of kernel %s: %v", id, err)
		}
		pid, _ := strconv.Atoi(filepath.Base(p))
		return pid, conn
	}
	t.Fatalf("no child of the gateway (pid %d) runs kernel %s", gatewayPID, id)
	return 0, kernelConn{}
}

// unixListeners are the paths of the listening unix sockets pid holds.
func unixListeners(t *testing.T, pid int) []string {
	t.Helper()
	table, err := os.ReadFile("/proc/net/unix")
	if err != nil {
		t.Fatal(err)
	}
	paths := map[string]string{} // inode -> path
	sc := bufio.NewScanner(bytes.NewReader(table))
	for sc.Scan() {
		// Num RefCount Protocol Flags Type St Inode Path; flag 0x10000 is
		// __SO_ACCEPTCON, a listener.
		f := strings.Fields(sc.Text())
		if len(f) < 8 {
			continue // no path: not a socket in the file system
		}
		if flags, err := strconv.ParseUint(f[3], 16, 32); err == nil && flags&0x10000 != 0 {
			paths[f[6]] = f[7]
		}
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, fd := range fds {
		link, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if ino, ok := strings.CutPrefix(link, "socket:["); ok {
			if p, ok := paths[strings.TrimSuffix(ino, "]")]; ok {
				out = append(out, p)
			}
		}
	}
	return out
}

// asOtherUser runs the test binary's helper mode as squatUID and returns
// its output. It skips t unless this process may change uid (root).
func asOtherUser(t *testing.T, mode string, env ...string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a process as another user")
	}
	cmd := exec.Command(squatBinary(t), "-test.run=^$")
	cmd.Env = append([]string{helperEnv + "=" + mode}, env...)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: squatUID, Gid: squatUID}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper %s as uid %d: %v\n%s", mode, squatUID, err, out)
	}
	return string(out)
}

// helperDial is another user trying each ZMQ endpoint in
// EVALHOST_SHARED_TEST_DIAL (one a line): connecting to it, and for a unix
// socket also binding one of its own beside it. It prints "reached EP",
// "planted PATH" or "refused EP: ERR" for each.
func helperDial() {
	for _, ep := range strings.Split(os.Getenv("EVALHOST_SHARED_TEST_DIAL"), "\n") {
		network, addr := "tcp", strings.TrimPrefix(ep, "tcp://")
		if p, ok := strings.CutPrefix(ep, "ipc://"); ok {
			network, addr = "unix", p
		}
		if c, err := net.DialTimeout(network, addr, 5*time.Second); err != nil {
			fmt.Printf("refused %s: %v\n", ep, err)
		} else {
			c.Close()
			fmt.Printf("reached %s\n", ep)
		}
		if network != "unix" {
			continue
		}
		planted := addr + "-planted"
		if l, err := net.Listen("unix", planted); err != nil {
			fmt.Printf("refused %s: %v\n", planted, err)
		} else {
			l.Close()
			fmt.Printf("planted %s\n", planted)
		}
	}
}
