"""evalhost cells: one execute request, from started to done.

Cell(req)() runs a request through named steps, each a method (as IPython's
DisplayHook.__call__ runs check_for_underscore, quiet, start_displayhook,
write_output_prompt, compute_format_data, update_user_ns, log_output,
finish_displayhook): accept, start, send_started, apply, run (execute,
then end), fail when it raised, finish. The cell's own state (id, running,
interrupted, ack, ...) is on the Cell, which core's signal handler and
flusher and wire's frame writers read as _wire._cur. A result goes through show_result's
steps the same way: update_user_ns, shows_itself, compute_format_data,
write_format_data (a quiet cell, ending in ';', has no last expression); a
plain builtin value's frame is its repr alone, built at once and kept by
the Cell (keep_result) to be placed and sent with done.
Loaded by core right after it sends ready (the first request will need it).
"""

import _signal
import os
import sys

_core = globals()["_core"]
_wire = _core._wire
_q = _core._q
# ast.PyCF_ONLY_AST and ast.PyCF_ALLOW_TOP_LEVEL_AWAIT (fixed since 3.8): _ast is
# imported only by a cell that needs its tree, see _compile.
_RUN_FLAGS = 0x2000
_AST_FLAGS = 0x400 | _RUN_FLAGS
_CO_COROUTINE = 0x80
# 3.15's compile() takes the module a warning filter's module meets (else
# the filename, dotted): python3 compiles a script, -c and stdin as __main__.
_MODULE = {"module": "__main__"} if sys.version_info >= (3, 15) else {}


class _RequestError(Exception):
    """A request that cannot run; reported as an error of that cell."""


def _drop_run_id():
    """Unset EVALHOST_RUN; os.environ.pop raises and catches a KeyError when
    it is unset, so CPython's encoded data is looked in first."""
    env = os.environ
    data = getattr(env, "_data", None)
    if data is not None and getattr(env, "encodekey", None) is not None and env.encodekey("EVALHOST_RUN") not in data:
        return
    env.pop("EVALHOST_RUN", None)


_argv = _core._module("argv")
_argv_state = _argv.State(_core._cwd_entry)  # what the last request's argv set


def _apply_argv(argv, file, req):
    """A request's "argv" and "file" (argv.py), checked."""
    if type(argv) is not list or not argv or any(type(a) is not str for a in argv):
        raise _RequestError('"argv" must be a non-empty array of strings')
    if file is not None and (type(file) is not str or not file):
        raise _RequestError('"file" must be a non-empty string')
    _argv.apply(_argv_state, sys.modules["__main__"].__dict__, argv, file)
    _orig_argv(argv, req)


# sys.orig_argv up to runner.py: the interpreter as the host started it and
# its options (3.10+; None before the first argv, () without orig_argv).
_interpreter = None


def _orig_argv(argv, req):
    """sys.orig_argv as python3's for the command line argv gives: the
    interpreter and its options, then FILE ARG..., -c CODE ARG... (the
    request's code), -m MODULE ARG... or - ARG..., not runner.py."""
    global _interpreter
    if _interpreter is None:
        orig = getattr(sys, "orig_argv", None)
        _interpreter = tuple(orig[:-1]) if type(orig) is list and orig else ()
    if not _interpreter:
        return
    first = argv[0]
    if first == "-c":
        given = ["-c", req.get("code", "")]
    elif first == "-m" and type(req.get("module")) is str:
        given = ["-m", req["module"]]
    else:
        given = [first]
    sys.orig_argv = list(_interpreter) + given + argv[1:]


def _apply(req):
    """Apply a request's cwd, env, argv and run id before its cell runs
    (its terminal after: Cell.apply)."""
    env = req.get("env")
    if env is not None:
        if type(env) is not dict:
            raise _RequestError('"env" must be an object of names to strings or null')
        for k, v in env.items():
            if v is None:
                os.environ.pop(k, None)
            elif type(v) is str:
                try:
                    os.environ[k] = v
                except ValueError as e:
                    raise _RequestError("cannot set env %r: %s" % (k, e))
            else:
                raise _RequestError('"env" value for %r must be a string or null' % k)
    run = req.get("run")
    if run:
        os.environ["EVALHOST_RUN"] = str(run)
    else:
        _drop_run_id()
    cwd = req.get("cwd")
    if cwd:
        if type(cwd) is not str:
            raise _RequestError('"cwd" must be a string')
        try:
            os.chdir(cwd)
        except OSError as e:
            raise _RequestError("cannot use cwd %r: %s; pass an existing directory" % (cwd, e.strerror or e))
        _argv.enter_cwd(_argv_state, os.getcwd())
    # After the cwd: a script's directory comes first, as in python3.
    argv = req.get("argv")
    if argv is not None:
        _apply_argv(argv, req.get("file"), req)


