package gateway

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"sync"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/runner"
)

// Python run inside the kernel by evalhost itself. Each snippet defines one
// function, calls it and deletes it, so the user's namespace stays clean.

// setupCode applies a cell's cwd (chdir, and first on sys.path as the
// notebook's cwd entry, through the runner's rule: argvModule) and env (a
// nil value unsets); "" when there is nothing to apply.
func setupCode(cwd string, env map[string]*string) string {
	if cwd == "" && len(env) == 0 {
		return ""
	}
	rule := "" // the argv rule's source only where it is used
	if cwd != "" {
		rule = argvModule()
	}
	return `def __evh_setup(cwd, env):
    import os, sys, types
` + rule + `    if cwd:
        if not os.path.isdir(cwd):
            import socket
            raise FileNotFoundError(` + pyString(cwdMissing) + ` % (cwd, socket.gethostname()))
        os.chdir(cwd)
        st, m = argv_rule()
        m.enter_cwd(st.argv_state, cwd)
    for k, v in (env or {}).items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
__evh_setup(` + pyFSString(cwd) + `, ` + pyJSON(env) + `)
del __evh_setup
`
}

// argvModule defines argv_rule, which returns ioStateModule and in it the
// runner's own argv rule, runner.ArgvSource, run once per kernel into a
// module (st.argv) with its state (st.argv_state: the notebook's cwd
// entry, and what the last request's argv set, to take back), so a
// restarted kernel starts afresh. It goes in a snippet function's body,
// where sys and types are imported; the first snippet of a kernel
// (setupCode, before startCode) makes ioStateModule. Built on first use,
// not at package init: quoting argv.py cost every evalhost command,
// gateway or not, ~0.13 ms of its start (issue 16).
var argvModule = sync.OnceValue(func() string {
	return `    def argv_rule():
        st = sys.modules.get(` + pyString(ioStateModule) + `)
        if st is None:
            st = sys.modules[` + pyString(ioStateModule) + `] = types.ModuleType(` + pyString(ioStateModule) + `)
        m = getattr(st, "argv", None)
        if m is None:
            m = types.ModuleType("_evalhost_argv")
            exec(compile(` + pyString(runner.ArgvSource()) + `, "<evalhost>", "exec"), m.__dict__)
            st.argv, st.argv_state = m, m.State()
        return st, m
`
})

// argvCode sets sys.argv, __file__ and sys.path as the runner does for its
// "argv" and "file" (frames.Request), with the runner's own rule
// (argvModule): the notebook's entries, the cwd setupCode put and
// IPython's own "" before site-packages, go as they do in the runner. The
// strings go as the runner's do (frames.AppendFSString): invalid UTF-8 is
// os.fsdecode's lone surrogates, as python3 FILE gives them. "" when argv
// is nil.
func argvCode(argv []string, file string) string {
	if argv == nil {
		return ""
	}
	fileJSON := "null"
	if file != "" {
		fileJSON = string(frames.AppendFSString(nil, file))
	}
	args := "[" + string(frames.AppendFSStrings(nil, argv)) + "," + fileJSON + "]"
	return `def __evh_argv(g, argv, file):
    import sys, types
` + argvModule() + `    st, m = argv_rule()
    m.apply(st.argv_state, g, argv, file)
__evh_argv(globals(), *__import__('json').loads(` + pyString(args) + `))
del __evh_argv
`
}

// cwdMissing is the error for a cwd the kernel's host lacks: with a remote
// gateway that is another machine (or container) than evalhost's.
const cwdMissing = "working directory %r does not exist on the kernel's host %s: a gateway's kernel runs there, " +
	"not where evalhost runs; create the directory there (or mount it), or run evalhost from a directory that exists on both"

// stdinMessage is what input() raises with: the runner's words (runner/core.py).
const stdinMessage = "input() is not supported: evalhost cells have no interactive stdin; pass values in code or files instead"

// infoMarker starts the line the start snippet prints with kernel facts.
const infoMarker = "\x1eEVH-INFO "

// warnMarker starts a line the module loader prints per failed module, and
// the one the start snippet prints when sync_flushes could not be applied.
const warnMarker = "\x1eEVH-WARN "

