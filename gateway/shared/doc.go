// Package shared coordinates the local Jupyter kernel gateways that every
// evalhost process on a machine shares: one per interpreter, started by the
// first process that needs it and outliving it.
//
// Each interpreter's gateway lives in <home>/python-gateway/<key>/, where
// key is a hash of the interpreter's path. There gateway.lock serialises
// the processes that start or stop that gateway (exclusive create, a
// heartbeat refreshed while held, taken over when its pid is dead or its
// heartbeat is stale), gateway.json (mode 0600, written atomically) records
// its url, pid, start time, interpreter, random auth token and kernel
// directory, gateway.log holds its output, and run/ may hold its kernels'
// sockets (see below). Gateways of different interpreters run side
// by side and never touch each other.
//
// [Acquire] reuses the recorded gateway when its pid is still
// kernel_gateway holding the recorded port and its health check passes,
// and otherwise starts `<python> -m kernel_gateway` on 127.0.0.1 in its own
// session. It never ends a gateway that other processes may be using
// because this caller cannot use it:
//
//   - a gateway that rejects the recorded token is left running and
//     Acquire returns an *InUseError (matching ErrInUse and the client's
//     ErrUnauthorized);
//   - a slow health check is retried with longer limits (3, 6, 12 s), and
//     only a gateway that fails all of them is replaced, after its
//     replacement has passed its own health check;
//   - a start that fails (an interpreter without kernel_gateway) leaves
//     every running gateway alone.
//
// The token, and every cell after it, goes only to a process of this
// user's. On Linux (listener_linux.go, through package internal/tcpowner):
// a new gateway binds a port of the kernel's choosing itself (port 0; a
// port chosen here and passed in argv, which ps shows, could be taken by
// another user in the seconds the gateway takes to start), and its port is
// read from the sockets its pid holds; a recorded gateway is trusted only
// while its pid holds a listener of this user's on the recorded port, and
// is otherwise replaced, its port never contacted; and every connection,
// reconnects and deletes included, is refused before anything is written
// when the socket at its other end is another user's
// ([*ForeignListenerError], matching [ErrForeignListener]), since a
// gateway that ends frees its port for anyone. Elsewhere
// (listener_other.go) nothing portable tells whose a socket is: the port
// is chosen free here and passed in argv, and whatever listens there is
// trusted.
//
// The channels between a gateway and its kernels, which carry every cell's
// code and output and the kernel's environment, are this user's alone too
// (kerneldir.go). Over TCP on 127.0.0.1, Jupyter's default, any local user
// could connect to a kernel's ports, or take one that jupyter_client chose
// by binding and closing it, at a start or a restart. The gateway is
// started with --KernelManager.transport=ipc and JUPYTER_RUNTIME_DIR set to
// its kernel directory, where each kernel gets its connection file and its
// five unix sockets (kernel-<id>-ipc-<n>; a restart binds the same paths),
// a directory of mode 0700 owned by this user that no one else can enter
// or plant a socket in. It is <dir>/run while the sockets' paths fit in
// sun_path (107 bytes on Linux, 103 elsewhere), and otherwise a new
// directory mkdir makes (os.MkdirTemp, so nothing planted is used) in
// $TMPDIR or /tmp, whichever package trustdir finds no one else could
// replace it in and is short enough; gateway.json records it (kernelDir),
// and Stop, or replacing the gateway, removes a temporary one. A recorded
// gateway whose record names no kernel directory (an older evalhost's,
// kernels on TCP), or whose directory is gone or open to others, is not
// used: Acquire replaces it and, once the replacement is healthy, ends it
// with its kernels; Status reports it unhealthy. What stays on TCP is
// ipykernel's own pipe for the output of forked subprocesses, one port of
// 127.0.0.1 per kernel: it only receives, and drops messages without the
// kernel's random 16-byte prefix, but a forked subprocess that outlives its
// kernel sends its output, prefix included, to whoever listens on that
// port next.
//
// Concurrent Acquire calls in one process for the same home and
// interpreter share one acquisition. [Stop] ends every recorded gateway
// (a gateway.json directly in python-gateway/, from an older evalhost,
// too) and returns the pids of those that ran; [StopFor] ends one interpreter's; [Status] reports them all.
// [Local.StartKernel] adds the one recovery from the gateway's own
// file-descriptor exhaustion: restart that interpreter's gateway and try
// once more (this process running out restarts nothing).
//
// Calling Acquire with an empty home or python is an error.
package shared
