"""evalhost full IPython mode (EVALHOST_IPYTHON=1), loaded at start-up only
in that mode: every cell runs through IPython's InteractiveShell, whose
displayhook, display publisher and tracebacks send the runner's frames.
"""

import builtins
import os
import sys

_core = globals()["_core"]
_wire = _core._wire
re = _core._own("re")


# --- full IPython mode (EVALHOST_IPYTHON=1) --------------------------------

full_error = None
_full = []


def _strip_ansi(s):
    return re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", s)


def start_full():
    """Create an InteractiveShell whose outputs are runner frames, on the
    runner's namespace. IPython and what it imports as it loads and starts
    are the runner's own imports (imports.py), as they are IPython's own
    when it starts from its script; cells then import as IPython's do."""
    _core._imports().call(_start_full)


def _start_full():
    own = _core._own
    Config = own("traitlets.config").Config
    errors = own("IPython.core.error")
    UsageError = errors.UsageError
    # input()'s refusal is IPython's own class, which its magics catch as
    # ipykernel's "no stdin" (%reset without -f goes ahead, as there).
    _stdio = _core._stdio
    _stdio.StdinNotImplementedError = builtins.StdinNotImplementedError = errors.StdinNotImplementedError
    c = Config()
    c.HistoryManager.hist_file = ":memory:"
    c.InteractiveShell.colors = "NoColor"
    c.InteractiveShell.autocall = 0
    sh = _shell_class(own).instance(config=c, user_module=sys.modules["__main__"])
    _ipython_names.update(sh.user_ns)

    def no_editor(self, filename, linenum=None, wait=True):
        raise UsageError("%%edit opens %s in an editor, and evalhost has no terminal to show one; "
                         "write the file with %%%%writefile or open()" % filename)

    sh.set_hook("editor", no_editor)
    _full.append(sh)
    if "MPLBACKEND" not in os.environ:  # core sets Agg next, for child processes
        sys.meta_path.insert(0, _MatplotlibHook)


def _output_classes(own):
    """The displayhook and display publisher: runner frames."""
    DisplayHook = own("IPython.core.displayhook").DisplayHook
    Publisher = own("IPython.core.displaypub").DisplayPublisher

    class Hook(DisplayHook):
        def start_displayhook(self):
            pass

        def write_output_prompt(self):
            pass

        def write_format_data(self, format_dict, md_dict=None):
            # The cell's own count: IPython 9 counts the next cell before the result shows.
            _core._module("display").send_bundle("result", format_dict, md_dict, _core._count)

        def finish_displayhook(self):
            pass

    class Pub(Publisher):
        def publish(self, data, metadata=None, source=None, *, transient=None, update=False, **kwargs):
            did = (transient or {}).get("display_id")
            if hasattr(self.shell.history_manager, "outputs"):  # IPython 9's, for %notebook
                _core._module("ipy_history").keep_display(self.shell, data)
            _core._module("display").emit_display("update_display" if update else "display",
                                _core._module("display").bundle_of(data, True, None)[0], metadata or None, did)

        def clear_output(self, wait=False):
            _core._module("display").emit_clear(bool(wait))

    return Hook, Pub


def _kernel_like(own):
    """What a terminal or kernel shell adds to InteractiveShell, as a kernel
    does it: figures are matplotlib-inline's displays, in the formats
    %config InlineBackend chooses; no GUI loop runs, no editor or next cell
    exists. And the prelude's and modules' names are not the user's
    variables: %reset -f brings them back as IPython brings back its own,
    and %pylab's warning names only the user's own it replaced."""
    UsageError = own("IPython.core.error").UsageError

    class KernelLike:
        def enable_matplotlib(self, gui=None):
            return super().enable_matplotlib(_inline_gui(self, gui))

        def enable_gui(self, gui=None):
            if gui not in (None, "inline", "agg", "Agg"):
                raise UsageError("%%gui %s: evalhost runs cells without a GUI event loop; "
                                 "figures go out inline (%%matplotlib inline)" % gui)

        def reset(self, *args, **kwargs):
            super().reset(*args, **kwargs)
            if hasattr(self.history_manager, "outputs"):
                _core._module("ipy_history").forget()
            for k, v in _startup.items():
                self.user_ns.setdefault(k, v)
                self.user_ns_hidden.setdefault(k, v)

        def enable_pylab(self, *args, **kwargs):
            helpers = [k for k, v in _startup.items() if self.user_ns.get(k, self) is v]
            gui, backend, clobbered = super().enable_pylab(*args, **kwargs)
            return gui, backend, _helpers_aside(self, helpers, clobbered)

        def set_next_input(self, text, replace=False):
            # %load and %recall: there is no next cell to fill in.
            print("# evalhost cannot replace the cell or fill in the next one, so this code is shown, not run "
                  "(%run FILE runs a file):")
            print(text, end="" if text.endswith("\n") else "\n")

    return KernelLike


