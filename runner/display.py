"""evalhost rich output: the IPython display protocol (display(), results,
matplotlib figures) as display, update_display and clear_output frames.
Loaded by core on the first display or result.
"""

import io
import os
import sys

_core = globals()["_core"]
_wire = _core._wire
_q = _core._q


def _json_value(v):
    if type(v) is str:
        return _q(v)
    json = _core._own("json")
    try:
        return json.dumps(v, default=repr, separators=(",", ":"), allow_nan=False)
    except ValueError:  # NaN or an infinity, which JSON has no word for
        return json.dumps(_finite(v), default=repr, separators=(",", ":"), allow_nan=False)


def _finite(v):
    """v with its NaN and infinite floats as their repr ("nan", "inf"), as
    jupyter_client's json_clean sends them, rather than the whole output
    lost as invalid JSON."""
    if isinstance(v, float):
        return v if v - v == 0 else repr(v)
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_finite(x) for x in v]
    return v


def _bundle_json(bundle):
    if len(bundle) == 1:  # most results: text/plain alone
        for k, v in bundle.items():
            return "{%s:%s}" % (_q(k), _q(v) if type(v) is str else _json_value(v))
    return "{" + ",".join(_q(k) + ":" + _json_value(v) for k, v in bundle.items()) + "}"


def emit_display(kind, bundle, metadata, display_id):
    """A display or update_display frame, or an entry of %%capture's list."""
    cap = _core._capture
    if cap is not None:
        cap.append((kind, bundle, metadata, display_id))
        return
    _core._flush_std()
    fields = {"bundle": _bundle_json(bundle)}
    if metadata:
        fields["metadata"] = _json_value(metadata)
    if display_id:
        fields["displayId"] = _q(str(display_id))
    _wire._send(_wire._frame(kind, _wire._cur.qid, **fields))


def emit_clear(wait=False):
    """A clear_output frame, or an entry of %%capture's list."""
    cap = _core._capture
    if cap is not None:
        cap.append(("clear_output", wait, None, None))
        return
    _core._flush_std()
    _wire._send(_wire._frame("clear_output", _wire._cur.qid, wait="true" if wait else "false"))


def send_bundle(kind, bundle, meta, count):
    """A result frame (or IPython mode's), or an entry of %%capture's list."""
    cap = _core._capture
    if cap is not None:
        cap.append((kind, bundle, meta, None))
        return
    _core._flush_std()
    line = '{"type":"%s","id":%s,"bundle":%s' % (kind, _wire._cur.qid, _bundle_json(bundle))
    if meta:
        line += ',"metadata":' + _json_value(meta)
    line += ',"executionCount":%s}\n' % count
    # The result is the cell's last frame but its done: they go out together.
    _wire._send(line, hold=kind == "result")

_REPR_METHODS = (
    ("_repr_html_", "text/html"),
    ("_repr_markdown_", "text/markdown"),
    ("_repr_svg_", "image/svg+xml"),
    ("_repr_png_", "image/png"),
    ("_repr_jpeg_", "image/jpeg"),
    ("_repr_json_", "application/json"),
    ("_repr_latex_", "text/latex"),
)
_BINARY = ("image/png", "image/jpeg", "application/pdf")


# Builtin types with no display methods: the usual cell results, formatted
# without probing for the eight _repr_*_ methods (most of a warm 1+1's work).
_PLAIN = _core._module("cells").PLAIN


def method(obj, name):
    """obj's display method name, as IPython's get_real_method finds it: none
    on classes, nor on objects that answer any attribute (mocks, proxies)."""
    if type(obj) in _PLAIN or isinstance(obj, type):
        return None
    try:
        if getattr(obj, "_ipython_canary_method_should_not_exist_", None) is not None:
            return None
        m = getattr(obj, name, None)
    except Exception:
        return None
    return m if callable(m) else None


def _note_repr_failure(obj, name, exc):
    _core._stdio.err.write("display: %s.%s() raised %s: %s\n" % (type(obj).__name__, name, type(exc).__name__, exc))


def _mime_value(mime, v):
    """Return v as it goes on the wire for mime, or None when unusable."""
    if v is None:
        return None
    if isinstance(v, (bytes, bytearray, memoryview)):
        if mime in _BINARY or mime.startswith("image/") and mime != "image/svg+xml":
            return _core._own("binascii").b2a_base64(bytes(v), newline=False).decode("ascii")
        return bytes(v).decode("utf-8", "replace")
    if isinstance(v, str):
        return v
    if mime == "application/json" or mime.endswith("+json"):
        return v if isinstance(v, (dict, list, int, float, bool)) else None
    return None


def _split_md(v):
    if type(v) is tuple and len(v) == 2 and isinstance(v[1], dict):
        return v
    return v, None


