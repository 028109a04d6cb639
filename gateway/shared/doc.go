// Package shared coordinates the local Jupyter kernel gateways that every
// evalhost process on a machine shares: one per interpreter, started by the
// first process that needs it and outliving it.
//
// Each interpreter's gateway lives in <home>/python-gateway/<key>/, where
// key is a hash of the interpreter's path. There gateway.lock serialises
// the processes that start or stop that gateway (exclusive create, a
// heartbeat refreshed while held, taken over when its pid is dead or its
// heartbeat is stale), gateway.json (mode 0600, written atomically) records
// its url, pid, start time, interpreter and random auth token, and
// gateway.log holds its output. Gateways of different interpreters run side
// by side and never touch each other.
//
// [Acquire] reuses the recorded gateway when its pid is still
// kernel_gateway on the recorded port and its health check passes, and
// otherwise starts `<python> -m kernel_gateway` on 127.0.0.1 and a free
// port in its own session. It never ends a gateway that other processes
// may be using because this caller cannot use it:
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
// Concurrent Acquire calls in one process for the same home and
// interpreter share one acquisition. [Stop] ends every recorded gateway
// (a gateway.json directly in python-gateway/, from an older evalhost,
// too); [StopFor] ends one interpreter's; [Status] reports them all.
// [Local.StartKernel] adds the one recovery from the gateway's own
// file-descriptor exhaustion: restart that interpreter's gateway and try
// once more (this process running out restarts nothing).
//
// Calling Acquire with an empty home or python is an error.
package shared