def _ends_quiet(src, node):
    """A ';' after the last expression silences it, as in IPython: comments
    after the ';' do not count (`x;  # note`), a ';' inside one does."""
    if ";" not in src:
        return False
    lines = src.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    # Only ';', blanks and comments can follow the cell's last statement.
    tail = lines[node.end_lineno - 1].encode("utf-8")[node.end_col_offset:].decode("utf-8", "replace")
    for line in [tail] + lines[node.end_lineno:]:
        if ";" in line.split("#", 1)[0]:
            return True
    return False


# __future__ imports last for the session, as in IPython (codeop keeps them).
_FUTURE_MASK = 0x1FE0000  # the CO_FUTURE_* bits, which are also their compiler flags
_future = 0
# The first cell is compiled before the syntax-tree types exist (treeless.py).
_treeless = True
_treeless_cells = 0  # how many were: a test's way to see which path a cell took


# A cell up to this many lines down its file is padded to its lines
# (~15 us); one further down is compiled as it stands and moved
# (lineshift.py: ~2-6 us, and its first load).
_PAD_LINES = 1000


def _compile(src, name, script=False, before=0):
    """_compile_text for src as though it began on line before + 1 of name."""
    if before > _PAD_LINES and not _treeless:
        parts = _core._module("lineshift").move(_compile_text, src, name, script, before)
        if parts is not None:
            return parts
    return _compile_text("\n" * before + src, name, script) if before else _compile_text(src, name, script)


def _compile_text(src, name, script=False):
    """Compile a cell to (body code, last-expression code); SyntaxError as is.

    A script cell (python3's FILE) is compiled whole, as python3 compiles a
    file: its body alone, no last expression to show, no top-level await.

    A runner's first cell is compiled without the syntax-tree types
    (treeless.py). Otherwise a one-line cell without ';' is first tried
    as one expression, compiled straight from its text: building the syntax
    tree, which finds the last expression of any other cell, was half a warm
    1+1's compile time. A statement fails that try at its first token that
    cannot go on an expression (~2.5 us) and, being the cell's only
    statement, is compiled straight too. Other cells take the tree. ';'
    skips the try: a quiet `x;` would fail it, and `f("\\d"); y = 1` would
    have the parser warn twice of what comes before the ';'."""
    global _future, _treeless, _treeless_cells
    if _treeless:
        # The first cell only: it is ~6 us slower than compile() once the
        # types exist, which a warm session's every 1+1 would pay.
        _treeless = False
        try:
            parts = None
            if not _future and "_ast" not in sys.modules:
                treeless = _core._module("treeless")
                parts = treeless.script(src, name) if script else treeless.cell(src, name)
        except BaseException:
            # Removing the trace fails when an audit hook's signal handler
            # raises: once more (what that raises goes out chained to this).
            if sys.gettrace() is not None:
                sys.settrace(None)
            raise
        if parts is not None:
            _treeless_cells += 1
            if parts[0] is not None:
                _future |= parts[0].co_flags & _FUTURE_MASK
            return parts
    if script:
        # As python3 compiles a file: no top-level await (SyntaxError:
        # 'await' outside function), which notebook cells have.
        body = compile(src, name, "exec", _future, True, **_MODULE)
        _future |= body.co_flags & _FUTURE_MASK
        return body, None
    if "\n" not in src.rstrip() and ";" not in src:
        try:
            return None, compile(src, name, "eval", _RUN_FLAGS | _future, True, **_MODULE)
        except SyntaxError:
            pass
        # One line, no ';', not an expression: one statement, and not one
        # whose value shows. Compiled straight, no tree.
        body = compile(src, name, "exec", _RUN_FLAGS | _future, True, **_MODULE)
        _future |= body.co_flags & _FUTURE_MASK
        return body, None
    import _ast

    tree = compile(src, name, "exec", _AST_FLAGS | _future, True, **_MODULE)
    expr = None
    if tree.body and type(tree.body[-1]) is _ast.Expr and not _ends_quiet(src, tree.body[-1]):
        expr = tree.body.pop()
    body = compile(tree, name, "exec", _RUN_FLAGS | _future, True, **_MODULE) if tree.body else None
    last = compile(_ast.Expression(expr.value), name, "eval", _RUN_FLAGS | _future, True, **_MODULE) if expr else None
    if body is not None:
        _future |= body.co_flags & _FUTURE_MASK
    return body, last