def format(obj):
    """The IPython display protocol: (bundle, metadata), text/plain always."""
    if type(obj) in _PLAIN:
        return {"text/plain": repr(obj)}, {}
    bundle, meta = {}, {}
    if not isinstance(obj, type):
        m = method(obj, "_repr_mimebundle_")
        if m is not None:
            try:
                r, md = _split_md(m(include=None, exclude=None))
            except Exception as e:
                _note_repr_failure(obj, "_repr_mimebundle_", e)
                r, md = None, None
            if isinstance(r, dict):
                for mime, v in r.items():
                    v = _mime_value(str(mime), v)
                    if v is not None:
                        bundle[str(mime)] = v
            if md:
                meta.update(md)
        for name, mime in _REPR_METHODS:
            if mime in bundle:
                continue
            m = method(obj, name)
            if m is None:
                continue
            try:
                v, md = _split_md(m())
            except Exception as e:
                _note_repr_failure(obj, name, e)
                continue
            v = _mime_value(mime, v)
            if v is not None:
                bundle[mime] = v
                if md:
                    meta[mime] = md
    if "text/plain" not in bundle:
        bundle["text/plain"] = repr(obj)
    return bundle, meta


class DisplayHandle:
    """Returned by display(..., display_id=...): update or re-show that output."""

    def __init__(self, display_id=None):
        self.display_id = display_id or os.urandom(16).hex()

    def __repr__(self):
        return "<DisplayHandle display_id=%s>" % self.display_id

    def display(self, obj, **kwargs):
        display(obj, display_id=self.display_id, **kwargs)

    def update(self, obj, **kwargs):
        update_display(obj, display_id=self.display_id, **kwargs)


def bundle_of(obj, raw, metadata):
    if raw:
        if not isinstance(obj, dict):
            raise TypeError("display(raw=True) takes MIME bundles (dicts), not %s" % type(obj).__name__)
        # Sent as given, as IPython does: any JSON value under any MIME type
        # (structured types such as application/x-omp-status carry dicts),
        # and no text/plain made up from the dict's repr (the protocol's
        # text/plain is then empty, as the gateway backend sends it).
        bundle = {}
        for mime, v in obj.items():
            if isinstance(v, (str, bytes, bytearray, memoryview)):
                v = _mime_value(str(mime), v)
            if v is not None:
                bundle[str(mime)] = v
        bundle.setdefault("text/plain", "")
        meta = {}
    else:
        bundle, meta = format(obj)
    if metadata:
        meta.update(metadata)
    return bundle, meta


def display(*objs, include=None, exclude=None, metadata=None, transient=None, display_id=None,
            raw=False, clear=False, update=False, **kwargs):
    """Show objects as rich output (the IPython display protocol).

    raw=True takes MIME bundles; display_id=True (or a string) returns a
    DisplayHandle whose update() replaces that output; update=True replaces
    the earlier outputs with display_id; clear=True clears the output first
    (when the new output arrives).
    """
    if not display_id and transient:
        display_id = transient.get("display_id")
    if display_id is True:
        display_id = os.urandom(16).hex()
    if update and not display_id:
        raise TypeError("display(update=True) needs a display_id: the id of the output to replace")
    if clear:
        emit_clear(True)
    kind = "update_display" if update else "display"
    if not objs and display_id:
        emit_display(kind, {"text/plain": ""}, None, display_id)  # a placeholder to update later
    for obj in objs:
        if not raw:
            m = method(obj, "_ipython_display_")
            if m is not None:
                m()
                continue
        bundle, meta = bundle_of(obj, raw, metadata)
        if include or exclude:
            bundle = {k: v for k, v in bundle.items()
                      if k == "text/plain" or (not include or k in include) and not (exclude and k in exclude)}
        emit_display(kind, bundle, meta, display_id)
    if display_id:
        return DisplayHandle(display_id)
    return None


def update_display(obj, *, display_id, **kwargs):
    """Replace every earlier output carrying display_id with obj."""
    kwargs["update"] = True
    display(obj, display_id=display_id, **kwargs)


def flush_figures():
    """Send matplotlib figures left open by the cell, in the formats %config
    InlineBackend chose (PNG by default), then close them."""
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return
    try:
        nums = plt.get_fignums()
        if not nums:
            return
        figures = _core._module("figures")
        for n in nums:
            data, meta, failed = figures.bundle(plt.figure(n))
            for fmt, e in failed:
                _wire._warn("matplotlib figure %d could not be sent as %s: %s: %s" % (n, fmt, type(e).__name__, e), _wire._cur.qid)
            for mime, size in figures.fit(data):
                _wire._warn("matplotlib figure %d was sent without its %s: %d bytes is over the %d-byte line "
                            "limit; savefig it to a file instead" % (n, mime, size, _wire.MAX_LINE), _wire._cur.qid)
            emit_display("display", data, meta, None)
    except Exception as e:
        _wire._warn("matplotlib figures could not be sent: %s: %s" % (type(e).__name__, e), _wire._cur.qid)
    finally:
        try:
            plt.close("all")
        except Exception:
            pass
