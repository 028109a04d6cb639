//go:build !linux

package shared

import (
	"context"
	"fmt"
	"net"
	"slices"
)

// Elsewhere (macOS) nothing portable tells whose a socket is, so the
// gateway is started on a port chosen here and the listener there is
// trusted: another local user who binds that port first, in the seconds the
// gateway takes to start, or after it ended, gets the token and the cells.
// docs/gateway.md says so.

// gatewayPort chooses a free port for a new gateway.
func gatewayPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port for the gateway: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// listeningPort is the port the gateway was told to bind.
func listeningPort(_ context.Context, _, asked int) (int, error) { return asked, nil }

// holdsPort reports whether the gateway's argv names port.
func holdsPort(_ int, port string, args []string) bool {
	return slices.Contains(args, "--KernelGatewayApp.port="+port)
}

// verifyConn checks nothing: see above.
func verifyConn(net.Conn) error { return nil }
