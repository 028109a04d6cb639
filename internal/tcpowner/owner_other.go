//go:build !linux

package tcpowner

import "net/netip"

// Peer returns ErrUnsupported: only Linux tells.
func Peer(local, remote netip.AddrPort) (Socket, error) { return Socket{}, ErrUnsupported }

// Listening returns ErrUnsupported: only Linux tells.
func Listening(pid int) ([]Socket, error) { return nil, ErrUnsupported }
