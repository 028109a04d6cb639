"""compare_papermill.py INPUT OURS THEIRS [papermill flags...]: runs
papermill's CLI on INPUT with the flags into THEIRS (a percent script,
INPUT.py, converted first with "jupytext --to ipynb", as its users run
it) and compares it with
OURS (evalhost nb run with the same flags): the same cells in the same
order with the same tags, the injected cell's source, every code cell's
outputs and execution count, and papermill's metadata: the run's
(metadata.papermill: the same members and values but for the output path,
version and times) and each cell's (status, exception), markdown and
blank code cells too: papermill records every cell the run passes.
A run that fails is compared too, without the error marker cells papermill
adds at the top and before the failed cell. Exit 0 when they match."""
import datetime
import subprocess
import sys

# Before nbformat, nbclient, papermill or jupytext, which import jsonschema:
# without rfc3987_syntax, whose grammar jsonschema's import builds for a
# format check none of them makes (~1.3 s of CPU). testkit.NbformatPrelude.
sys.modules.setdefault("rfc3987_syntax", None)

import nbformat
from nboutputs import merged_outputs

source, ours_path, theirs_path, flags = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
pm_input = source
if source.endswith(".py"):
    pm_input = theirs_path + ".input.ipynb"
    subprocess.run([sys.executable, "-m", "jupytext", "--to", "ipynb", "--quiet", source, "-o", pm_input], check=True)
# python -m papermill, without rfc3987_syntax too.
papermill = "import runpy, sys; sys.modules.setdefault('rfc3987_syntax', None); runpy.run_module('papermill', run_name='__main__', alter_sys=True)"
subprocess.run([sys.executable, "-c", papermill, pm_input, theirs_path, "--kernel", "python3",
                "--no-progress-bar", "--log-level", "CRITICAL"] + flags)
ours = nbformat.read(ours_path, as_version=4)
theirs = nbformat.read(theirs_path, as_version=4)
nbformat.validate(ours)
theirs.cells = [c for c in theirs.cells if "papermill-error-cell-tag" not in c.metadata.get("tags", [])]


def view(nb):
    cells = []
    for c in nb.cells:
        outs = merged_outputs(c)
        # papermill gives every cell tags: [], which says what no tags says.
        cells.append((c.cell_type, c.source, c.metadata.get("tags") or None, c.get("execution_count"), outs))
    return cells


def times(where, md):
    """The start, end and duration of md agree with each other; problems."""
    start, end = md.get("start_time"), md.get("end_time")
    if start is None and end is None and md.get("duration") is None:
        return []
    try:
        start, end = datetime.datetime.fromisoformat(start), datetime.datetime.fromisoformat(end)
    except (TypeError, ValueError) as e:
        return ["%s: times %r: %s" % (where, md, e)]
    if start.utcoffset() != datetime.timedelta(0) or end < start or md["duration"] != (end - start).total_seconds():
        return ["%s: times %r" % (where, md)]
    return []


def papermill_metadata(ours, theirs):
    problems = []
    a, b = ours.metadata.get("papermill", {}), theirs.metadata["papermill"]
    if sorted(a) != sorted(b):
        problems.append("metadata.papermill members: evalhost %s, papermill %s" % (sorted(a), sorted(b)))
    for k in ("parameters", "exception", "environment_variables", "default_parameters"):
        if a.get(k) != b.get(k):
            problems.append("metadata.papermill.%s: evalhost %r, papermill %r" % (k, a.get(k), b.get(k)))
    if a.get("input_path") != source or b.get("input_path") != pm_input:
        problems.append("metadata.papermill.input_path: evalhost %r, papermill %r" % (a.get("input_path"), b.get("input_path")))
    if a.get("output_path") != ours_path or not str(a.get("version")).startswith("evalhost "):
        problems.append("metadata.papermill output_path %r, version %r" % (a.get("output_path"), a.get("version")))
    problems += times("metadata.papermill", a)
    for i, (x, y) in enumerate(zip(ours.cells, theirs.cells)):
        mx, my = x.metadata.get("papermill", {}), y.metadata.get("papermill", {})
        if sorted(mx) != sorted(my) or any(mx.get(k) != my.get(k) for k in ("status", "exception")):
            problems.append("cell %d metadata.papermill: evalhost %r, papermill %r" % (i, mx, my))
        problems += times("cell %d" % i, mx)
    return problems


a, b = view(ours), view(theirs)
bad = 0
if len(a) != len(b):
    print("evalhost wrote %d cells, papermill %d" % (len(a), len(b)))
    bad += 1
for i, (x, y) in enumerate(zip(a, b)):
    if x != y:
        bad += 1
        print("cell %d differs:\n  evalhost: %r\n  papermill: %r" % (i, x, y))
for p in papermill_metadata(ours, theirs):
    bad += 1
    print(p)
sys.exit(1 if bad else 0)
