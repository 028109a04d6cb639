"""evalhost get_ipython(): a small stand-in for IPython's shell, loaded by the
first get_ipython() call. Magics and shell commands it offers load
ipy_magics and ipy_system only when called.
"""

import sys

_core = globals()["_core"]


def _magics():
    return _core._module("ipy_magics")


def _system():
    return _core._module("ipy_system")


# --- get_ipython() --------------------------------------------------------


class DisplayPublisher:
    """get_ipython().display_pub: publish MIME bundles (with display ids), clear output."""

    def publish(self, data, metadata=None, source=None, *, transient=None, update=False, **kwargs):
        did = (transient or {}).get("display_id")
        if update and not did:
            raise TypeError("publish(update=True) needs transient={'display_id': ...}")
        _core._module("display").emit_display("update_display" if update else "display", _core._module("display").bundle_of(data, True, None)[0],
                            metadata or None, did)

    def clear_output(self, wait=False):
        _core._module("display").emit_clear(bool(wait))


class EventManager:
    """get_ipython().events: callbacks for pre/post_execute and pre/post_run_cell."""

    names = ("pre_execute", "pre_run_cell", "post_execute", "post_run_cell", "shell_initialized")

    def __init__(self):
        self.callbacks = {n: [] for n in self.names}

    def register(self, event, fn):
        if event not in self.callbacks:
            raise KeyError("unknown event %r; known: %s" % (event, ", ".join(self.names)))
        if not callable(fn):
            raise TypeError("event callback must be callable, got %r" % (fn,))
        if fn not in self.callbacks[event]:
            self.callbacks[event].append(fn)
        self._hook()

    def unregister(self, event, fn):
        try:
            self.callbacks[event].remove(fn)
        except (KeyError, ValueError):
            raise ValueError("function %r is not registered as a %r callback" % (fn, event)) from None

    def trigger(self, event, *args, **kwargs):
        for fn in list(self.callbacks.get(event, ())):
            try:
                fn(*args, **kwargs)
            except Exception as e:
                print("Error in callback %r (for %s): %s: %s" % (fn, event, type(e).__name__, e), file=sys.stderr)

    def _hook(self):
        if self._pre not in _core._pre_cell:
            _core._pre_cell.append(self._pre)
            _core._post_cell.append(self._post)

    def _pre(self):
        self.trigger("pre_execute")
        if self.callbacks["pre_run_cell"]:
            self.trigger("pre_run_cell", ExecutionInfo(_core._ns.get("_i00", "")))

    def _post(self, status):
        self.trigger("post_execute")
        if self.callbacks["post_run_cell"]:
            self.trigger("post_run_cell", ExecutionResult(status == "ok"))


class ExecutionInfo:
    def __init__(self, raw_cell):
        self.raw_cell = raw_cell
        self.store_history = True
        self.silent = False
        self.shell_futures = True
        self.cell_id = None


class ExecutionResult:
    def __init__(self, success, result=None, error=None):
        self.success = success
        self.result = result
        self.error_in_exec = error
        self.error_before_exec = None
        self.execution_count = _core._count

    def raise_error(self):
        if self.error_in_exec is not None:
            raise self.error_in_exec


class EvalhostShell:
    """The get_ipython() stand-in: magics, shell commands, the namespace, display publishing.

    kernel is None (there is no Jupyter kernel); config is an empty dict.
    """

    kernel = None

    def __init__(self):
        self.display_pub = DisplayPublisher()
        self.events = EventManager()
        self.config = {}

    @property
    def user_ns(self):
        return _core._ns

    user_global_ns = user_ns

    @property
    def execution_count(self):
        return _core._count

    def run_line_magic(self, magic_name, line, _stack_depth=1):
        return _magics().line_magic(magic_name, line, sys._getframe(_stack_depth))

    def run_cell_magic(self, magic_name, line, cell):
        return _magics().cell_magic(magic_name, line, cell, 0, sys._getframe(1))

    def magic(self, arg_s):
        name, _, line = arg_s.lstrip("%").partition(" ")
        return _magics().line_magic(name, line, sys._getframe(1))

    def find_line_magic(self, name):
        entry = _magics()._line_magics.get(name)
        return entry and entry[0]

    def find_cell_magic(self, name):
        entry = _magics()._cell_magics.get(name)
        return entry and entry[0]

    def register_magic_function(self, func, magic_kind="line", magic_name=None):
        name = magic_name or func.__name__
        m = _magics()
        _line_magics, _cell_magics = m._line_magics, m._cell_magics
        if magic_kind == "line":
            _line_magics[name] = (lambda args, frame: func(args), True)
        elif magic_kind == "cell":
            _cell_magics[name] = (lambda args, body, offset, frame: func(args, body), False)
        elif magic_kind == "line_cell":
            _line_magics[name] = (lambda args, frame: func(args), True)
            _cell_magics[name] = (lambda args, body, offset, frame: func(args, body), False)
        else:
            raise ValueError("magic_kind must be 'line', 'cell' or 'line_cell', got %r" % magic_kind)

    def system(self, cmd):
        s = _system()
        return s.system(s.expand(cmd, sys._getframe(1)))

    system_raw = system_piped = system

    def getoutput(self, cmd, split=True, depth=0):
        s = _system()
        return s.getoutput(s.expand(cmd, sys._getframe(1 + depth)), split)

    def ex(self, cmd):
        exec(cmd, _core._ns)

    def ev(self, expr):
        return eval(expr, _core._ns)

    def push(self, variables, interactive=True):
        if isinstance(variables, str):
            frame = sys._getframe(1)
            variables = {n: eval(n, frame.f_globals, frame.f_locals) for n in variables.replace(",", " ").split()}
        _core._ns.update(variables)

    def run_cell(self, raw_cell, store_history=False, silent=False, shell_futures=True, cell_id=None):
        """Run source in the user namespace (magics allowed); errors are returned, not raised."""
        try:
            cells = _core._module("cells")
            cells.forget_warnings()
            value = cells.run_source(raw_cell, "<run_cell %d>" % _core._count)
        except Exception as e:
            return ExecutionResult(False, error=e)
        if value is not None and not silent:
            _core.display(value)
        return ExecutionResult(True, result=value)

    def enable_gui(self, gui=None):
        return None

    def enable_matplotlib(self, gui=None):
        _magics()._m_matplotlib(gui or "", None)
        return gui, gui

    def showtraceback(self, *args, **kwargs):
        _core._imports().call(lambda: _core._own("traceback").print_exc())

    def __repr__(self):
        return "<evalhost shell: run_line_magic, run_cell_magic, system, getoutput, user_ns, display_pub>"


_shell = []


def shell():
    if not _shell:
        _shell.append(EvalhostShell())
    return _shell[0]
