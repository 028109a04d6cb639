"""evalhost top-level await: a cell whose code awaits runs on the session's
persistent event loop, as IPython's autoawait runs it. Loaded by the first
such cell.
"""

_core = globals()["_core"]
_loop = None  # the session's event loop


def run(coro):
    """Run a top-level-await cell on the session's persistent event loop."""
    global _loop
    asyncio = _core._own("asyncio")

    if _loop is None or _loop.is_closed():
        _loop = asyncio.new_event_loop()
    asyncio.set_event_loop(_loop)
    task = _loop.create_task(coro)
    try:
        return _loop.run_until_complete(task)
    except BaseException as e:
        if not task.done():
            if isinstance(e, KeyboardInterrupt):
                _at_await(e, task)
            task.cancel()
            try:
                _loop.run_until_complete(task)
            except BaseException:
                pass
            raise e  # a bare raise before 3.11 drops the traceback _at_await gave it
        raise


def _at_await(exc, task):
    """An interrupt that landed in the event loop's wait: give it the cell's
    suspended await chain as its traceback, so it shows the cell's line, not
    only asyncio's selector."""
    try:
        types = _core._own("types")
        stack, c = [], task.get_coro()
        while c is not None:
            f = getattr(c, "cr_frame", None) or getattr(c, "gi_frame", None)
            if f is None:
                break
            stack.append(f)
            c = getattr(c, "cr_await", None) or getattr(c, "gi_yieldfrom", None)
        tb = None
        for f in reversed(stack):
            tb = types.TracebackType(tb, f, f.f_lasti, f.f_lineno)
        if tb is not None:
            exc.with_traceback(tb)
    except Exception:
        pass
