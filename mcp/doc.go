// Package mcp serves evalhost's cells and notebooks to any Model Context
// Protocol client, on the official Go SDK (github.com/modelcontextprotocol/go-sdk).
//
// Contract:
//   - [New] needs a sessions.Registry (owned and closed by the caller) and
//     should get the streamsink.Store the registry's sink spills into: the
//     artifact://{id} resource template reads from it, and images are saved
//     to it. A Config without a Registry is an error.
//   - Tools: eval, sessions, reset, close, job, wait, stop, jobs, and notebook_view, notebook_edit,
//     notebook_insert, notebook_delete, notebook_apply, notebook_run. Bad
//     arguments are a tool result with isError and a message that says what
//     was wrong; the server keeps serving. Only a tool name the server does
//     not have is a protocol error (the SDK's).
//   - eval runs the cells through Registry.Eval as one request. Its result is
//     text content per cell (a status line, the sink's bounded tail with its
//     notices and artifact:// pointer, then the cell's warning frames, at
//     most 8), image content for PNG/JPEG displays
//     within the [ImageBudget] (downscaled or re-encoded, said in the text)
//     each followed by a resource link to the full image, a resource link
//     alone, and a line saying so, for an SVG or PDF display without a PNG
//     or JPEG beside it (a figure under --ipython's %config
//     InlineBackend.figure_format 'svg' or 'pdf'), a warning line for an
//     image that is not base64, and
//     structuredContent ([EvalOutput]). isError is true when a cell was not
//     ok. No base64 ever goes into text content.
//   - A cell with onTimeout "detach" still running at its timeout ends the
//     eval with status detached (not isError) and a job id; job reads the
//     job's status and output by offset, wait waits for it (at most 600 s
//     a call), stop stops it (package sessions has the contract). No
//     notification announces a job's end: MCP's logging notifications are
//     deprecated, and a model learns it from wait or job.
//   - A call that carries a progress token gets a notifications/progress per
//     running cell every Config.Progress (elapsed, last output line), and one
//     as each cell starts and ends; a wait, stop, reset or notebook_run call
//     one every Config.Progress ("wait: waiting for job-1 for 12.0s"), so
//     that a client whose request timeout progress resets keeps it. A
//     tools/call whose progress token is an integer past 2^53-1 in size
//     is refused (invalid params): the SDK reads it as a float64 and would
//     echo it rounded (progresstoken.go). MCP
//     cancellation of the call cancels the
//     request: the running cell is interrupted, then killed after the grace
//     window, as for every other client; state is kept unless it was killed.
//   - close closes the session as sessions.Registry.CloseSessionIn does
//     (in its optional cwd, else every cwd's, as reset): a
//     cell running in it is interrupted at once (killed after the grace
//     window if it holds out) and its eval ends killed, its state gone.
//   - notebook_run calls Config.RunNotebook; without one the tool answers
//     that notebook execution is not available. A run whose save failed
//     (NotebookRunResult.NotSaved) still lists every cell's status, says
//     where the outputs went, if anywhere, and why, and is an error.
//   - [Server.RunStdio] answers a request longer than its line limit with a
//     JSON-RPC error for the request's id, read wherever it is in the line
//     (the TypeScript SDK's client writes it after the params), and reads
//     on (the SDK's reader would end the connection); a long line with no
//     top-level string or number id, or no method, is dropped and logged. A line that is not one JSON-RPC message is
//     answered and dropped: not JSON (two values, cut short) with a parse
//     error, id null; JSON that is no valid request (a batch, an id that
//     is an object) with an invalid-request error, id null unless one
//     could be read; a line nesting arrays and objects more than 1000 deep
//     (the SDK's bound), however deep, with an invalid-request error under
//     the id read from it, as an over-long line (an id-null error ends a
//     Go SDK client's connection). A notification among them (no id, or
//     id null on a notifications/… method) is dropped unanswered, for the
//     same reason. The connection, and every session, lives on. A request
//     is taken only with an id the SDK answers as sent: a string, or an
//     integer of at most 2^53-1 in size however spelled (1, 1.0, 1e0 are
//     id 1, and answered as 1). Any other request is answered with an
//     invalid-request error for its id as sent, saying what to send
//     instead: a fractional id (the SDK would answer 1.5 as 1), a larger
//     one, id null on a method that is no notifications/… (the SDK takes
//     it for a notification), and the id of a request not answered yet
//     (the SDK drops it unanswered). So the end of stdin, which ends the
//     connection once every request taken was answered (a cancelled one
//     included) and each answer written out, or at once when RunStdio's
//     context ends, waits for nothing that never comes. Nor does it wait
//     when nobody can read the answers: the output's reader leaving (a
//     pipe or socket, internal/readergone says what is watched where, or a
//     write's EPIPE), before the end of input or after it, ends the
//     connection at once, and with it the calls, once the answers being
//     written then have been (the client may have read them whole before
//     it left); a request read after is dropped, never run. What the
//     client had sent by then is read first, when the input can tell (a
//     ReadSent method, as internal/sentinput's Input has): a request in it
//     is not run, and counts as unanswered, as one read before would.
//     RunStdio then returns ErrOutputGone, so the program can say so, when
//     a request was left unanswered or an answer's write failed, and nil
//     when none was:
//     a client that read every answer and closed both ends, in either
//     order, or its output alone, ended it as the end of input does.
//   - On stdio a tools/call in the plain shape (name, arguments, and no
//     _meta or per-request protocol fields the SDK already took on the
//     connection; no progress token) on an initialized session is answered
//     by a fast path (fastcall.go): hand-written JSON-RPC handling of the
//     kind the SDK does, there for speed alone, which runs the handler the
//     SDK would and writes the response the SDK would; a cancel of such a
//     call interrupts it. Everything else (initialize, lists, resources,
//     notifications, progress, HTTP) goes to the SDK.
//   - Artifact resources are read in parts of at most [MaxResourceBytes] of
//     JSON; a part that does not reach the end names the next part's URI.
//   - [Server.HTTPHandler] serves the streamable-HTTP transport behind a
//     bearer token compared in constant time; a request without it, or with
//     another, is refused with 401 before the SDK sees it. A POSTed
//     request nesting deeper than the SDK reads, or longer than
//     [DefaultMaxLine], gets a JSON-RPC error under its id (HTTP 200),
//     wherever the id is in the body, as on stdio: the SDK's plain 400 or
//     413 makes the Go SDK's client close its session. Such a notification is dropped (HTTP 202, logged), as
//     on stdio. A DELETE ending an MCP session cancels its calls in flight
//     first, as an MCP cancel of each would (the SDK alone closed the
//     session only once they returned, so their cells ran on for a client
//     that was gone). [ListenLoopback] refuses any address that is not a
//     loopback one.
//   - An HTTP MCP session whose client had no request open with its
//     Mcp-Session-Id (no POST, which a call's client holds until its
//     answer, and no GET stream, on which a live client listens) for
//     Config.HTTPSessionTimeout ends as at a DELETE (httpidle.go): the
//     calls it left running, whose client no longer awaits their answer,
//     are cancelled, the SDK closes it, and a request with its id gets
//     404, the spec's answer that tells a client to initialize anew. Its
//     interpreter sessions are left as a DELETE leaves them: they are every
//     client's, and close after the registry's idle timeout. So a client
//     that vanished without a DELETE leaves nothing running for ever.
//
// A Server holds no goroutines of its own between calls: each call's
// progress ticker ends before the call returns; an idle HTTP session is
// ended from its timer's goroutine, which returns once it has ended. RunStdio returns once its
// goroutines (readers, fast calls) are done, but for a read of r blocked
// on input, which only r's end or error ends (as with the SDK's own
// stdio transport).
package mcp
