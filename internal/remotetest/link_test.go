package remotetest

import (
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/leakcheck"
)

// TestLinkDelay proves each kind of link really is d slower with Delay(d):
// every TCP handshake with the host's sshd (a connect returns when the
// SYN-ACK is back, one round trip over the link) takes at least d, a
// stream across it arrives whole, and Delay(0) takes the delay away. The
// veth case skips where the kernel has no netem.
func TestLinkDelay(t *testing.T) {
	const d = 50 * time.Millisecond
	for _, kind := range []LinkKind{LinkVeth, LinkTAP} {
		t.Run(string(kind), func(t *testing.T) {
			t.Cleanup(leakcheck.Watchdog(t, 2*time.Minute))
			leakcheck.Check(t, leakcheck.Options{FDs: true, IgnoreProcess: Owns})
			h := newHost(t, kind)
			if kind == LinkVeth && !hasNetem(h.NS) {
				t.Skip("this kernel has no netem qdisc (CONFIG_NET_SCH_NETEM is not set), which a veth link's Delay needs")
			}
			plain := handshakes(t, h, 10)
			h.Delay(t, d)
			delayed := handshakes(t, h, 10)
			// Many frames each way, held and in order: ssh's stream
			// would stall or garble otherwise.
			out, err := h.SSH("seq 100000")
			h.Delay(t, 0)
			after := handshakes(t, h, 10)
			t.Logf("TCP handshake with the other host over the %s link: median %v plain, %v with %v of delay, %v with it removed",
				kind, median(plain), median(delayed), d, median(after))
			if delayed[0] < d {
				t.Errorf("with %v of delay a round trip took %v: the delay is not on the link", d, delayed[0])
			}
			if err != nil || out != seq(100000) {
				t.Errorf("seq 100000 over the delayed link: %v: got %d bytes, want %d", err, len(out), len(seq(100000)))
			}
			// The fastest of ten: a loaded machine slows some round
			// trips, not every one by d.
			if after[0] >= d {
				t.Errorf("with the delay removed the fastest of 10 round trips took %v", after[0])
			}
		})
	}
}

// TestLinkDown: taking this side of the link down cuts the host off, and
// up joins it again, with either kind of link.
func TestLinkDown(t *testing.T) {
	for _, kind := range []LinkKind{LinkVeth, LinkTAP} {
		t.Run(string(kind), func(t *testing.T) {
			t.Cleanup(leakcheck.Watchdog(t, 2*time.Minute))
			leakcheck.Check(t, leakcheck.Options{FDs: true, IgnoreProcess: Owns})
			h := newHost(t, kind)
			h.SetLink(t, false)
			// Not a bare connect: where the default route leads to a
			// proxy that accepts any connection (a sandbox's egress),
			// connecting proves nothing; logging in does.
			start := time.Now()
			if out, err := h.SSH("hostname"); err == nil {
				t.Errorf("logged in to %s over the %s link, which is down: %q", h.IP, h.Kind, out)
			} else {
				t.Logf("with the link down ssh failed after %v: %v: %s", time.Since(start).Round(time.Millisecond), err, strings.TrimSpace(out))
			}
			h.SetLink(t, true)
			if out, err := h.SSH("hostname"); err != nil || strings.TrimSpace(out) != h.Name {
				t.Errorf("with the link up again: hostname %q, %v; want %s", out, err, h.Name)
			}
		})
	}
}

// handshakes times n TCP connects to the host's sshd, sorted.
func handshakes(t *testing.T, h *Host, n int) []time.Duration {
	t.Helper()
	var ds []time.Duration
	for range n {
		start := time.Now()
		c, err := net.DialTimeout("tcp", net.JoinHostPort(h.IP, "22"), 10*time.Second)
		took := time.Since(start)
		if err != nil {
			t.Fatalf("connecting to the other host's sshd: %v", err)
		}
		c.Close()
		ds = append(ds, took)
	}
	slices.Sort(ds)
	return ds
}

func median(sorted []time.Duration) time.Duration { return sorted[len(sorted)/2] }

func seq(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(strconv.Itoa(i))
		b.WriteByte('\n')
	}
	return b.String()
}
