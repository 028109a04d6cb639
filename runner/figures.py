"""evalhost figures in the runner's own mode: the formats matplotlib figures
go out in, as matplotlib-inline's InlineBackend.figure_formats chooses them
for a Jupyter kernel (%config InlineBackend.figure_format = 'retina', the
line many notebooks start with, or set_matplotlib_formats), each
figure's bundle with matplotlib-inline's metadata, and plt.show() in a
script cell. Loaded by the first %config, set_matplotlib_formats, import
of matplotlib.pyplot or cell that leaves a figure open.
"""

import sys

_core = globals()["_core"]

# matplotlib-inline's names; png2x is retina's other name, jpg jpeg's.
_KNOWN = ("png", "retina", "png2x", "jpeg", "jpg", "svg", "pdf")
_formats = ["png"]
_kwargs = {}  # savefig's, beyond the format and dpi: set_matplotlib_formats' **kwargs


def config(args, frame=None):
    """%config in the runner's own mode: InlineBackend.figure_format(s), and
    tab-completion settings (Completer, IPCompleter) accepted as no-ops. A
    value is evaluated in the cell's namespace, as IPython's %config execs
    `cfg.<line>` in user_ns (a papermill parameter may name the format)."""
    UsageError = _core._module("ipy_magics").UsageError
    text = args.strip()
    if text in ("", "InlineBackend"):
        print("InlineBackend.figure_formats = %r" % set(_formats))
        return None
    name, eq, value = text.partition("=")
    name = name.strip()
    if name.split(".")[0] in ("Completer", "IPCompleter") and eq:
        # Notebooks set these for a frontend's tab completion, which cells
        # run here do not have: nothing to do, and no reason to stop.
        print("%%config %s: completion settings do nothing in evalhost's cells; ignored" % name, file=sys.stderr)
        return None
    if name == "InlineBackend.figure_formats" and not eq:
        return set(_formats)  # as IPython's %config Class.trait returns the trait
    if name not in ("InlineBackend.figure_format", "InlineBackend.figure_formats") or not eq:
        raise UsageError("%%config %s: evalhost's own mode sets InlineBackend.figure_format(s) only "
                         "(%s); start the session with IPython mode (--ipython) for the rest of "
                         "IPython's configuration" % (text, ", ".join(_KNOWN)))
    g, loc = (frame.f_globals, frame.f_locals) if frame is not None else (_core._ns, None)
    try:
        v = eval(value.strip(), g, loc)
    except Exception as e:
        raise UsageError("%%config %s: the value %s could not be evaluated: %s: %s"
                         % (text, value.strip(), type(e).__name__, e)) from None
    select(v, "%%config " + text)
    return None


def select(v, what, kwargs=None):
    """Choose the formats v names (a string or a collection of them), as
    matplotlib-inline's select_figure_formats, and the keyword arguments
    each figure's savefig gets (set_matplotlib_formats' **kwargs); what
    says who asked, in errors."""
    UsageError = _core._module("ipy_magics").UsageError
    fmts = [v] if isinstance(v, str) else list(v) if isinstance(v, (set, frozenset, list, tuple)) else []
    bad = [f for f in fmts if type(f) is not str or f.lower() not in _KNOWN]
    if not fmts or bad:
        raise UsageError("%s: supported formats are %s, not %r" % (what, ", ".join(_KNOWN), bad or v))
    fmts = {f.lower() for f in fmts}
    if fmts & {"jpeg", "jpg"}:
        try:
            _core._own("PIL.Image")
        except ImportError:
            # matplotlib-inline refuses it here too, not at every figure
            raise UsageError("%s: JPEG figures need Pillow (pip install pillow)" % what) from None
    _formats[:] = sorted(fmts)
    if kwargs is not None:
        _kwargs.clear()
        _kwargs.update(kwargs)


def bundle(fig):
    """The display bundle and metadata of one figure in the chosen formats,
    as matplotlib-inline makes them (retina: twice the dpi, and half the
    pixel size in the metadata, so it shows at the figure's size), and the
    (format, exception) of each format that failed: as IPython's formatters
    do, one failing format costs only itself."""
    data, meta, failed = {"text/plain": repr(fig)}, {}, []
    if not fig.axes and not fig.lines:
        return data, None, failed  # nothing drawn: IPython's print_figure makes no image
    try:
        background = _needs_background(fig)  # before drawing, as matplotlib-inline asks
    except Exception:
        background = None  # only a hint to the frontend
    if background is not None:
        meta["needs_background"] = background
    for f in _chosen():
        try:
            _render(fig, f, data, meta)
        except Exception as e:
            failed.append((f, e))
    return data, meta or None, failed