// runMetadataKey carries a cell's run id in its execute_request metadata.
const runMetadataKey = "evalhost_run"

// scriptMetadataKey (true) in a cell's execute_request metadata has the
// start snippet's pre_run_cell hook run it as a script (frames.Request's
// Script): the shell's ast_node_interactivity is "none" for that cell, so
// no expression's value is shown, as `ipython FILE` runs one.
const scriptMetadataKey = "evalhost_script"

// ioStateModule is the module the start snippet keeps its per-cell counts
// of characters written to stdout and stderr in; each execute_request asks
// for them back as a user expression (writtenExpr), so that output Jupyter's
// iopub channel dropped under load is reported, not silently missing. The
// argv snippet keeps there the runner's argv rule and what it last set.
const (
	ioStateModule = "_evalhost_io"
	writtenExpr   = "__import__('sys').modules['" + ioStateModule + "'].written"
	writtenKey    = "evalhost_written"
)

// maxStreamText is how much text ipykernel's stdout or stderr may buffer
// before the start snippet has it flush. ipykernel flushes on a timer, so a
// cell printing in a tight loop otherwise sends all its output as one stream
// message when it ends (300 MiB printed arrived as one 300 MiB message):
// nothing streams meanwhile and every hop holds the whole of it.
const maxStreamText = 1 << 20

// startCode makes input() fail at once after the host's empty input_reply,
// bounds the kernel's stream messages to about maxStreamText, exposes each
// cell's run id as EVALHOST_RUN (read from its request's metadata before the
// cell runs, as the runner sets it), and prints the kernel's python version,
// pid and executable. It is compiled as "<evalhost>", so a traceback through
// it (input()) names evalhost rather than a line of a cell the user never saw.
func startCode() string {
	return "exec(compile(" + pyString(startSource) + `, "<evalhost>", "exec"), globals())
`
}

var startSource = `def __evh_start():
    import json, os, sys, platform
` + wakeSource + `
    os.environ.pop("KG_AUTH_TOKEN", None)  # the shared gateway's secret
    import types
    # setupCode's cwd may have made it, with the argv rule in it
    io_state = sys.modules.get(` + pyString(ioStateModule) + `) or types.ModuleType(` + pyString(ioStateModule) + `)
    sys.modules[` + pyString(ioStateModule) + `] = io_state
    io_state.written = [0, 0]  # characters written to stdout, stderr this cell
    def bound(stream, limit, idx):
        write, flush = stream.write, stream.flush
        pending = 0
        def bounded_write(s):
            nonlocal pending
            if isinstance(s, str) and len(s) > limit:
                for i in range(0, len(s), limit):
                    bounded_write(s[i:i + limit])
                return len(s)
            n = write(s)
            if isinstance(s, str):
                io_state.written[idx] += len(s)
            pending += len(s)
            if pending >= limit:
                pending = 0
                flush()
            return n
        try:
            stream.write = bounded_write
        except (AttributeError, TypeError):
            pass
    for idx, stream in enumerate((sys.stdout, sys.stderr)):
        if type(stream).__module__.startswith("ipykernel"):
            bound(stream, ` + strconv.Itoa(maxStreamText) + `, idx)
` + flushSyncSource + `    streams = [s for s in (sys.stdout, sys.stderr) if type(s).__module__.startswith("ipykernel")]
    if streams:
        try:
            why = sync_flushes(streams)
        except Exception as e:
            why = "%s: %s" % (type(e).__name__, e)
        if why:
            print(` + pyString(warnMarker) + ` + json.dumps(` + pyString(flushSyncWarning) + ` + why), flush=True)
    ip = get_ipython()
    kernel = getattr(ip, "kernel", None)
    if kernel is not None and hasattr(kernel, "raw_input"):
        asked = kernel.raw_input
        from IPython.core.error import StdinNotImplementedError
        def raw_input(prompt=""):
            asked(prompt)
            raise StdinNotImplementedError(` + pyString(stdinMessage) + `)
        kernel.raw_input = raw_input
    if kernel is not None:
        def run_id(*_):
            io_state.written[:] = [0, 0]
            try:
                parent = kernel.get_parent("shell")
            except TypeError:
                parent = kernel.get_parent()
            except AttributeError:
                parent = getattr(kernel, "_parent_header", None) or {}
            meta = (parent or {}).get("metadata") or {}
            run = meta.get(` + pyString(runMetadataKey) + `)
            if run:
                os.environ["EVALHOST_RUN"] = run
            else:
                os.environ.pop("EVALHOST_RUN", None)
            if meta.get(` + pyString(scriptMetadataKey) + `) is True:
                # read by run_cell after this hook; put back after the cell
                io_state.interactivity = ip.ast_node_interactivity
                ip.ast_node_interactivity = "none"
        def script_done(*_):
            kept = getattr(io_state, "interactivity", None)
            if kept is not None:
                ip.ast_node_interactivity, io_state.interactivity = kept, None
        ip.events.register("pre_run_cell", run_id)
        ip.events.register("post_run_cell", script_done)
        wake_after_interrupts(kernel)
    try:
        import ipykernel
        version = ipykernel.__version__
    except Exception:
        version = ""
    # ipykernel 5 answers kernel_info on control but has no interrupt_request
    control_interrupt = "interrupt_request" in (getattr(kernel, "control_handlers", None) or {})
    print(` + pyString(infoMarker) + ` + json.dumps({"python": platform.python_version(), "pid": os.getpid(),
        "executable": sys.executable, "ipykernel": version, "control_interrupt": control_interrupt}), flush=True)
__evh_start()
del __evh_start
`

