"""evalhost IPython.display bridge, loaded when user code imports IPython.

core's meta-path hook sends the IPython names here. With IPython installed
its display functions are patched (after their module loads, while no real
InteractiveShell runs) to send runner frames; without it, a small IPython /
IPython.display shim is served.
"""

import os
import sys

_core = globals()["_core"]


def shell():
    return _core._module("ipy_shell").shell()


# --- IPython.display without IPython --------------------------------------


class DisplayObject:
    """Base of the IPython.display objects: data, or a file or URL to read it from."""

    _read_flags = "r"

    def __init__(self, data=None, url=None, filename=None, metadata=None):
        if data is not None and hasattr(data, "__fspath__"):
            data = os.fspath(data)
        if isinstance(data, str) and url is None and filename is None:
            if data.startswith(("http://", "https://")):
                url, data = data, None
            elif len(data) < 4096 and "\n" not in data and os.path.isfile(data):
                filename, data = data, None
        self.data, self.url, self.filename = data, url, filename
        self.metadata = dict(metadata) if metadata else {}
        self.reload()

    def reload(self):
        if self.filename is not None:
            with open(self.filename, self._read_flags) as f:
                self.data = f.read()
        elif self.url is not None and getattr(self, "embed", True):
            raw = _core._imports().call(_fetch, self.url)
            self.data = raw if "b" in self._read_flags else raw.decode("utf-8", "replace")

    def _data_and_metadata(self):
        return (self.data, self.metadata) if self.metadata else self.data

    def __repr__(self):
        return "<IPython.core.display.%s object>" % type(self).__name__


def _fetch(url):
    """The bytes at url, urllib's lazy imports the runner's own (imports.py)."""
    with _core._own("urllib.request").urlopen(url) as r:
        return r.read()


class TextDisplayObject(DisplayObject):
    def __init__(self, data=None, url=None, filename=None, metadata=None):
        if isinstance(data, (bytes, bytearray)):
            data = bytes(data).decode("utf-8", "replace")
        super().__init__(data, url, filename, metadata)


class HTML(TextDisplayObject):
    def _repr_html_(self):
        return self._data_and_metadata()


class Markdown(TextDisplayObject):
    def _repr_markdown_(self):
        return self._data_and_metadata()


class Latex(TextDisplayObject):
    def _repr_latex_(self):
        return self._data_and_metadata()


class Math(TextDisplayObject):
    def _repr_latex_(self):
        s = r"$\displaystyle %s$" % (self.data or "").strip("$")
        return (s, self.metadata) if self.metadata else s


class SVG(DisplayObject):
    _read_flags = "rb"

    def _repr_svg_(self):
        data = self.data
        if isinstance(data, (bytes, bytearray)):
            data = bytes(data).decode("utf-8", "replace")
        i = data.find("<svg") if data else -1
        data = data[i:] if i > 0 else data  # drop an XML prolog, as IPython does
        return (data, self.metadata) if self.metadata else data


class Javascript(TextDisplayObject):
    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"application/javascript": self.data or ""}, self.metadata


class JSON(DisplayObject):
    """JSON data shown as a tree by front ends that render application/json."""

    def __init__(self, data=None, url=None, filename=None, expanded=False, metadata=None, root="root", **kwargs):
        meta = {"expanded": expanded, "root": root}
        if metadata:
            meta.update(metadata)
        meta.update(kwargs)
        self._json_meta = meta
        if isinstance(data, str) and url is None and filename is None and not os.path.isfile(data):
            data = _core._own("json").loads(data)
        super().__init__(data, url, filename)

    def reload(self):
        super().reload()
        if isinstance(self.data, str) and (self.filename or self.url):
            self.data = _core._own("json").loads(self.data)

    def _repr_json_(self):
        return self.data, self._json_meta


_IMAGE_TYPES = {"png": "image/png", "jpeg": "image/jpeg", "jpg": "image/jpeg", "gif": "image/gif",
                "webp": "image/webp", "svg": "image/svg+xml"}


