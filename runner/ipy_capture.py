"""evalhost output capture: capture_output, CapturedIO and RichOutput, for
%%capture and the IPython.utils.capture shim; loaded by the first of them.
"""

import io
import sys

_core = globals()["_core"]


class RichOutput:
    """One captured display: .data (MIME bundle) and .metadata; display() shows it again."""

    def __init__(self, data=None, metadata=None, transient=None, update=False, kind="display"):
        self.data = data or {}
        self.metadata = metadata or {}
        self.transient = transient or {}
        self.update = update
        self._kind = kind

    def display(self):
        if self._kind == "clear_output":
            _core._module("display").emit_clear(bool(self.data))
            return
        did = self.transient.get("display_id")
        kind = "update_display" if self._kind == "update_display" else "display"
        _core._module("display").emit_display(kind, self.data, self.metadata, did)

    def _repr_mimebundle_(self, include=None, exclude=None):
        return self.data, self.metadata

    def __repr__(self):
        return "<RichOutput %s>" % ", ".join(self.data) if isinstance(self.data, dict) else "<clear_output>"


class CapturedIO:
    """What %%capture stores: .stdout, .stderr, .outputs; show() (or calling it) replays them."""

    def __init__(self, stdout, stderr, outputs):
        self._stdout, self._stderr, self._outputs = stdout, stderr, outputs

    def __str__(self):
        return self.stdout

    def __repr__(self):
        return "<CapturedIO stdout=%d chars, stderr=%d chars, %d outputs>" % (
            len(self.stdout), len(self.stderr), len(self.outputs))

    @property
    def stdout(self):
        return self._stdout.getvalue() if self._stdout is not None else ""

    @property
    def stderr(self):
        return self._stderr.getvalue() if self._stderr is not None else ""

    @property
    def outputs(self):
        return [RichOutput(*_captured(e)) for e in self._outputs]

    def show(self):
        if self.stdout:
            sys.stdout.write(self.stdout)
            sys.stdout.flush()
        if self.stderr:
            sys.stderr.write(self.stderr)
        for o in self.outputs:
            o.display()

    __call__ = show


def ends_in_semicolon(src):
    """IPython's DisplayHook.semicolon_at_end_of_expression: whether the last
    token of src, past comments and newlines, is ';' (what %%capture reads
    of its body, whatever the statement before it)."""
    tokenize = _core._own("tokenize")
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(src).readline))
    except (tokenize.TokenError, SyntaxError):
        return False  # IPython raises after the body ran; the error was the body's to show
    for tok in reversed(tokens):
        if tok.type in (tokenize.ENDMARKER, tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT):
            continue
        return tok.type == tokenize.OP and tok.string == ";"
    return False


def _captured(entry):
    """A %%capture list entry (kind, bundle, metadata, display_id) as RichOutput arguments."""
    kind, bundle, meta, did = entry
    if kind == "clear_output":
        return (bundle, None, None, False, kind)
    return (bundle, meta, {"display_id": did} if did else None, kind == "update_display", kind)


class capture_output:
    """Context manager capturing sys.stdout/sys.stderr and displays into a CapturedIO."""

    def __init__(self, stdout=True, stderr=True, display=True):
        self.want = stdout, stderr, display

    def __enter__(self):
        self.saved = sys.stdout, sys.stderr, _core._capture
        out = io.StringIO() if self.want[0] else None
        err = io.StringIO() if self.want[1] else None
        _core._flush_std()
        if out is not None:
            sys.stdout = out
        if err is not None:
            sys.stderr = err
        self.entries = []
        if self.want[2]:
            _core._capture = self.entries
        self.io = CapturedIO(out, err, self.entries)
        return self.io

    def __exit__(self, *exc):
        sys.stdout, sys.stderr, _core._capture = self.saved
        return False