def _record_input(src, count):
    """IPython's input history: In[N], _i, _ii, _iii, _iN."""
    ns = _core._ns
    hist = ns.get("In")
    if type(hist) is not list:
        hist = ns["In"] = ns["_ih"] = [""]
    if len(hist) == count:
        hist.append(src)
    else:
        while len(hist) < count:
            hist.append("")
        hist[count:] = [src]
    # As IPython: _i is the previous input, _i00 this one.
    ns["_iii"], ns["_ii"], ns["_i"], ns["_i00"] = ns.get("_ii", ""), ns.get("_i", ""), ns.get("_i00", ""), src
    ns["_i%d" % count] = src


def _origin(filename, line):
    """(filename, lines before the cell's first) of a request's "filename"
    and "line": the cell compiles under the file's name, numbered as in it."""
    if type(filename) is not str or not filename:
        raise _RequestError('"filename" must be a non-empty string')
    if line is None:
        line = 1
    if type(line) is not int or line < 1:
        raise _RequestError('"line" must be a positive integer: the line of the cell\'s first line in its file')
    return filename, line - 1


def _use_file(filename, src):
    """A cell from filename: tracebacks, warnings and inspect read the
    file's own lines, as python3's do, so an entry linecache kept from an
    earlier request (the file since edited) goes. "<string>" is python3
    -c's code (evalhost run -c), which linecache cannot read: 3.13+'s -c
    gives it the code (keep_string, once compiled; 3.13.0's before, as
    register_source does); before, it has none."""
    _core._cell_files.add(filename)
    if filename == "<string>" and sys.version_info >= (3, 13):
        if sys.version_info < (3, 14):
            register_source(filename, src + "\n")  # with the newline -c adds (execute)
        return
    cache = getattr(sys.modules.get("linecache"), "cache", None)
    if cache is not None:
        cache.pop(filename, None)


def run_part(src, offset, ns=None, local=None):
    """run_source for src, the current cell's text from its line offset+1
    on (a cell magic's body), under the cell's name."""
    origin = getattr(_wire._cur, "origin", None)
    if origin is None:
        return run_source(src, "<cell %d>" % _core._count, ns, local, offset)
    return run_source(src, origin[0], ns, local, origin[1] + offset)


def keep_string(codes, src, lc=None):
    """python3 -c's code (3.13+) kept for linecache as that python3 keeps
    it: by its code objects where linecache has _interactive_cache
    (3.14.10's, 3.15's: tracebacks and inspect find it; warnings, which
    look by filename, do not), else by its name (3.13.0's, which _use_file
    registered). Before linecache is imported, stdio's _fix_linecache
    calls this with it."""
    if lc is None:
        lc = sys.modules.get("linecache")
        if getattr(lc, "_register_code", None) is None:  # not (yet) imported
            _core._code_sources.append((codes, src))
            return
    if not hasattr(lc, "_interactive_cache"):
        register_source("<string>", src)
        return
    _core._sources.pop("<string>", None)
    lc.cache.pop("<string>", None)
    for code in codes:
        if code is not None:
            lc._register_code(code, src, "<string>")


def register_source(name, src):
    """Keep a cell's source for tracebacks, inspect and linecache."""
    _core._sources[name] = src
    # getattr: linecache may be half imported (core's warm-up thread)
    cache = getattr(sys.modules.get("linecache"), "cache", None)
    if cache is not None:
        cache[name] = _core._cache_entry(name, src)


