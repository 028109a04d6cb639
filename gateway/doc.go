// Package gateway is evalhost's Jupyter kernel-gateway backend: a client of
// the gateway's REST API and kernel websocket, the translation of Jupyter
// messages (protocol v5.3) into [frames.Frame] values, and the coordinator of
// the one local gateway process that every evalhost process on a machine
// shares.
//
// # Kernels
//
// [Client.StartKernel] creates a kernel (retrying once on a 5xx), connects
// its channels websocket, applies the working directory, environment and
// sys.path, runs the prelude and the extension modules it is given
// (KernelOptions.Modules, as runner.FindModules judged them: each read here
// from the file judged and its code sent, so a kernel on another machine
// runs the caller's modules; one changed since it was judged, or one that
// raises, becomes a warning frame in [Kernel.Warnings], never a start
// failure). A [Kernel] keeps
// the contract of the runner backend (package host):
//
//   - Execute emits started, stdout, stderr, display, update_display,
//     clear_output, result, error and input frames for the cell, serially
//     from the caller's goroutine and all before it returns the done frame.
//     The cell is done when both its execute_reply and its status idle
//     arrived.
//   - input() never waits for a person: the input_request is answered with
//     an empty input_reply, an input frame is emitted, and the cell fails
//     with StdinNotImplementedError and the runner's message.
//   - On ctx done it interrupts once, when the kernel has begun the cell's
//     code (execute_input) and not after its execute_reply (a late SIGINT
//     would land in the next cell): a control-channel interrupt_request, and the
//     REST interrupt, if the reply has not come by then, only when the kernel
//     answered that it could not signal
//     itself, or gave no answer on a control channel that never answered
//     (the start probes it) or of a kernel without an interrupt_request
//     handler (ipykernel 5, which answers kernel_info there). A second SIGINT would land in the cell's
//     handling of the first (its except block, IPython formatting the
//     traceback) and cut it short, so none is sent. A SIGINT that arrives
//     just before a blocking call waits for it to return; instead of a
//     second one the start snippet has the kernel wake its main thread with
//     a real-time signal (without SA_RESTART, so a read or a wait ends too)
//     until that signal's handler ran, which CPython runs after the
//     SIGINT's, at most 10 times, and never once a cell replaced the
//     handler. The handler wakes an awaiting cell's event loop, where
//     ipykernel's cancel of the cell (a CancelledError) waits. It waits
//     the grace window for the cell to end (done with Cancelled), and
//     otherwise deletes the kernel and returns an error wrapping
//     [backend.ErrKilled]. [Kernel.Interrupt] has the running cell's
//     Execute take the same steps, REST rule included, without the grace
//     window or the done frame's Cancelled; a cancel after it sends no
//     further interrupt.
//   - A request the kernel ends without its execute_reply (ipykernel sends
//     none when a KeyboardInterrupt lands outside the cell's code, in an
//     input transformer) is noticed when its idle status comes first: a
//     kernel_info_request on shell, answered in order after the cell,
//     says no reply is coming. It goes out at once after an interrupt, and
//     otherwise only when the reply is still missing 1 s after the idle:
//     idle overtakes the reply routinely (15% of warm round trips here). The cell then ends with a KeyboardInterrupt
//     error frame when it was interrupted, else with a warning.
//   - A kernel that dies (gateway status dead or restarting) gives a
//     [*backend.DeathError] whose Reason says what the gateway reported, or
//     why the connection was given up (the exit code is never known); the
//     kernel is then dead for good and the caller replaces it. A websocket that drops is first reopened under the same
//     session (the gateway replays what it buffered) while the gateway still
//     has the kernel, and the running cell gets a [*ReconnectedError]
//     warning; a gone kernel, or no reconnect within 10 s, is the death.
//     The socket is pinged every 15 s, and a pong missing for 10 s counts
//     as a drop, so a gateway that stops answering is noticed too; not
//     while bytes of a message arrive, which a pong cannot overtake (a
//     large message over a slow link).
//   - What a cell flushed before its kernel died (print(..., flush=True),
//     sys.stdout.flush(); then a SIGKILL, an OOM kill, os._exit) arrives,
//     in order, before the death. ipykernel's flush returns before the
//     output is on the socket, and a SIGKILL right after lost it (a fifth
//     of the time); the start snippet has the kernel's stdout and stderr
//     flush wait until it is in the socket's buffers (flushsync.go),
//     or, when it cannot, a warning in [Kernel.Warnings] says so. Output
//     not flushed (a print ipykernel would send on its 0.2 s timer, a
//     write to fd 1 by C code or a child) may still be lost to a SIGKILL.
//   - Memory stays bounded under any output: the start snippet makes the
//     kernel flush stdout and stderr every MiB (ipykernel would send a tight
//     print loop's whole output as one message at the end), the reader runs
//     at most a few messages ahead of the cell, and a message over 256 MiB
//     (a huge display) is read past and dropped with a warning frame
//     ([*MessageTooBigError]) instead of ending the connection. A message
//     is held once, twice while it is assembled (its size is not known
//     until it is read): its frame's display data and stream text are
//     slices of it, not copies.
//   - Jupyter's iopub channel is lossy: it drops messages when a kernel
//     writes faster than the gateway forwards them. The start snippet counts
//     the characters each cell writes to stdout and stderr, every
//     execute_request asks for the counts back as a user expression, and a
//     shortfall becomes a warning frame naming how much had not arrived.
//     A blank cell's does not: IPython runs nothing for it, not even the
//     hook that resets the counts, so they would be an earlier cell's.
//     After execute_reply, idle is awaited while messages keep coming; 3 s
//     in which no byte arrives send a kernel_info_request on shell as a
//     marker. The kernel publishes the marker's status on iopub after all
//     the cell published, and iopub keeps the kernel's order through the
//     gateway, so that status arriving first says the idle was dropped: the
//     cell ends with a warning. A message the kernel is still handing to the
//     gateway (a large display the reply overtook) arrives before it. The
//     marker's reply and statuses become no frame, of this cell or a later
//     one. When its status is lost too (10 s without a byte), a ping the
//     gateway answers with nothing before the pong ends the cell with a
//     warning instead of a hang. (A gateway busy encoding a large display
//     answers only when it sends it.)
//   - A script cell (Request.Script) shows no expression's value, as
//     `ipython FILE` runs one: its execute_request's metadata says so, and
//     the start snippet's pre_run_cell hook sets the shell's
//     ast_node_interactivity to "none" for that cell (post_run_cell puts
//     the earlier value back). Its figures are the kernel's inline
//     backend's, shown at plt.show() and at the cell's end alike.
//
// # Tool calls
//
// When the start environment names a tool bridge (PI_TOOL_BRIDGE_URL and
// PI_TOOL_BRIDGE_TOKEN), the kernel gets stand-ins instead and the
// prelude's tool helper sends each call as a comm message (target
// "evalhost.tool") on iopub; the Kernel posts it to the bridge as the cell
// running now (its Request.Run, the start environment's
// PI_TOOL_BRIDGE_SESSION) and answers on the control channel. A call while
// no cell runs is refused (409); calls in flight when the cell ends are
// abandoned, and Execute returns only after they are.
//
// Error tracebacks are passed on as ipykernel sends them, with ANSI colour
// codes; the output sink sanitises them.
//
// # Gateways
//
// An external gateway (PI_PYTHON_GATEWAY_URL, optional PI_PYTHON_GATEWAY_TOKEN,
// read by the caller) is used through [NewClient]; evalhost starts and stops
// nothing for it. [ParseURL] is the address's check, which NewClient makes
// and a caller may make up front (config does, naming the variable): an
// http:// or https:// URL with a host, no white space, no query (which no
// request would carry) and no fragment; only the text is read. It may equally be a Jupyter Enterprise Gateway, which puts
// kernels on a cluster: the REST and websocket API are the same, and
// Config.KernelEnv ([KernelEnvFrom]) carries the KERNEL_* values it reads,
// KERNEL_USERNAME above all. A 401 matches [ErrUnauthorized] (the token); a
// 403 matches [ErrForbidden], and to a kernel create it is a
// [*RefusedError] naming the user that was refused and what to set.
//
// Config.VerifyConn, when set, sees every connection the Client opens (REST
// calls and kernel websockets, reconnects included) before anything is
// written on it; its error fails the call, wrapped. Package gateway/shared
// uses it to send a local gateway's token only to a process of this user's.
//
// The shared local gateways (one per interpreter, started by the first
// evalhost process that needs one) are coordinated by package
// gateway/shared. The Client never passes the gateway's own environment on
// to a kernel: the create request carries an empty env, so kernel_gateway
// launches the kernel with PATH alone (and Jupyter's own variables), and
// the start snippet applies the caller's environment, unsetting PATH (and
// the LC_CTYPE Python then sets for itself) when the caller has none.
package gateway
