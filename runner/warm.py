"""evalhost warm-up: imports what the first error and the first clean frame
need (traceback formatting ~3 ms, the FIONREAD ioctl, 3.10-3.12's hints.py
for a NameError's or AttributeError's suggestion) once the runner has
been idle for core's WARM_QUIET: no request came in and none ran. A cell
that comes during the warm-up must not wait for it: the GIL is handed over
within WARM_SWITCH instead of Python's 5 ms switch interval, and the rest
of the warm-up waits for the next quiet spell. Loaded by core's warm-up
thread after its first quiet spell: a one-shot run's cells and its exit
come back to back, so it never loads this or pays for the warm-up (~2.4 ms
of an `evalhost run -c pass`).
"""

import sys

_core = globals()["_core"]
_wire = _core._wire
_own = _core._own

WARM_SWITCH = 0.0001  # the GIL's switch interval while a step runs


def warm(nap, seen):
    """Run the steps, each batch in a quiet spell that began at cell seen
    (core's _quiet, which nap sleeps for). It ends (imports.Lending) where
    a step's imports would take a cell's module of a start-up module's name
    out of sys.modules: a cell may be running beside it."""
    _core._imports().never_lend()
    steps = _steps()
    while True:
        was = sys.getswitchinterval()
        sys.setswitchinterval(WARM_SWITCH)
        fast = sys.getswitchinterval()
        try:
            while steps and _wire._cur is seen:
                steps.pop(0)()
        finally:
            if sys.getswitchinterval() == fast:  # a cell may have set its own
                sys.setswitchinterval(was)
        if not steps:
            return
        seen = _core._quiet(nap)


def _steps():
    """The warm-up in steps of ~0.3-2 ms (imports, leaves first), so a cell
    that comes waits for the one under way only. The runner's own imports
    (_own), formatting too: it is what a first error runs."""
    steps = [lambda: _own("token"), lambda: _own("tokenize"), lambda: _own("linecache"),
             lambda: _own("textwrap"), lambda: _own("traceback"), lambda: _core._imports().call(_format),
             lambda: _own("ast")]
    if (3, 10) <= sys.version_info < (3, 13):  # python3's suggestions (tracebacks' hints.py, ~0.2 ms)
        steps.append(lambda: _core._module("hints"))
    return steps


def _format():
    traceback = _own("traceback")
    _wire._fionread()
    try:
        raise ValueError("warm")
    except ValueError as e:
        _core._module("printer").factory(traceback)(type(e), e, e.__traceback__).format()
        "".join(traceback.format_exception_only(type(e), e))
