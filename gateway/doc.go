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
// sys.path, runs the prelude and loads extension modules (a module that
// raises becomes a warning frame, never a start failure). A [Kernel] keeps
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
//   - On ctx done it interrupts (control-channel interrupt_request, then the
//     REST interrupt if the control channel gave no answer), waits the grace
//     window for the cell to end (done with Cancelled), and otherwise deletes
//     the kernel and returns an error wrapping [backend.ErrKilled].
//   - A kernel that dies (gateway status dead or restarting) or whose socket
//     drops mid-cell gives a [*backend.DeathError]; the kernel is then dead
//     for good and the caller replaces it.
//   - Memory stays bounded under any output: the start snippet makes the
//     kernel flush stdout and stderr every MiB (ipykernel would send a tight
//     print loop's whole output as one message at the end), the reader runs
//     at most a few messages ahead of the cell, and a message over 256 MiB
//     (a huge display) is read past and dropped with a warning frame
//     ([*MessageTooBigError]) instead of ending the connection.
//   - Jupyter's iopub channel is lossy: it drops messages when a kernel
//     writes faster than the gateway forwards them. The start snippet counts
//     the characters each cell writes to stdout and stderr, every
//     execute_request asks for the counts back as a user expression, and a
//     shortfall becomes a warning frame naming how much had not arrived.
//     After execute_reply, idle is awaited while messages keep coming; 3 s
//     without any ends the cell with a warning instead of a hang.
//
// Error tracebacks are passed on as ipykernel sends them, with ANSI colour
// codes; the output sink sanitises them.
//
// # Gateways
//
// An external gateway (PI_PYTHON_GATEWAY_URL, optional PI_PYTHON_GATEWAY_TOKEN,
// read by the caller) is used through [NewClient]; evalhost starts and stops
// nothing for it. It may equally be a Jupyter Enterprise Gateway, which puts
// kernels on a cluster: the REST and websocket API are the same.
//
// The shared local gateways (one per interpreter, started by the first
// evalhost process that needs one) are coordinated by package
// gateway/shared. The Client never passes the gateway's own environment on
// to a kernel: the create request carries an empty env, so kernel_gateway
// launches the kernel with PATH alone (and Jupyter's own variables), and
// the start snippet applies the caller's environment, unsetting PATH (and
// the LC_CTYPE Python then sets for itself) when the caller has none.
package gateway