def forget_warnings():
    """Empty the user namespace's warning registry before a cell, as
    IPython's shell does before each run_cell: its keys are (text, category,
    line), so a later cell's warning on a line an earlier cell warned on
    would pass for the one already shown. Within a cell it still shows once."""
    _core._ns.pop("__warningregistry__", None)


def _exec_code(body, last, ns, local=None):
    """Run compiled cell code; return the last expression's value (or None)."""
    if local is None:
        local = ns
    if body is not None:
        r = eval(body, ns, local)
        if body.co_flags & _CO_COROUTINE:
            _core._module("aio").run(r)
    if last is not None:
        v = eval(last, ns, local)
        if last.co_flags & _CO_COROUTINE:
            v = _core._module("aio").run(v)
        return v
    return None


def run_source(src, name, ns=None, local=None, before=0):
    """Compile src (magics rewritten) under name, as though it began on line
    before + 1 of the text registered for name, and run it; return its
    last value."""
    if _core._maybe_magic(src):
        src = _core._module("ipy_rewrite").transform(src)
    body, last = _compile(src, name, before=before)
    return _exec_code(body, last, _core._ns if ns is None else ns, local)


# --- the result: IPython's displayhook, step by step ---------------------


# Builtin types with no display methods: the usual cell results. Their
# bundle is their repr alone (display.format's too, which reads this set).
PLAIN = frozenset((int, float, complex, bool, str, bytes, list, tuple, dict, set, frozenset, range, type(None)))


def _run_module(name):
    """python3 -m NAME: the call the interpreter makes (Modules/main.c's
    pymain_run_module), runpy's code (frozen from 3.11: its frames are
    python3's own "<frozen runpy>" ones), in __main__'s namespace. Called from here, not
    from a cell's code, a traceback starts at runpy's frames, as python3's."""
    forget_warnings()
    for hook in _core._pre_cell:
        hook()
    ns = sys.modules["__main__"].__dict__
    before = _argv.before_module(ns)
    # python3 DIR or APP.pyz: its __main__, sys.argv[0] the path as given.
    main_path = _argv.main_path(_argv_state) if name == "__main__" else None
    try:
        _core._own("runpy")._run_module_as_main(name, alter_argv=main_path is None)
    finally:
        _argv.ran_module(_argv_state, ns, before)
    return "ok"


def show_result(v):
    """Show a cell's last value as its result (a None value shows nothing;
    a quiet cell, one ending in ';', never gets here: see _ends_quiet).
    A plain value's frame is built here and kept for the cell's done
    (Cell.keep_result), without display's formatting."""
    if v is None:
        return
    _update_user_ns(v)
    if type(v) in PLAIN and _core._capture is None:
        cur = _wire._cur
        # _frame's line for ("result", qid, bundle=..., executionCount=...), in one step
        cur.keep_result('{"type":"result","id":%s,"bundle":{"text/plain":%s},"executionCount":%d}\n' % (
            cur.qid, _q(repr(v)), _core._count))
        return
    if _shows_itself(v):
        return
    bundle, meta = _compute_format_data(v)
    _write_format_data(bundle, meta)


def _update_user_ns(v):
    """IPython's output history: _, __, ___, _N, Out[N]. Out itself as the
    value is not stored (IPython's "recursive reference"), and a full Out
    loses its oldest fifth first, as IPython's DisplayHook culls it: a
    session does not keep every value it ever showed."""
    ns, count = _core._ns, _core._count
    out = ns.get("Out")
    if type(out) is not dict:
        out = ns["Out"] = ns["_oh"] = {}
    if v is out:
        return
    if len(out) >= _OUT_CACHE:
        _cull(ns, out)
    out[count] = v
    ns["___"], ns["__"], ns["_"] = ns.get("__", ""), ns.get("_", ""), v
    ns["_%d" % count] = v


# IPython's DisplayHook.cache_size and cull_fraction.
_OUT_CACHE, _OUT_CULL = 1000, 0.2


