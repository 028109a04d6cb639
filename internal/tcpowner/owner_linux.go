package tcpowner

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"
)

// Peer is the socket at the other end of the loopback connection from
// local to remote, e.g. what a dialled connection connected to. A server
// using syncookies makes its end only when our ACK arrives, so a missing
// end is looked for again twice, briefly, before ErrNoPeer. It asks
// sock_diag for that one socket, and reads the tables where sock_diag does
// not tell.
func Peer(local, remote netip.AddrPort) (Socket, error) {
	local, remote = unmap(local), unmap(remote)
	diag := true
	for try := 0; ; try++ {
		s, found, err := lookPeer(local, remote, &diag)
		if err != nil || found {
			return s, err
		}
		if try == len(pauses) {
			break
		}
		pause(pauses[try])
	}
	if diag {
		// sock_diag finds a socket bound to a device only when asked on
		// that device, which a connection does not name; the tables show it.
		if s, found, err := peerInTables(local, remote); err != nil || found {
			return s, err
		}
	}
	return Socket{}, fmt.Errorf("%v to %v: %w", local, remote, ErrNoPeer)
}

// pauses are Peer's waits before looking again; pause is a variable so
// that a test can make the other end while Peer waits.
var (
	pauses = []time.Duration{time.Millisecond, 5 * time.Millisecond}
	pause  = time.Sleep
)

// lookPeer looks once, through sock_diag while *diag, else (and from the
// first time sock_diag does not tell, for the rest of the call) in the tables.
func lookPeer(local, remote netip.AddrPort, diag *bool) (Socket, bool, error) {
	if *diag {
		s, found, err := diagPeer(remote, local)
		if err == nil {
			return s, found, nil
		}
		*diag = false
	}
	return peerInTables(local, remote)
}

func peerInTables(local, remote netip.AddrPort) (Socket, bool, error) {
	all, err := readTables()
	if err != nil {
		return Socket{}, false, err
	}
	for _, s := range all {
		if s.Local == remote && s.Remote == local && s.State != TimeWait {
			return s, true, nil
		}
	}
	return Socket{}, false, nil
}

// Listening lists the listening sockets process pid holds. Another user's
// process is an error (its descriptors cannot be read) unless the caller
// is root.
func Listening(pid int) ([]Socket, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list the descriptors of pid %d: %w", pid, err)
	}
	held := map[uint64]bool{}
	for _, e := range ents {
		link, err := os.Readlink(dir + "/" + e.Name())
		if err != nil {
			continue // closed since the listing
		}
		if rest, ok := strings.CutPrefix(link, "socket:["); ok {
			if ino, err := strconv.ParseUint(strings.TrimSuffix(rest, "]"), 10, 64); err == nil {
				held[ino] = true
			}
		}
	}
	all, err := diagListeners()
	if err != nil {
		if all, err = readTables(); err != nil {
			return nil, err
		}
	}
	var out []Socket
	for _, s := range all {
		if s.State == Listen && held[s.Inode] {
			out = append(out, s)
		}
	}
	return out, nil
}

// tables are this network namespace's TCP tables; tcp6 is absent when
// the kernel has no IPv6. Read through /proc/self (what /proc/net links
// to), which a /proc mounted with subset=pid still has.
var tables = []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"}

// OverflowUID is the uid a user namespace shows for every uid it does not
// map (/proc/sys/kernel/overflowuid, 65534 when unreadable). A process
// whose own uid is it cannot tell its sockets from other users'.
func OverflowUID() int {
	b, err := os.ReadFile("/proc/sys/kernel/overflowuid")
	if err != nil {
		return 65534
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 65534
	}
	return n
}

// readTables reads the tables; a variable so that a test can tell whether
// a lookup read them.
var readTables = readProcTables

func readProcTables() ([]Socket, error) {
	var all []Socket
	for i, path := range tables {
		raw, err := os.ReadFile(path)
		if i > 0 && errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read the TCP table: %w", err)
		}
		s, err := Parse(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		all = append(all, s...)
	}
	return all, nil
}

func unmap(a netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(a.Addr().Unmap(), a.Port())
}
