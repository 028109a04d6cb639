"""evalhost figures in the runner's own mode: the formats matplotlib figures
go out in, as matplotlib-inline's InlineBackend.figure_formats chooses them
for a Jupyter kernel (%config InlineBackend.figure_format = 'retina', the
line many notebooks start with), and each figure's bundle. Loaded by the
first %config or the first cell that leaves a figure open.
"""

import sys

_core = globals()["_core"]

# matplotlib-inline's names; png2x is retina's other name, jpg jpeg's.
_KNOWN = ("png", "retina", "png2x", "jpeg", "jpg", "svg", "pdf")
_formats = ["png"]


def config(args):
    """%config in the runner's own mode: InlineBackend.figure_format(s), and
    tab-completion settings (Completer, IPCompleter) accepted as no-ops."""
    UsageError = _core._module("ipy_magics").UsageError
    text = args.strip()
    if text in ("", "InlineBackend"):
        print("InlineBackend.figure_formats = %r" % set(_formats))
        return
    name, eq, value = text.partition("=")
    name = name.strip()
    if name.split(".")[0] in ("Completer", "IPCompleter") and eq:
        # Notebooks set these for a frontend's tab completion, which cells
        # run here do not have: nothing to do, and no reason to stop.
        print("%%config %s: completion settings do nothing in evalhost's cells; ignored" % name, file=sys.stderr)
        return
    if name not in ("InlineBackend.figure_format", "InlineBackend.figure_formats") or not eq:
        raise UsageError("%%config %s: evalhost's own mode sets InlineBackend.figure_format(s) only "
                         "(%s); start the session with IPython mode (--ipython) for the rest of "
                         "IPython's configuration" % (text, ", ".join(_KNOWN)))
    try:
        v = _core._own("ast").literal_eval(value.strip())
    except Exception:
        raise UsageError("%%config %s: the value must be a Python literal, as 'svg' or {'png', 'svg'}" % text) from None
    fmts = [v] if isinstance(v, str) else list(v) if isinstance(v, (set, frozenset, list, tuple)) else []
    bad = [f for f in fmts if type(f) is not str or f.lower() not in _KNOWN]
    if not fmts or bad:
        raise UsageError("%%config %s: supported formats are %s, not %r" % (text, ", ".join(_KNOWN), bad or v))
    fmts = {f.lower() for f in fmts}
    if fmts & {"jpeg", "jpg"}:
        try:
            _core._own("PIL.Image")
        except ImportError:
            # matplotlib-inline refuses it here too, not at every figure
            raise UsageError("%%config %s: JPEG figures need Pillow (pip install pillow)" % text) from None
    _formats[:] = sorted(fmts)


def bundle(fig):
    """The display bundle and metadata of one figure in the chosen formats,
    as matplotlib-inline makes them (retina: twice the dpi, and half the
    pixel size in the metadata, so it shows at the figure's size), and the
    (format, exception) of each format that failed: as IPython's formatters
    do, one failing format costs only itself."""
    data, meta, failed = {"text/plain": repr(fig)}, {}, []
    if not fig.axes and not fig.lines:
        return data, None, failed  # nothing drawn: IPython's print_figure makes no image
    for f in _chosen():
        try:
            _render(fig, f, data, meta)
        except Exception as e:
            failed.append((f, e))
    return data, meta or None, failed


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
    io = _core._own("io")
    b2a = _core._own("binascii").b2a_base64
    buf = io.BytesIO()
    if f in ("png", "retina"):
        double = f == "retina"
        fig.savefig(buf, format="png", bbox_inches="tight", dpi=fig.dpi * (2 if double else 1))
        raw = buf.getvalue()
        data["image/png"] = b2a(raw, newline=False).decode("ascii")
        if double and raw[12:16] == b"IHDR":
            w, h = int.from_bytes(raw[16:20], "big"), int.from_bytes(raw[20:24], "big")
            meta["image/png"] = {"width": w // 2, "height": h // 2}
    elif f == "jpeg":
        fig.savefig(buf, format="jpeg", bbox_inches="tight")
        data["image/jpeg"] = b2a(buf.getvalue(), newline=False).decode("ascii")
    elif f == "svg":
        fig.savefig(buf, format="svg", bbox_inches="tight")
        data["image/svg+xml"] = buf.getvalue().decode("utf-8")
    elif f == "pdf":
        fig.savefig(buf, format="pdf", bbox_inches="tight")
        data["application/pdf"] = b2a(buf.getvalue(), newline=False).decode("ascii")