def _cull(ns, out):
    """IPython's DisplayHook.cull_cache: the oldest entries of Out, and
    their _N, go, with its warning."""
    n = max(int(len(out) * _OUT_CULL), 2)
    _core._own("warnings").warn("Output cache limit (currently %d entries) hit.\nFlushing oldest %d entries." % (len(out), n))
    for k in sorted(out)[:n]:
        ns.pop("_%d" % k, None)
        out.pop(k, None)


def _shows_itself(v):
    """An object with _ipython_display_ shows itself, as under IPython's hook."""
    m = _core._module("display").method(v, "_ipython_display_")
    if m is None:
        return False
    m()
    return True


def _compute_format_data(v):
    return _core._module("display").format(v)


def _write_format_data(bundle, meta):
    _core._module("display").send_bundle("result", bundle, meta, _core._count)


# --- one execute request -------------------------------------------------


class Cell(_wire._Request):
    """One execute request. Calling it runs the steps in order; core's
    signal handler and flusher and wire's frame writers read this object as
    _wire._cur."""

    result = None  # a result frame line kept for done (keep_result)
    origin = None  # (filename, lines before the cell) of a cell from a file (_origin)
    module = None  # the module a request runs as python3 -m does (_run_module)
    script = False  # runs as python3 runs a script file: no value shown, no figures flushed
    # One of a script's cells (its request has argv or inScript), whose
    # uncaught error goes as python3's (tracebacks.report_uncaught). Per
    # request: a session a script used may serve a notebook's cells next.
    in_script = False
    # The exit request follows (the request's "last"): a script's last cell
    # leaves what its streams lost to the exit's report (stdio.exit_flush).
    last = False
    # The exit follows the request and reports as python3's (the request's
    # "exitReports": evalhost run): a script's cell leaves what its streams
    # lost to it, last or not.
    exit_reports = False
    # The request's "terminal" as applied (terminal.enter), taken back at
    # its end (finish): a session's next command may show no terminal.
    terminal = None

    def __init__(self, req):
        self.req = req
        self.status = "error"
        self.cancelled = False

    def __call__(self):
        if not self.accept():
            return
        try:
            try:
                # In the try: a SIGINT may land as start sets _wire._cur
                # (3.8 runs the handler there), and the cell is then the
                # interrupted one; outside it, the KeyboardInterrupt ended
                # the runner.
                self.start()
                self.send_started()
                self.apply()
                self.run()
                self.running = False
                # IPython catches the KeyboardInterrupt itself and reports an error
                self.cancelled = self.status == "error" and _core._ipython_mode and self.interrupted
            except BaseException as e:
                self.running = False  # first: no KeyboardInterrupt may land in the handling
                self.fail(e)
                del e
        except KeyboardInterrupt:  # landed between the cell's end and the flag
            pass
        finally:
            self.running = False
        self.finish()

    def accept(self):
        """A request without a string id cannot be answered: warn, skip it."""
        rid = self.req.get("id")
        if type(rid) is not str or not rid:
            _wire._warn('execute request without a string "id" was ignored: send {"id":"…","code":"…"}')
            return False
        self.id, self.qid = rid, _core._q(rid)
        return True

    @property
    def ack(self):
        """Its interrupted frame line, built when an interrupt lands, not
        for every cell."""
        return b'{"type":"interrupted","id":%s}\n' % self.qid.encode()

    def start(self):
        """Become the current request and let interrupts land (from here on a
        SIGINT raises KeyboardInterrupt: __call__ calls this in its try)."""
        self.running = True  # before "started": an interrupt after it must land
        self.positioning = True
        _wire._cur = self

    def send_started(self):
        # held: it goes out with the cell's next frame or text, or at the
        # flusher's next tick, so a quick cell is one write
        _wire._hold(b'{"type":"started","id":%s}\n' % self.qid.encode())

    def apply(self):
        """The request's code, env, run id and cwd; bad ones are a RequestError."""
        code = self.req.get("code", "")
        if type(code) is not str:
            raise _RequestError('"code" must be a string')
        filename = self.req.get("filename")
        if filename is not None:
            self.origin = _origin(filename, self.req.get("line"))
        module = self.req.get("module")
        if module is not None and type(module) is not str:
            raise _RequestError('"module" must be a string')
        script = self.req.get("script", False)
        if type(script) is not bool:
            raise _RequestError('"script" must be true or false')
        in_script = self.req.get("inScript", False)
        if type(in_script) is not bool:
            raise _RequestError('"inScript" must be true or false')
        last = self.req.get("last", False)
        if type(last) is not bool:
            raise _RequestError('"last" must be true or false')
        self.last = last
        exit_reports = self.req.get("exitReports", False)
        if type(exit_reports) is not bool:
            raise _RequestError('"exitReports" must be true or false')
        self.exit_reports = exit_reports
        _apply(self.req)
        terminal = self.req.get("terminal")
        if terminal is not None:  # this cell's alone: finish takes it back
            mod = _core._module("terminal")
            try:
                self.terminal = mod.enter(terminal)
            except mod.BadTerminal as e:
                raise _RequestError(str(e))
        if self.origin is not None:  # after the argv: 3.8 names a FILE as given
            self.origin = (_argv.named(_argv_state, self.origin[0]), self.origin[1])
        self.code, self.module, self.script = code, module, script
        self.in_script = in_script or self.req.get("argv") is not None
        _core._stdio.codecs_for(self.in_script)  # a script's are python3's, others' lose no text

    def run(self):
        """Count the cell and run it; figures and post-cell hooks follow whatever it did."""
        _core._count += 1
        handlers = sys.modules.get("_evalhost_handlers")
        if handlers is not None:
            handlers.unguard()  # the script's own signal handlers while it runs
        try:
            self.status = self.execute(self.code)
        finally:
            try:
                if self.result is not None and (_core._post_cell or "matplotlib.pyplot" in sys.modules):
                    self.send_result()  # figures and post-cell hooks come after it
                if not self.script:  # python3 never shows a script's open figures; plt.show() did (figures.py)
                    _core._flush_figures()
                self.end()
            finally:
                handlers = sys.modules.get("_evalhost_handlers")  # the cell may have set its first
                if handlers is not None:
                    handlers.guard()  # till the next cell's run: what they raise waits for it

    def execute(self, src):
        """Run the source; send its result or its compile error; return the status."""
        if self.module is not None or _core._ipython_mode:
            if _core._held():
                _core._module("handlers").raise_pending()
            if self.module is not None:
                return _run_module(self.module)
            return _core._module("ipy_full").run_full(src, self.script)
        count = _core._count
        _record_input(src, count)
        origin = self.origin
        if origin is None:
            name = "<cell %d>" % count
            register_source(name, src)
        else:
            name = origin[0]
            _use_file(name, src)
        if _core._held():  # a signal handler raised between cells: it lands here
            handlers = _core._module("handlers")
            line = handlers.first_line(src)
            handlers.raise_pending(name, line and line + (origin[1] if origin else 0))
        forget_warnings()
        for hook in _core._pre_cell:
            hook()
        code = src
        try:
            if _core._maybe_magic(src):
                code = _core._module("ipy_rewrite").transform(src)  # line for line
            if name == "<string>":
                code += "\n"  # python3 -c's CODE: it adds a newline (its EOF errors name the line after)
            # the file's line numbers, in errors and warnings of the compiler too
            body, last = _compile(code, name, self.script, 0 if origin is None else origin[1])
            if name == "<string>" and sys.version_info >= (3, 13):
                keep_string((body, last), code)
        except (SyntaxError, ValueError, OverflowError, MemoryError) as e:
            if not self.in_script:
                _core._send_error(e, only=True)
                return "error"
            parts = self.compile_error(e, code, name)
            if parts is None:
                return "error"
            body, last = parts
        show_result(_exec_code(body, last, _core._ns))  # a script has no last: None, nothing shown
        return "ok"

    def compile_error(self, e, code, name):
        """A script's compile error e sent as python3's: for a whole file
        (python3 FILE's cell), the error python3's compile of the file
        raises (asfile.recompile), shown as python3's display shows it. Or
        the code that compile gives, which runs (3.8-3.10 read past a NUL
        byte): (body, last); None once the error is sent."""
        asfile = _core._module("asfile")
        try:
            if not self.script or self.origin is None or self.origin[1] != 0:
                raise e
            return asfile.recompile(e, code, name, lambda src: _compile_text(src, name, True))
        except (SyntaxError, ValueError, OverflowError, MemoryError) as err:
            lines = asfile.display(err)
            if lines is None:
                _core._send_error(err, only=True)
            else:
                _core._module("tracebacks").send_error_lines(type(err).__name__, str(err), lines)
        return None

    def keep_result(self, line):
        """Keep a result frame line to go out with done, placed among the
        cell's output there (wire._send_done), when nothing can come between:
        one look at the pipes for both frames. It is sent at once when too
        long (wire._send drops it), and before a later frame (send_result)."""
        if self.result is not None:
            self.send_result()
        self.result = line
        if len(line) > _wire.MAX_LINE:
            self.send_result()

    def send_result(self):
        """Send a kept result now, as display.send_bundle sends one."""
        line, self.result = self.result, None
        _core._flush_std()
        _wire._send(line, hold=True)

    def end(self):
        """Post-cell hooks (get_ipython().events); one that raises is a warning."""
        for hook in _core._post_cell:
            try:
                hook(self.status)
            except Exception as e:
                _wire._warn("post-cell hook %r raised %s: %s" % (hook, type(e).__name__, e), self.qid)

    def fail(self, e):
        """What the cell raised: a request error, a clean exit, or an error frame."""
        self.status = "error"
        if self.result is not None:
            self.send_result()  # the interrupt landed after the result
        if isinstance(e, _RequestError):
            _wire._send_plain_error("RequestError", str(e))
        elif isinstance(e, SystemExit):
            self.exited = True  # a batch run stops here, as python3 would
            # A script's exit: python3 prints the message before its exit
            # runs the atexit handlers (handle_system_exit), so it is
            # written here, not by a client after the exit's output, when
            # that exit follows: the interpreter's last cell, or any cell
            # of a batch run per call (exit_reports), which stops at it;
            # after an interrupt too (except KeyboardInterrupt:
            # sys.exit(...)), whose message a script under python3 prints
            # as it ends, Ctrl-C's or the timeout's. It takes str(code)
            # once (text), and never the exception's own str().
            script = self.in_script and not _core._ipython_mode
            exits = script and (self.last or self.exit_reports)
            message = e.code is not None and not isinstance(e.code, int)  # status 1 and an error frame
            reports, text = exits and message, None
            if script and message:
                tracebacks = _core._module("tracebacks")
                text = tracebacks.report_exit(e) if reports else tracebacks.exit_text(e.code)
            if e.code is not None:  # 0.0 is python3's status 1
                self.exit_status, self.exit_message = _wire._exit_status(e.code, "" if script and text is None else text)
            if exits and isinstance(e.code, int) and not -(1 << 63) <= e.code < (1 << 63):
                _core._module("tracebacks").report_exit_overflow()
            if not self.exit_status and self.exit_message is None:  # 0, and 2**32 python3 truncates to 0
                self.status = "ok"
                return
            _core._module("tracebacks").send_exit_error(e, reports, script, text)
        else:
            _core._stdio.interrupt_ended = _core._stdio.dies_of_sigint(e)
            self.cancelled = isinstance(e, KeyboardInterrupt) and self.interrupted
            if not self.in_script or self.cancelled or _core._ipython_mode:
                _core._send_error(e)  # as Jupyter's kernel reports it: no hook, all frames
            else:
                exit = _core._module("tracebacks").report_uncaught(e, self)
                if exit is not None:  # the user's sys.excepthook called sys.exit()
                    self.fail(exit)

    def finish(self):
        """Idle again: the SIGINT handler back, output flushed, sync marks, done."""
        if _wire._forked:  # a fork() in the cell returned into the runner: no marks, no done
            _core._flush_std()
            os._exit(0)
        if _signal.getsignal(_signal.SIGINT) is not _core._on_sigint:
            _signal.signal(_signal.SIGINT, _core._on_sigint)  # the cell replaced it; idle must ignore
        _core._stdio.flush_said(self.qid, self.in_script and self.last, self.in_script and self.exit_reports)
        if self.terminal is not None:
            _core._module("terminal").leave(self.terminal)
        self.positioning = False
        _wire._send_done(self, self.status, self.cancelled, self.result)
