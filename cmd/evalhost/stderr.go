package main

import (
	"io"
	"os"

	"github.com/evalhost/evalhost/serve"
)

// logLineWait is how long a line that serve, mcp or the background process
// writes to stderr may wait for room when stderr is a stream socket: the
// time after which serve takes a client that read nothing to be stalled
// (serve.StalledWrite). A client that never reads stderr then costs one
// such wait, not the server's end: once a line waited it in vain, the
// next are written only while the socket has room, until one goes.
const logLineWait = serve.StalledWrite

// socketStderr returns stderr, when it is a stream socket, written as
// stdout is (socketWriter: sends that never block, a full socket waited for
// in Go's poller), each line's wait bounded by logLineWait; else stderr.
// One socket as stdin and stderr (socat's EXEC with stderr, systemd's
// StandardError=socket, inetd) is made non-blocking by the reading of
// stdin, and os.Stderr's plain write of it, full, failed with EAGAIN and
// lost the line. restore closes the writer, which ends a wait under way.
func socketStderr(stderr io.Writer) (w io.Writer, restore func()) {
	f, ok := stderr.(*os.File)
	if !ok {
		return stderr, func() {}
	}
	sw := socketOutput(f)
	if sw == nil {
		return stderr, func() {}
	}
	sw.asLog(logLineWait)
	return sw, func() { _ = sw.Close() }
}

// longLived says whether args name a server that logs to stderr while it
// serves (serve, mcp, the background process), whose stderr may then be a
// client's socket.
func longLived(args []string) bool {
	switch args[0] {
	case "serve", "mcp":
		return true
	case "daemon":
		return len(args) > 1 && args[1] == "serve"
	}
	return false
}