def _shell_class(own):
    InteractiveShell = own("IPython.core.interactiveshell").InteractiveShell
    ExitAutocall = own("IPython.core.autocall").ZMQExitAutocall
    default = own("traitlets").default
    Hook, Pub = _output_classes(own)

    class Shell(_kernel_like(own), InteractiveShell):
        displayhook_class = Hook
        display_pub_class = Pub

        # exit() and quit() as ipykernel's: exit(keep_kernel=True) ends nothing.
        keepkernel_on_exit = None

        @default("exiter")
        def _exiter_default(self):
            return ExitAutocall(self)

        def ask_exit(self):
            # exit() and quit(): IPython runs the rest of the cell, then ends
            # (ipykernel stops its kernel); run_full ends the session then.
            self.exit_now = not self.keepkernel_on_exit

        # The formatting is the runner's own (imports.py): IPython 9 imports
        # stack_data (and with it html, ...) at the first traceback, which
        # found a planted html.py in the cell's cwd.
        def showtraceback(self, exc_tuple=None, *args, **kwargs):
            exc_tuple = _without_runner(self, exc_tuple)
            return _core._imports().call(lambda: super(Shell, self).showtraceback(exc_tuple, *args, **kwargs))

        def showsyntaxerror(self, *args, **kwargs):
            return _core._imports().call(lambda: super(Shell, self).showsyntaxerror(*args, **kwargs))

        # IPython 9 formats each error again for its history, outside
        # showtraceback: an exit's traceback (exception_only above) is only
        # that one, and it imported stack_data from the cwd.
        def _format_exception_for_storage(self, *args, **kwargs):
            return _core._imports().call(lambda: super(Shell, self)._format_exception_for_storage(*args, **kwargs))

        def _showtraceback(self, etype, evalue, stb):
            lines = _strip_ansi("\n".join(stb)).split("\n")
            try:
                text = str(evalue)
            except Exception:
                text = "<unprintable %s>" % etype.__name__
            _core._module("tracebacks").send_error_lines(etype.__name__, text, lines,
                                                          keyboard_interrupt=etype is KeyboardInterrupt)

    return Shell


def _without_runner(shell, exc_tuple):
    """The error showtraceback shows, without the runner's frames (a cell's
    input() refused in stdio.py, a prelude helper's), as the runner's own
    mode shows it: IPython hides no innermost frame (__tracebackhide__
    spares the last). Only frames of the runner's files go: IPython's
    run_code, which its tb_offset skips, stays first."""
    try:
        etype, value, tb = shell._get_exc_info(exc_tuple)
    except Exception:  # none to show (IPython says so itself)
        return exc_tuple
    if value is None or tb is None:
        return exc_tuple
    tracebacks = _core._module("tracebacks")
    tracebacks.chain_without_runner(value)
    return etype, value, tracebacks.without_runner(tb)


_INLINE = "module://matplotlib_inline.backend_inline"
# Backends that need no event loop: figures made with them are shown after
# the cell (matplotlib-inline's, or the runner's PNG for the others).
_NO_GUI = ("inline", _INLINE, "agg", "svg", "pdf", "ps", "cairo", "pgf",
           "template")


class _MatplotlibHook:
    """Meta-path hook: matplotlib's default backend is matplotlib-inline's,
    as ipykernel's MPLBACKEND makes it, in this process only. The
    environment keeps the runner's MPLBACKEND=Agg: ipykernel's value there
    made `import matplotlib` fail in every child Python without
    matplotlib-inline (a venv's, run by !python), and a child's plt.show()
    print the figure's repr. Other imports pay one comparison."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name != "matplotlib":
            return None
        meta = sys.meta_path
        for f in meta[meta.index(cls) + 1:] if cls in meta else ():
            find = getattr(f, "find_spec", None)
            spec = find(name, path, target) if find is not None else None
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _core._module("stdio")._FixingLoader(spec.loader, _inline_default)
                return spec
        return None


_inline_on = []  # [True] once matplotlib got the inline default


def _inline_default(mpl):
    """matplotlib was just imported: MPLBACKEND's place in its choice (over
    matplotlibrc, under matplotlib.use) goes to the inline backend, unless
    the cell set MPLBACKEND itself or matplotlib-inline is not where the
    runner finds its own modules (a matplotlib_inline.py in the cwd is not it)."""
    if os.environ.get("MPLBACKEND", "Agg") != "Agg":
        return
    try:
        spec = _core._imports().call(_core._own("importlib.util").find_spec, "matplotlib_inline")
    except ImportError:
        return
    if spec is None:
        return
    try:
        mpl.rcParams["backend"] = _INLINE
    except Exception:
        return  # a matplotlib that knows no such backend keeps Agg
    _inline_on[:] = [True]


def _inline_gui(sh, gui):
    """What IPython's enable_matplotlib gets for %matplotlib GUI: a GUI
    toolkit or a backend that needs a frontend of its own (qt, tk, widget,
    notebook) becomes inline, and says so."""
    pt = _core._own("IPython.core.pylabtools")
    try:
        chosen, backend = pt.find_gui_and_backend(gui, sh.pylab_gui_select)
    except Exception:
        return gui  # an unknown name: IPython's own call says so
    if not isinstance(backend, str):
        # IPython 8 reads %matplotlib's default from rcParamsOrig, which
        # matplotlib 3.9+ keeps as its "auto" object, not MPLBACKEND's.
        return "inline" if _inline_on else gui
    if chosen in (None, "inline") and backend.lower() in _NO_GUI:
        return gui
    print("%%matplotlib %s: evalhost runs cells without a GUI event loop; figures go out inline "
          "(matplotlib-inline), in the formats %%config InlineBackend.figure_formats chooses"
          % (gui or backend), file=sys.stderr)
    return "inline"


def inline_figures():
    """Whether matplotlib-inline sends the figures after each cell (its
    post_execute hook, registered while the inline backend is on), so the
    runner's own PNGs must not."""
    mod = sys.modules.get("matplotlib_inline.backend_inline")
    flush = getattr(mod, "flush_figures", None)
    return flush is not None and bool(_full) and flush in _full[0].events.callbacks.get("post_execute", ())


