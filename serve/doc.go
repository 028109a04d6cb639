// Package serve is evalhost's agent protocol as a library: NDJSON requests
// in, replies out, as docs/serve-protocol.md defines them. `evalhost serve`
// is this package on stdin and stdout; a Go program does the same with
//
//	srv := serve.New(serve.Config{Sessions: sessions.Config{Home: home}})
//	err := srv.Serve(ctx, r, w)
//
// # Contract
//
// [Server.Serve] writes hello, then reads one request per line and answers
// it. It builds its own session registry from Config.Sessions and its own
// tool bridge (a [bridge.Relay]: a cell's tool call becomes a tool_call line,
// the client's tool_result answers it), and closes both before it returns:
// no interpreter outlives it.
//
// Ops are split as golang.org/x/tools' jsonrpc2_v2 splits a Preempter from a
// Handler. cancel, close, sessions, ping, tool_result, job and jobs never
// block: they are answered as their line is read, however busy the
// sessions are; wait and stop are checked as their line is read and
// answered from a goroutine when their job ends. eval and reset take their
// place in their session's queue in the order their lines arrived and run
// on the goroutine that read them, which first starts another to read on
// (so a warm eval reaches its interpreter without a hand-off between
// goroutines); an eval's replies are
// its frames (tagged with its id and cell), a cell_end per cell and exactly
// one end, or a request_error instead of the end when it was refused or
// could not run. Lines of concurrent requests interleave, each line whole.
//
// A cell with onTimeout "detach" runs on as a job past its timeout (package
// sessions). Each job's end is one job_end line, written after the end of
// the request it detached from and before the reply to a wait or stop for
// it.
//
// Serve stops reading at a shutdown request, the end of the input or
// [Server.Shutdown]; the requests in flight then finish (or, with
// Config.CancelOnStop, are cancelled), tool calls still waiting fail at
// once (no tool_result can come any more), running jobs are stopped (or,
// with Config.DrainJobs, waited for), each job_end saying so, and Serve
// returns nil or the read error that ended the input. The end of Serve's context ends the work at
// once, also while draining: requests are cancelled and interpreters killed
// without an interrupt's grace; each accepted eval still gets its end, and
// Serve returns the context's cause. A client that stopped reading is not
// waited for then: when w can bound its writes (SetWriteDeadline: an
// *os.File pipe, a net.Conn), a line it has not taken within 5 s is given
// up, and every line after it (stall.go).
//
// Config.OutputGone closing (the reader of w left: nothing more can be
// answered), before the end of the input or after it, stops Serve as the
// end of the input does when every request was answered (an answer being
// written then is waited for), and Serve returns nil; with a request
// unanswered it ends the work at once, as the end of its context does,
// and returns [ErrOutputGone], as it does when an answer's write failed.
// Lines that answer no request (hello, progress, tool_call, job_end) do
// not count, nor do running jobs. A request the client had sent before
// its reader left counts whether Serve had read it or not, when its
// input can tell (a ReadSent method, as internal/sentinput's Input has:
// it is then read to what was there, an eval or reset among it not run);
// else the verdict goes by what Serve had read.
//
// It is wrong to call Serve twice on one Server ([ErrServed]). When Serve
// returns before its reader ended, one goroutine may stay blocked in that
// reader's Read until it returns; it reads nothing more.
//
// # Output shared with run --json
//
// [Encoder] writes the tagged lines (frames with "cell" and the request id,
// cell_end, end) for `serve` and `evalhost run --json` alike. A frame's own
// id (the interpreter's run id, which carries a random nonce) never reaches
// either output.
package serve