// wakeSource defines wake_after_interrupts, which the start snippet applies
// to the kernel. CPython runs a SIGINT's handler in the main thread between
// bytecodes; one that arrives just before a blocking call (time.sleep, a
// read, a wait for a child) waits until that call returns: an interrupt
// sent as a cell started was left pending in its time.sleep(30) 5 times in
// 760 here. evalhost interrupts once (a second SIGINT would land in the
// cell's handling of the first), so the kernel wakes itself, as the
// runner's host does: when the control channel's interrupt_request signals
// it during a request of the main thread, a thread sends the main thread a
// real-time signal, 50 ms later and then at doubling intervals (at most
// maxWakes), until that signal's handler ran, the request ended, or the
// handler is no longer evalhost's (a cell that reset it to SIG_DFL would be
// killed by the next). A wake ends the blocking call, and CPython then runs
// the pending handlers in signal-number order: SIGINT's (ipykernel's own,
// untouched, so tracebacks show no frame of evalhost's) and then the wake's,
// whose running so says the SIGINT's has (in the same pass of
// PyErr_CheckSignals, 3.9 to 3.14; when the SIGINT's raises, the wake's
// waits for the next check, in the cell's except block, where it does
// nothing the cell sees). That holds while the SIGINT was tripped before
// the wake's check: a SIGINT the kernel gives a thread other than the main
// one (the cell blocks it there) that runs it only after the first wake's
// handler ran, 50 ms on, is left pending. The handler is installed without
// SA_RESTART, as Python installs every handler: with it a read or a wait is
// restarted after the wake and the SIGINT stays pending. Without real-time
// signals (macOS) or the ipykernel hooks used, nothing changes.
var wakeSource = `    def wake_after_interrupts(kernel):
        import signal, sys, threading
        wake = getattr(signal, "SIGRTMIN", 0) and signal.SIGRTMIN + 6
        # ipykernel before 6.22 spells it _send_interupt_children
        sender = "_send_interrupt_children" if hasattr(kernel, "_send_interrupt_children") else "_send_interupt_children"
        hooks = ("pre_handler_hook", "post_handler_hook", sender)
        if not wake or not all(hasattr(kernel, h) for h in hooks):
            return
        main = threading.main_thread()
        running = [False]  # a request of the main thread's runs
        waiting = []  # the wake-up threads' Events: set when a wake's handler ran or the request ended
        pre, post, send = (getattr(kernel, h) for h in hooks)
        def release():
            while waiting:
                waiting.pop().set()
        def woke(signum, frame):
            release()
            # ipykernel's SIGINT handler for an awaiting cell (run just before this one)
            # schedules the cell's cancel with call_soon, which leaves the loop asleep
            # in its select: only this wakes it.
            aio = sys.modules.get("asyncio")
            if aio is not None:
                try:
                    aio.get_running_loop().call_soon_threadsafe(lambda: None)
                except RuntimeError:
                    pass
        def pre_handler_hook():
            pre()
            if threading.current_thread() is main:
                running[0] = True
        def post_handler_hook():
            # a subshell's request (its own thread) must not end the main thread's
            if threading.current_thread() is main:
                running[0] = False
                release()
            post()
        def wake_main(landed, sent):
            sent.wait()
            delay = 0.05
            for _ in range(` + strconv.Itoa(maxWakes) + `):
                if landed.wait(delay) or signal.getsignal(wake) is not woke:
                    return
                signal.pthread_kill(main.ident, wake)
                delay *= 2
        def send_interrupt():
            if not running[0]:
                return send()
            landed, sent = threading.Event(), threading.Event()
            waiting.append(landed)
            # The thread starts first: one started while the SIGINT is pending takes it
            # (Linux restarts the clone after delivering the signal to its caller), and
            # the main thread's blocking call goes on. It waits for the SIGINT to be sent.
            threading.Thread(target=wake_main, args=(landed, sent), name="evalhost-wake", daemon=True).start()
            try:
                send()
            except BaseException:
                landed.set()
                raise
            finally:
                sent.set()
        signal.signal(wake, woke)
        kernel.pre_handler_hook, kernel.post_handler_hook = pre_handler_hook, post_handler_hook
        setattr(kernel, sender, send_interrupt)
`

