package remotetest

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Host is a second machine made of a network namespace: its own hostname
// (a UTS namespace around its sshd, which its sessions inherit), one link
// to this host (a veth pair, or where the kernel has no netem a TAP pair
// joined by this process: see LinkKind), and sshd listening on the link
// with key-only login for root.
type Host struct {
	Name     string   // hostname inside; kernels started there report it
	NS       string   // network namespace
	HostIP   string   // this side of the link
	IP       string   // the host's side: sshd listens here
	HostLink string   // this side's interface
	Link     string   // the host's interface
	Kind     LinkKind // what the link is, and so what Delay delays
	Dir      string   // keys, sshd config, logs
	// Hidden is a directory that exists here but not there: a tmpfs is
	// mounted over its parent on the other host. A cwd under it is one
	// the remote host lacks.
	Hidden string
	// TempDir is the host's own temporary directory, its sessions'
	// TMPDIR: a tmpfs there, empty here, so what its kernels leave in it
	// (a kernel killed by the teardown never removes its connection file)
	// goes with the host instead of staying in this host's /tmp.
	TempDir string
	// ClientKey is a private key root may log in with; KnownHosts is the
	// known_hosts line for the host's key.
	ClientKey, KnownHosts string

	t       testing.TB
	sshd    *exec.Cmd
	watcher *watcher
	wire    *wire // LinkTAP's forwarder
}

// NewHost makes a second host, or skips t when this machine cannot.
func NewHost(t testing.TB) *Host {
	t.Helper()
	return newHost(t, "")
}

// newHost makes a second host joined by a link of kind, or by the one
// chooseLink picks when kind is "". A veth link's Delay needs netem.
func newHost(t testing.TB, kind LinkKind) *Host {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("remote-host tests make Linux network namespaces")
	}
	if os.Geteuid() != 0 {
		t.Skip("remote-host tests make network namespaces, which needs root")
	}
	sshd := "/usr/sbin/sshd"
	for _, tool := range []string{"ip", "unshare", "ssh-keygen", sshd} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("remote-host tests need %s (scripts/test-deps.sh installs iproute2, util-linux and openssh-server): %v", tool, err)
		}
	}
	id := randomHex(t, 3)
	h := &Host{t: t, Name: "evh-remote-" + id, NS: "evhr-" + id,
		HostLink: "evh" + id + "h", Link: "evh" + id + "k",
		Dir: markedDir(t)}
	// A /30 in 10.200.0.0-10.249.255.255, random so parallel runs do not meet.
	var b [2]byte
	_, _ = rand.Read(b[:])
	h.HostIP = fmt.Sprintf("10.%d.%d.1", 200+int(b[0])%50, b[1])
	h.IP = fmt.Sprintf("10.%d.%d.2", 200+int(b[0])%50, b[1])
	if out, err := exec.Command("ip", "netns", "add", h.NS).CombinedOutput(); err != nil {
		t.Skipf("cannot make a network namespace here (%v: %s); the remote-host tests need root and a kernel that allows them",
			err, bytes.TrimSpace(out))
	}
	// From here on the watcher owns the teardown, whatever happens to us.
	h.watcher = watch(t, h.teardownScript(), h.Dir)
	t.Cleanup(func() {
		if err := h.watcher.run(); err != nil {
			t.Errorf("second host: %v", err)
		}
	})
	h.Kind = kind
	if kind == "" {
		h.Kind = h.chooseLink()
	}
	h.link()
	h.keys()
	h.startSSHD()
	return h
}

// teardownScript kills every process left in the namespace (kernels started
// over ssh are nohup'd: they outlive sshd), then removes the namespace and
// the link. TAP devices go when this process's files close; deleting them
// too covers a death that the watcher sees before the kernel has closed
// those files.
func (h *Host) teardownScript() string {
	ns, link, peer := shellQuote(h.NS), shellQuote(h.HostLink), shellQuote(h.Link)
	return `pids=$(ip netns pids ` + ns + ` 2>/dev/null)
[ -n "$pids" ] && kill -9 $pids 2>/dev/null
for i in 1 2 3 4 5 6 7 8 9 10; do [ -z "$(ip netns pids ` + ns + ` 2>/dev/null)" ] && break; sleep 0.1; done
ip netns del ` + ns + ` 2>/dev/null
ip link del ` + link + ` 2>/dev/null
ip link del ` + peer + ` 2>/dev/null
! ip link show ` + link + ` >/dev/null 2>&1
! ip netns list | grep -qw ` + ns + `
`
}

func (h *Host) run(args ...string) {
	h.t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		h.t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
}

