"""evalhost object help: IPython's `obj?`, `obj??`, `?obj` and %pinfo,
%pinfo2, loaded by the first cell that asks.

The rewriter turns a line that is only a dotted name with `?` or `??` before
or after it into a call of pinfo(name, detail). IPython pages the text (a
notebook records none of it); here it is printed, as IPython's terminal
shows it, without colour: the fields IPython shows for the object, each
label padded to the longest. The name is looked up in the cell's namespace
and then builtins, attribute by attribute; of the object's own code only
what IPython's runs too runs: its attribute lookups, and a value's str()
and len().
"""

import builtins

_core = globals()["_core"]


class _Missing(Exception):
    pass


def pinfo(name, detail, frame):
    """Print what IPython's pinfo (detail 0) or pinfo2 (detail 1) shows."""
    name = name.strip()
    try:
        obj = _lookup(name, frame)
    except _Missing:
        print("Object `%s` not found." % name)
        return
    fields = _fields(obj, detail)
    width = max(len(label) for label, _ in fields) + 2
    out = []
    for label, value in fields:
        if "\n" in value:  # a long value starts on a line of its own
            out.append(label + ":\n" + value)
        else:
            out.append((label + ":").ljust(width) + value)
    print("\n".join(out))


def _lookup(name, frame):
    parts = name.split(".")
    if not all(p.isidentifier() for p in parts):
        raise _Missing()
    for scope in (frame.f_locals, frame.f_globals, vars(builtins)):
        if parts[0] in scope:
            obj = scope[parts[0]]
            break
    else:
        raise _Missing()
    for p in parts[1:]:
        try:
            obj = getattr(obj, p)
        except Exception:
            raise _Missing() from None
    return obj


def _fields(obj, detail):
    """IPython's info fields, in its order, those that apply."""
    inspect = _core._own("inspect")
    fields = []
    is_class = inspect.isclass(obj)
    sig = _signature(inspect, obj)
    if sig:
        fields.append(("Init signature" if is_class else "Signature", sig))
    elif not callable(obj):
        fields.append(("Type", type(obj).__name__))
        fields.append(("String form", _short(repr(obj) if isinstance(obj, str) else str(obj))))
        if hasattr(obj, "__len__"):
            try:
                fields.append(("Length", str(len(obj))))
            except Exception:
                pass
    source = _source(inspect, obj) if detail else None
    if source:
        fields.append(("Source", source))
    else:
        doc = _doc(inspect, obj)
        fields.append(("Docstring", doc or "<no docstring>"))
    path = _file(inspect, obj)
    if path:
        fields.append(("File", path))
    if callable(obj) or is_class:
        fields.append(("Type", type(obj).__name__))
    return fields


def _signature(inspect, obj):
    if not callable(obj):
        return ""
    try:
        return getattr(obj, "__name__", "") + str(inspect.signature(obj))
    except (TypeError, ValueError):
        return ""


def _doc(inspect, obj):
    try:
        doc = inspect.getdoc(obj)
    except Exception:
        return ""
    return doc or ""  # an instance's is its class's (inspect.getdoc), as IPython shows it


def _source(inspect, obj):
    try:
        return inspect.getsource(obj).rstrip("\n")
    except (TypeError, OSError):
        return ""


def _file(inspect, obj):
    try:
        return inspect.getsourcefile(obj) or inspect.getfile(obj)
    except (TypeError, OSError):
        return ""


def _short(s, limit=200):
    """IPython's String form: long ones cut in the middle."""
    if len(s) <= limit:
        return s
    return s[: limit // 2 - 3] + " ... " + s[-(limit // 2 - 3):]