_ipython_names = set()  # the user namespace as the shell started: IPython's and the runner's
_startup = {}  # the names the prelude and modules added, with their start-up values


def hide_startup_names(names):
    """%who, %whos and %reset leave the prelude's and modules' names alone,
    as they do in the runner's own mode."""
    for sh in _full:
        ns = sh.user_ns
        sh.user_ns_hidden.update({k: ns[k] for k in names if k in ns})
        _startup.update({k: ns[k] for k in names if k in ns and k not in _ipython_names and not k.startswith("__")})


def _helpers_aside(sh, helpers, clobbered):
    """%pylab's clobbered names less the start-up helpers it replaced,
    which a note names instead: the user never defined them."""
    gone = [k for k in helpers if sh.user_ns.get(k, _startup) is not _startup[k]]
    for k in gone:
        mod = (getattr(sh.user_ns[k], "__module__", None) or "pylab").split(".")[0]
        print("%%pylab: %s is now %s's %s, in place of evalhost's helper of that name "
              "(%%matplotlib inline, or %%pylab --no-import-all, keeps the helper)" % (k, mod, k), file=sys.stderr)
    return [k for k in clobbered if k not in gone]


def _undrawn():
    """post_execute of a script cell, before matplotlib-inline's
    flush_figures (which the cell's import of pyplot may have registered
    after it): what the script drew is not sent, as python3 shows no figure
    a script leaves open (the runner's own mode sends none either); its
    plt.show() sent what it showed."""
    show = getattr(sys.modules.get("matplotlib_inline.backend_inline"), "show", None)
    if show is not None:
        show._draw_called = False
        show._to_draw = []


def run_full(src, script=False):
    """Run one cell through InteractiveShell; its frames are the same as the
    runner's own. A script cell shows no expression's value, as `ipython
    FILE` runs one: the shell's ast_node_interactivity is "none" for it (and
    put back after; silent=True would also skip history and post-cell events),
    and it has no top-level await (autoawait off: SyntaxError, as there).
    Nor are the figures it drew and left open sent as it ends (_undrawn)."""
    if not _full:
        _wire._send_plain_error(
            "IPythonUnavailable",
            "IPython mode was requested (EVALHOST_IPYTHON=1) but IPython could not start (%s); "
            "install it in this interpreter (pip install ipython) or start the session without --ipython"
            % (full_error or "unknown error"),
        )
        return "error"
    sh = _full[0]
    sh.execution_count = _core._count
    interactivity, autoawait = sh.ast_node_interactivity, sh.autoawait
    post = sh.events.callbacks["post_execute"]
    try:
        if script:
            sh.ast_node_interactivity = "none"
            sh.autoawait = False
            post.insert(0, _undrawn)
        result = sh.run_cell(src, store_history=True)
    finally:
        if script:
            sh.ast_node_interactivity = interactivity
            sh.autoawait = autoawait
            if _undrawn in post:
                post.remove(_undrawn)
        if hasattr(sh.history_manager, "outputs"):  # IPython 9 keeps each cell's outputs
            _core._module("ipy_history").cell_ended(sh, _core._count)
    if sh.exit_now:
        sh.exit_now = False
        if result.success:
            raise SystemExit  # as sys.exit() in the runner's own mode: a batch stops, ok
    return "ok" if result.success else "error"