// maxWakes bounds the wake-ups of one interrupt (50 ms doubling: 51 s in
// all), for a request that never ends (an awaiting cell, which ipykernel
// 7.4 does not interrupt, under a caller with no grace window) and a main
// thread in a call that retries after every signal.
const maxWakes = 10

// modulesCode runs the extension modules mods (runner.FindModules judged
// them) in order in the user namespace. Each is read here, from the file
// judged (runner.Module.Source), and its bytes sent: the kernel may be on
// another machine, and what runs is what was judged. A module refused at
// the read is a warning frame returned here; one that raises prints a
// warning line; neither fails the start. code is "" when nothing is left
// to run.
func modulesCode(mods []runner.Module) (code string, refused []frames.Frame) {
	var rows [][2]string
	for _, m := range mods {
		src, err := m.Source()
		if err != nil {
			refused = append(refused, frames.Frame{Type: frames.TypeWarning, Message: err.Error()})
			continue
		}
		rows = append(rows, [2]string{m.Path, base64.StdEncoding.EncodeToString(src)})
	}
	if len(rows) == 0 {
		return "", refused
	}
	return `def __evh_modules(mods):
    import base64, json
    ns = get_ipython().user_ns
    doc = ns.get("__doc__")
    for path, src in mods:
        try:
            exec(compile(base64.b64decode(src), path, "exec"), ns)
        except BaseException as e:
            msg = "extension module %s raised %s: %s" % (path, type(e).__name__, e)
            print(` + pyString(warnMarker) + ` + json.dumps(msg), flush=True)
    ns["__doc__"] = doc  # not a module's docstring
__evh_modules(` + pyJSON(rows) + `)
del __evh_modules
`, refused
}

// pyString is a Python string literal: Go's JSON string escapes are all
// valid Python escapes.
func pyString(s string) string {
	raw, _ := json.Marshal(s)
	return string(raw)
}

// pyFSString is a Python expression for s, bytes from the OS (a path): a
// byte that is not UTF-8 is os.fsdecode's lone surrogate, as the runner
// gets one (frames.AppendFSString), not U+FFFD.
func pyFSString(s string) string {
	return "__import__('json').loads(" + pyString(string(frames.AppendFSString(nil, s))) + ")"
}

// pyJSON is a Python expression for a JSON-able value, decoded by json.loads
// so that null reads as None wherever it sits.
func pyJSON(v any) string {
	raw, _ := json.Marshal(v)
	return "__import__('json').loads(" + pyString(string(raw)) + ")"
}