def _needs_background(fig):
    """matplotlib-inline's _fetch_figure_metadata: a transparent figure
    whose tick labels are all light, or all dark, needs a background of
    the other kind to be read ("dark" or "light"); else None."""
    colors = sys.modules["matplotlib.colors"]
    if colors.to_rgba(fig.get_facecolor())[3] >= 0.5:
        return None
    light = set()
    for axes in fig.axes:
        for axis in (axes.xaxis, axes.yaxis):
            for label in axis.get_ticklabels():
                r, g, b, _ = colors.to_rgba(label.get_color())
                light.add(r * 0.299 + g * 0.587 + b * 0.114 > 0.5)  # ITU BT.601 luminance, as there
    if len(light) != 1:
        return None
    return "dark" if light.pop() else "light"


def fit(data):
    """Take the largest formats out of a figure's bundle while its frame
    would be over the line limit, which drops a frame whole (a scatter's
    SVG must not cost its PNG); returns the (mime, bytes) taken out."""
    limit = _core._wire.MAX_LINE - 4096  # the frame's other fields
    if sum(map(len, data.values())) < limit // 12:  # ASCII JSON: 12 bytes a character at most
        return []
    q = _core._q
    sizes = {k: len(q(v)) for k, v in data.items() if k != "text/plain"}
    out = []
    while sizes and sum(sizes.values()) > limit:
        k = max(sizes, key=sizes.get)
        out.append((k, sizes.pop(k)))
        del data[k]
    return out


def _chosen():
    """The formats to render, each once: jpg is jpeg, png2x retina, and
    retina's PNG replaces png's (matplotlib-inline registers it last)."""
    fmts = {{"jpg": "jpeg", "png2x": "retina"}.get(f, f) for f in _formats}
    if "retina" in fmts:
        fmts.discard("png")
    return sorted(fmts)


def _render(fig, f, data, meta):
    """One format of fig into data (and meta), savefig's arguments as
    IPython's print_figure makes them, set_matplotlib_formats' over them."""
    io = _core._own("io")
    b2a = _core._own("binascii").b2a_base64
    buf = io.BytesIO()
    kw = {"format": "png" if f == "retina" else f, "bbox_inches": "tight", "dpi": fig.dpi * (2 if f == "retina" else 1)}
    kw.update(_kwargs)
    fig.savefig(buf, **kw)
    raw = buf.getvalue()
    if f == "svg":
        data["image/svg+xml"] = raw.decode("utf-8")
        return
    mime = {"png": "image/png", "retina": "image/png", "jpeg": "image/jpeg", "pdf": "application/pdf"}[f]
    data[mime] = b2a(raw, newline=False).decode("ascii")
    if f == "retina" and raw[12:16] == b"IHDR":
        w, h = int.from_bytes(raw[16:20], "big"), int.from_bytes(raw[20:24], "big")
        meta["image/png"] = {"width": w // 2, "height": h // 2}


def patch_pyplot(mod):
    """plt.show() in a script cell (python3 FILE), under Agg, the backend
    the runner sets: python3 would show nothing there, and an agent asked
    to see the figures, so the open ones go out as display frames and are
    closed, as matplotlib-inline's show sends them. A script's figures left
    open are never sent (cells.py), nor is anything at a notebook cell's
    show(), whose figures go out as the cell ends; another backend (the
    user's MPLBACKEND, a window) shows them itself."""
    orig = mod.show

    def show(*args, **kwargs):
        cur = _core._wire._cur
        if getattr(cur, "script", False) and cur.running and _agg():
            _core._module("display").flush_figures()
            return None
        return orig(*args, **kwargs)

    for attr in ("__name__", "__qualname__", "__doc__", "__module__"):
        setattr(show, attr, getattr(orig, attr, None))
    show.__wrapped__ = orig
    mod.show = show


def _agg():
    mpl = sys.modules.get("matplotlib")
    return mpl is not None and str(mpl.get_backend()).lower() == "agg"