// keys makes the host key and root's login key, and the known_hosts line.
func (h *Host) keys() {
	for _, name := range []string{"host_key", "client_key"} {
		h.run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", h.Name, "-f", filepath.Join(h.Dir, name))
	}
	pub, err := os.ReadFile(filepath.Join(h.Dir, "host_key.pub"))
	if err != nil {
		h.t.Fatal(err)
	}
	fields := strings.Fields(string(pub))
	h.KnownHosts = h.IP + " " + fields[0] + " " + fields[1] + "\n"
	if err := os.WriteFile(filepath.Join(h.Dir, "known_hosts"), []byte(h.KnownHosts), 0o600); err != nil {
		h.t.Fatal(err)
	}
	h.ClientKey = filepath.Join(h.Dir, "client_key")
	client, err := os.ReadFile(h.ClientKey + ".pub")
	if err == nil {
		err = os.WriteFile(filepath.Join(h.Dir, "authorized_keys"), client, 0o600)
	}
	if err != nil {
		h.t.Fatal(err)
	}
}

// startSSHD runs sshd in the namespace under a hostname of its own, and
// waits until it accepts connections.
func (h *Host) startSSHD() {
	cfg := filepath.Join(h.Dir, "sshd_config")
	h.TempDir = filepath.Join(h.Dir, "tmp")
	if err := os.Mkdir(h.TempDir, 0o700); err != nil {
		h.t.Fatal(err)
	}
	conf := strings.Join([]string{
		"ListenAddress " + h.IP + ":22",
		"HostKey " + filepath.Join(h.Dir, "host_key"),
		"PidFile " + filepath.Join(h.Dir, "sshd.pid"),
		"AuthorizedKeysFile " + filepath.Join(h.Dir, "authorized_keys"),
		"PermitRootLogin prohibit-password",
		"PubkeyAuthentication yes",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"UsePAM no",
		"StrictModes no",
		"LogLevel ERROR",
		"SetEnv TMPDIR=" + h.TempDir,
	}, "\n") + "\n"
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		h.t.Fatal(err)
	}
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil { // sshd's privilege-separation dir
		h.t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(h.Dir, "sshd.log"))
	if err != nil {
		h.t.Fatal(err)
	}
	defer log.Close()
	hide := filepath.Join(h.Dir, "hidden")
	h.Hidden = filepath.Join(hide, "project")
	if err := os.MkdirAll(h.Hidden, 0o700); err != nil {
		h.t.Fatal(err)
	}
	h.sshd = exec.Command("ip", "netns", "exec", h.NS, "unshare", "--uts", "--mount", "--",
		"sh", "-c", `hostname "$1" && mount -t tmpfs evh-hidden "$3" && mount -t tmpfs -o mode=1777 evh-tmp "$4" &&
exec /usr/sbin/sshd -D -e -f "$2"`,
		"sh", h.Name, cfg, hide, h.TempDir)
	h.sshd.Stdout, h.sshd.Stderr = log, log
	dieWithParent(h.sshd)
	if err := h.sshd.Start(); err != nil {
		h.t.Fatalf("starting sshd in %s: %v", h.NS, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- h.sshd.Wait() }()
	h.t.Cleanup(func() {
		_ = h.sshd.Process.Kill()
		<-exited
	})
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", net.JoinHostPort(h.IP, "22"), time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case err := <-exited:
			exited <- err
			out, _ := os.ReadFile(log.Name())
			h.t.Fatalf("sshd in %s exited (%v): %s", h.NS, err, out)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("sshd on %s:22 did not accept connections within 15 s: %v", h.IP, err)
		}
	}
}

// SSH runs command on the host as root, with this host's key, and returns
// its output.
func (h *Host) SSH(command string) (string, error) {
	out, err := exec.Command("ssh", "-i", h.ClientKey, "-o", "BatchMode=yes",
		"-o", "UserKnownHostsFile="+filepath.Join(h.Dir, "known_hosts"), "-o", "StrictHostKeyChecking=yes",
		"-o", "ConnectTimeout=5", "root@"+h.IP, command).CombinedOutput()
	return string(out), err
}

// Die kills every process of the host at once (sshd, kernels): the host
// died. It stays dead; its teardown still runs.
func (h *Host) Die(t testing.TB) {
	for _, pid := range h.Pids() {
		if out, err := exec.Command("kill", "-KILL", pid).CombinedOutput(); err != nil && !bytes.Contains(out, []byte("No such process")) {
			t.Errorf("kill %s: %v: %s", pid, err, bytes.TrimSpace(out))
		}
	}
}

// Pids lists the processes running in the host's namespace.
func (h *Host) Pids() []string {
	out, _ := exec.Command("ip", "netns", "pids", h.NS).Output()
	return strings.Fields(string(out))
}

func randomHex(t testing.TB, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
