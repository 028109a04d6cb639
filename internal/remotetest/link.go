package remotetest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// LinkKind is what joins a Host to this one, and so what Delay delays.
type LinkKind string

const (
	// LinkVeth is a veth pair; Delay is netem's, on this side of it.
	LinkVeth LinkKind = "veth+netem"
	// LinkTAP is a TAP device on each side, with a forwarder in this test
	// process copying Ethernet frames between them; Delay is the
	// forwarder's. It is the link where the kernel has no netem
	// (CONFIG_NET_SCH_NETEM unset, as in Firecracker's guest kernels).
	LinkTAP LinkKind = "tap+forwarder"
)

// chooseLink is LinkVeth where the kernel has netem, else LinkTAP where it
// has TAP devices, else LinkVeth, whose Delay then skips.
func (h *Host) chooseLink() LinkKind {
	if hasNetem(h.NS) {
		return LinkVeth
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		return LinkVeth
	}
	return LinkTAP
}

// hasNetem tries netem on the loopback of namespace ns, which nothing uses
// yet.
func hasNetem(ns string) bool {
	if exec.Command("tc", "-n", ns, "qdisc", "add", "dev", "lo", "root", "netem", "delay", "0ms").Run() != nil {
		return false
	}
	_ = exec.Command("tc", "-n", ns, "qdisc", "del", "dev", "lo", "root").Run()
	return true
}

// link joins the host to this one with a link of h.Kind, addressed as a /30.
func (h *Host) link() {
	switch h.Kind {
	case LinkVeth:
		h.run("ip", "link", "add", h.HostLink, "type", "veth", "peer", "name", h.Link, "netns", h.NS)
	case LinkTAP:
		h.tapLink()
	default:
		h.t.Fatalf("unknown link kind %q", h.Kind)
	}
	h.run("ip", "addr", "add", h.HostIP+"/30", "dev", h.HostLink)
	h.run("ip", "link", "set", h.HostLink, "up")
	h.run("ip", "-n", h.NS, "addr", "add", h.IP+"/30", "dev", h.Link)
	h.run("ip", "-n", h.NS, "link", "set", h.Link, "up")
	h.run("ip", "-n", h.NS, "link", "set", "lo", "up")
}

// tapLink makes the two TAP devices, moves one into the namespace and
// starts the wire between them. The wire is stopped (and with its files
// the devices go) by a cleanup that runs before the watcher's teardown;
// should this process die, the kernel closes the files and the devices go
// all the same.
func (h *Host) tapLink() {
	here, err := openTAP(h.HostLink)
	if err != nil {
		h.t.Fatalf("the link to the second host: %v", err)
	}
	there, err := openTAP(h.Link)
	if err != nil {
		here.Close()
		h.t.Fatalf("the link to the second host: %v", err)
	}
	h.wire = newWire(here, there)
	h.t.Cleanup(func() {
		if err := h.wire.Close(); err != nil {
			h.t.Errorf("the link to the second host: %v", err)
		}
	})
	h.run("ip", "link", "set", h.Link, "netns", h.NS)
}

// SetLink takes this side of the link up or down. It may be called from
// any goroutine; a failure is reported on t without stopping it.
func (h *Host) SetLink(t testing.TB, up bool) {
	state := "down"
	if up {
		state = "up"
	}
	if out, err := exec.Command("ip", "link", "set", h.HostLink, state).CombinedOutput(); err != nil {
		t.Errorf("ip link set %s %s: %v: %s", h.HostLink, state, err, bytes.TrimSpace(out))
	}
}

// Delay adds d of delay to every frame leaving this host for the other, so
// a round trip takes d longer; 0 removes it. On LinkVeth it is netem on
// this side of the link, on LinkTAP the forwarder's hold of that
// direction. It skips t on a veth link where the kernel has no netem
// (chosen only for want of /dev/net/tun) or no tc.
func (h *Host) Delay(t testing.TB, d time.Duration) {
	t.Helper()
	if h.Kind == LinkTAP {
		h.wire.setDelay(0, d) // end 0 is this side's device: what this host sends
		return
	}
	args := []string{"qdisc", "replace", "dev", h.HostLink, "root", "netem", "delay", fmt.Sprintf("%dus", d.Microseconds())}
	if d == 0 {
		args = []string{"qdisc", "del", "dev", h.HostLink, "root"}
	}
	out, err := exec.Command("tc", args...).CombinedOutput()
	switch {
	case errors.Is(err, exec.ErrNotFound) || err != nil && bytes.Contains(out, []byte("qdisc kind is unknown")):
		t.Skipf("this kernel has neither netem (CONFIG_NET_SCH_NETEM) nor /dev/net/tun for a link with delay: tc %s: %s", strings.Join(args, " "), bytes.TrimSpace(out))
	case err != nil:
		t.Fatalf("tc %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
}