class Image(DisplayObject):
    """A PNG, JPEG, GIF or WebP image from bytes, a file or a URL (embedded unless a URL)."""

    _read_flags = "rb"

    def __init__(self, data=None, url=None, filename=None, format=None, embed=None, width=None, height=None,
                 retina=False, unconfined=False, metadata=None, alt=None):
        if isinstance(data, str) and data.startswith(("http://", "https://")) and url is None:
            url, data = data, None
        if embed is None:
            embed = url is None
        self.embed = embed
        self.width, self.height, self.retina, self.unconfined, self.alt = width, height, retina, unconfined, alt
        source = filename or url or (data if isinstance(data, str) else None)
        if format is None and source:
            ext = source.rsplit(".", 1)[-1].lower()
            format = ext if ext in _IMAGE_TYPES else None
        super().__init__(data, url, filename, metadata)
        if format is None and isinstance(self.data, (bytes, bytearray)):
            head = bytes(self.data[:12])
            format = ("png" if head.startswith(b"\x89PNG") else "jpeg" if head.startswith(b"\xff\xd8")
                      else "gif" if head.startswith(b"GIF8") else "webp" if head[8:12] == b"WEBP" else None)
        if format is None:
            format = "png"
        if format.lower() not in _IMAGE_TYPES:
            raise ValueError("Image format %r is not supported; use one of %s" % (format, ", ".join(sorted(_IMAGE_TYPES))))
        self.format = format.lower()
        self.mimetype = _IMAGE_TYPES[self.format]

    def _repr_mimebundle_(self, include=None, exclude=None):
        md = {k: v for k, v in (("width", self.width), ("height", self.height), ("alt", self.alt)) if v}
        if self.unconfined:
            md["unconfined"] = True
        md.update(self.metadata)
        if not self.embed:
            attrs = "".join(' %s="%s"' % (k, v) for k, v in md.items() if k in ("width", "height", "alt"))
            return {"text/html": '<img src="%s"%s/>' % (self.url, attrs)}, {}
        return {self.mimetype: self.data}, ({self.mimetype: md} if md else {})


class Pretty(TextDisplayObject):
    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/plain": self.data or ""}, {}


class Code(TextDisplayObject):
    def __init__(self, data=None, url=None, filename=None, language=None):
        self.language = language
        super().__init__(data, url, filename)

    def _repr_mimebundle_(self, include=None, exclude=None):
        html = _core._own("html")
        return {"text/html": "<pre>%s</pre>" % html.escape(self.data or ""), "text/plain": self.data or ""}, {}


class IFrame:
    def __init__(self, src, width, height, extras=None, **kwargs):
        self.src, self.width, self.height = src, width, height
        self.extras = list(extras or ()) + ['%s="%s"' % kv for kv in kwargs.items()]

    def _repr_html_(self):
        return '<iframe width="%s" height="%s" src="%s" frameborder="0" allowfullscreen %s></iframe>' % (
            self.width, self.height, self.src, " ".join(self.extras))


class FileLink:
    def __init__(self, path, url_prefix="", result_html_prefix="", result_html_suffix="<br>"):
        self.path, self.url_prefix = os.fspath(path), url_prefix
        self.prefix, self.suffix = result_html_prefix, result_html_suffix

    def _repr_html_(self):
        p = _core._own("html").escape(self.path)
        return '%s<a href="%s%s" target="_blank">%s</a>%s' % (self.prefix, self.url_prefix, p, p, self.suffix)

    def __repr__(self):
        return os.path.abspath(self.path)


def _display_as(mime):
    def show(*objs, raw=False, metadata=None):
        if raw:
            for o in objs:
                _core.display({mime: o}, raw=True, metadata={mime: metadata} if metadata else None)
        else:
            _core.display(*objs, include=[mime], metadata={mime: metadata} if metadata else None)

    show.__name__ = "display_" + mime.split("/")[-1].replace("svg+xml", "svg")
    return show


def publish_display_data(data, metadata=None, source=None, *, transient=None, **kwargs):
    shell().display_pub.publish(data, metadata, transient=transient, update=kwargs.get("update", False))


def _display_api():
    """The names IPython.display offers, bound to the runner."""
    api = {
        "display": _core.display, "update_display": _core.update_display, "clear_output": _core.clear_output,
        "DisplayHandle": _core._module("display").DisplayHandle, "publish_display_data": publish_display_data,
        "DisplayObject": DisplayObject, "TextDisplayObject": TextDisplayObject, "HTML": HTML, "Markdown": Markdown,
        "Latex": Latex, "Math": Math, "SVG": SVG, "Javascript": Javascript, "JSON": JSON, "Image": Image,
        "Pretty": Pretty, "Code": Code, "IFrame": IFrame, "FileLink": FileLink,
    }
    for name, mime in (("html", "text/html"), ("markdown", "text/markdown"), ("svg", "image/svg+xml"),
                       ("png", "image/png"), ("jpeg", "image/jpeg"), ("json", "application/json"),
                       ("latex", "text/latex"), ("javascript", "application/javascript"),
                       ("pretty", "text/plain"), ("pdf", "application/pdf")):
        api["display_" + name] = _display_as(mime)
    return api


_SHIM = {
    "IPython": None,
    "IPython.display": "display",
    "IPython.core": None,
    "IPython.core.display": "display",
    "IPython.core.display_functions": "display",
    "IPython.core.getipython": None,
    "IPython.utils": None,
    "IPython.utils.capture": "capture",
}


