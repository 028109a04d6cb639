// Package bridge is the tool bridge: an authenticated HTTP server on loopback
// through which Python code running in a cell calls the host's tools.
//
// # Contract
//
// [New] makes a [Server] around a [Tools]; nothing listens until the first
// [Server.Env], which starts the server on 127.0.0.1 with an ephemeral port
// and returns the variables every interpreter gets:
//
//	PI_TOOL_BRIDGE_URL    base URL, e.g. "http://127.0.0.1:41234" (no trailing slash)
//	PI_TOOL_BRIDGE_TOKEN  64 hex digits: 256 random bits, fresh per Server
//
// The session registry adds PI_TOOL_BRIDGE_SESSION (the session id), and the
// runner sets EVALHOST_RUN to the run id of the executing cell before each
// cell (frames.Request.Run; unset when the request has none).
//
// A host with no tools at all need not start a Server: it sets
// PI_TOOL_BRIDGE_NONE=1 (EnvNoTools) instead, and a tool call in a cell
// fails at once saying that no tools are configured.
//
// A call is accepted only from a run that is active in that session now: the
// registry calls [Server.RunHook] (or [Server.TrackRun], which also names the
// run's request and cell for the Tools) with active=true just before a cell
// executes and false after. When a run ends, the calls it still has in flight are
// abandoned: their context is cancelled and the client, if still connected, is
// answered 409 "cell ended before tool ... returned".
//
// # Wire
//
//	POST {PI_TOOL_BRIDGE_URL}/v1/tool
//	Authorization: Bearer {PI_TOOL_BRIDGE_TOKEN}
//	Content-Type: application/json
//
//	{"session":S,"run":R,"name":TOOL,"args":{…}}
//
// session, run and name are non-empty strings (name at most 256 bytes); args
// is a JSON object and may be omitted or null (meaning {}). Unknown fields are
// ignored. Every reply, success or not, is a JSON object with Content-Type
// application/json:
//
//	200 {"ok":true,"value":V}       the tool returned V (any JSON value)
//	200 {"ok":false,"error":MSG}    the tool failed; MSG is its error's text
//	400 {"ok":false,"error":MSG}    body is not JSON, not an object, nests deeper than 512, or a field is missing or mistyped
//	401 missing Authorization (carries WWW-Authenticate: Bearer)
//	403 wrong token, or a token in the query string (send it in the header)
//	404 any path other than /v1/tool
//	405 any method other than POST (carries Allow: POST)
//	409 the run is not executing in that session now (stale run id, another
//	    session's run, or the cell ended while the call was in flight)
//	413 body larger than Options.MaxBody
//	503 the bridge is shutting down
//
// Checks run in that order: path, query, token, method, body, run. The token is
// compared in constant time and never appears in a reply, an error or a log:
// it is scrubbed from tool errors and values too. Calls run concurrently; each
// gets a context that ends when its run ends, its client disconnects or the
// Server closes. Slow clients are cut off by ReadHeaderTimeout and ReadTimeout;
// once a request's body is read (net/http then lifts the read deadline) a tool
// may take as long as the cell's own timeout allows. Any local user can
// connect to the loopback port, so a 401, 403 or 404 answer closes its
// connection (no keep-alive for a client without the token), and at most
// Options.MaxConns connections are open at once (the rest wait in the
// kernel's backlog): a flood costs the bridge its callers' patience, not the
// process its file descriptors.
//
// Kernels behind a Jupyter gateway may run on other machines, which cannot
// reach this loopback server: package gateway carries their calls over the
// kernel's own channel (Jupyter comm messages) and posts them here itself,
// so the same wire and the same run rule apply.
//
// # Python helper
//
// The helper lives in the runner's prelude (runner/prelude.py), and the tests
// here run that very file against the real server: tool.NAME(**args) and
// tool("NAME", **args) return the value, raise ToolError with the host's
// message on ok:false or any non-200 reply, and raise ToolError("tool bridge
// is unavailable ...") when the variables are missing. It keeps one
// keep-alive connection per thread, so it is safe from threads; from asyncio
// code a call blocks the loop, so use await tool.acall("NAME", ...) or
// asyncio.to_thread.
//
// # Relay
//
// [Relay] backs `serve`: each call is handed to a send function under a
// fresh call id ("c1", "c2", …) for the client (a tool_call line naming the
// call's request and cell, which the registry gave [Server.TrackRun]), and
// waits until [Relay.Resolve] delivers the client's tool_result or the
// call's context ends (then an abandon callback hears of it and a late
// Resolve returns [ErrNotPending]). [Relay.Close] fails the waiting calls and
// every later one with its error, for a client that will answer nothing
// more. The Server holds the runs and the Relay the calls waiting: neither
// has a copy for its user to keep in step.
//
// # Command tools
//
// [CommandTools] backs `evalhost run --tool NAME=COMMAND` ([ParseToolFlag]):
// COMMAND runs under `sh -c` with the args JSON on stdin; its stdout is the
// value (JSON if it parses, otherwise the text as a JSON string, null when
// empty); a non-zero exit is an error carrying the tail of its stderr (an
// exit status of 128+N reads as killed by signal N, as sh reports one).
// COMMAND runs under a reaper (internal/reaper, through a small sh wrapper
// that outlives it), so nothing it starts outlives evalhost, SIGKILL
// included: what it leaves running is killed when the call's context ends,
// when it failed, or when it held COMMAND's stdout or stderr open past a
// 2 s wait; what a successful COMMAND leaves running without its output
// runs on until it ends or the tools are closed ([Server.Close] closes
// them). That costs two process starts per call (the reaper and the
// wrapper): about 4 ms more per call on a loaded 2-core machine
// (BenchmarkCommandTool).
package bridge