class _ShimLoader:
    """Builds the IPython shim modules (used only when IPython is not installed)."""

    @staticmethod
    def create_module(spec):
        return None

    @staticmethod
    def exec_module(module):
        name = module.__name__
        kind = _SHIM.get(name)
        if name in ("IPython", "IPython.core", "IPython.utils"):
            module.__path__ = []
        module.__doc__ = "evalhost's stand-in for %s (IPython is not installed)" % name
        if kind == "display":
            module.__dict__.update(_display_api())
        elif kind == "capture":
            cap = _core._module("ipy_capture")
            module.__dict__.update(capture_output=cap.capture_output, CapturedIO=cap.CapturedIO, RichOutput=cap.RichOutput)
        if name in ("IPython", "IPython.core.getipython"):
            module.get_ipython = _core.get_ipython
        if name == "IPython":
            module.__version__ = "0.0.0+evalhost.shim"
            module.version_info = (0, 0, 0, "evalhost-shim")
            module.evalhost_shim = True


def _patch_display_functions(mod):
    """Real IPython: its display functions send runner frames while no IPython shell runs."""
    orig = {n: getattr(mod, n) for n in ("display", "clear_output", "publish_display_data")}

    def display(*objs, **kwargs):
        if _shell_running():
            return orig["display"](*objs, **kwargs)
        h = _core.display(*objs, **kwargs)
        return mod.DisplayHandle(h.display_id) if h is not None else None

    def clear_output(wait=False):
        if _shell_running():
            return orig["clear_output"](wait)
        _core._module("display").emit_clear(bool(wait))

    def publish(data, metadata=None, source=None, *, transient=None, **kwargs):
        if _shell_running():
            return orig["publish_display_data"](data, metadata, transient=transient, **kwargs)
        publish_display_data(data, metadata, transient=transient, **kwargs)

    for n, fn in (("display", display), ("clear_output", clear_output), ("publish_display_data", publish)):
        fn.__name__, fn.__doc__, fn.__wrapped__ = n, orig[n].__doc__, orig[n]
        setattr(mod, n, fn)


def _patch_getipython(mod):
    orig = mod.get_ipython

    def get_ipython():
        return orig() or shell()

    get_ipython.__doc__ = orig.__doc__
    mod.get_ipython = get_ipython


def _patch_backend_inline(mod):
    """matplotlib-inline's set_matplotlib_formats chooses the own mode's
    figure formats, as %config InlineBackend does (its own would make an
    InteractiveShell, whose formatters the runner never uses, and after
    which display() went to that shell: nothing was shown)."""
    orig_formats, orig_close = mod.set_matplotlib_formats, mod.set_matplotlib_close

    def set_matplotlib_formats(*formats, **kwargs):
        if _shell_running():
            return orig_formats(*formats, **kwargs)
        _core._module("figures").select(formats, "set_matplotlib_formats%r" % (formats,), kwargs)

    def set_matplotlib_close(close=True):
        if _shell_running():
            return orig_close(close)
        if not close:
            print("set_matplotlib_close(False): evalhost's own mode closes figures after each cell; "
                  "ignored (--ipython keeps them open)", file=sys.stderr)

    for fn, orig in ((set_matplotlib_formats, orig_formats), (set_matplotlib_close, orig_close)):
        fn.__doc__, fn.__wrapped__ = orig.__doc__, orig
        setattr(mod, orig.__name__, fn)


def _shell_running():
    m = sys.modules.get("IPython.core.interactiveshell")
    return m is not None and m.InteractiveShell.initialized()


class _PatchingLoader:
    """Wraps a real IPython module's loader: runs it, then patches the module."""

    def __init__(self, loader, patch):
        self._loader, self._patch = loader, patch

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        self._patch(module)

    def __getattr__(self, name):
        return getattr(self._loader, name)


def _patch_pyplot(mod):
    _core._module("figures").patch_pyplot(mod)


# matplotlib.pyplot is not IPython's: patched whether IPython or the shim is there.
_PATCHES = {"IPython.core.display_functions": _patch_display_functions, "IPython.core.getipython": _patch_getipython,
            "matplotlib_inline.backend_inline": _patch_backend_inline, "matplotlib.pyplot": _patch_pyplot}


def find_spec(name, path=None, target=None):
    """core's meta-path hook: a shim without IPython, patches with it. The
    user's import: IPython is searched for where a cell's imports are."""
    machinery = _core._own("importlib.machinery")
    ModuleSpec, PathFinder = machinery.ModuleSpec, machinery.PathFinder

    shim = sys.modules.get("IPython")
    if name == "IPython":
        if PathFinder.find_spec(name, path) is not None:
            return None  # the real one: the path finder after us loads it
    elif name == "matplotlib.pyplot" or shim is None or not getattr(shim, "evalhost_shim", False):
        patch = _PATCHES.get(name)
        spec = PathFinder.find_spec(name, path) if patch is not None else None
        if spec is not None and spec.loader is not None:
            spec.loader = _PatchingLoader(spec.loader, patch)
        return spec
    if name not in _SHIM:
        return None
    return ModuleSpec(name, _ShimLoader, is_package=name in ("IPython", "IPython.core", "IPython.utils"))
