"""compare_nbclient.py INPUT OURS: runs INPUT with nbclient and ipykernel
(allow_errors, as nb run --allow-errors) and compares every code cell's
outputs and execution count with OURS exactly, text as the kernel wrote it
(ANSI colours, "\r\n"), adjacent streams of one name merged on both sides
(ipykernel flushes on a timer). Exit 0 when they match."""
import sys

# Before nbformat, nbclient, papermill or jupytext, which import jsonschema:
# without rfc3987_syntax, whose grammar jsonschema's import builds for a
# format check none of them makes (~1.3 s of CPU). testkit.NbformatPrelude.
sys.modules.setdefault("rfc3987_syntax", None)

import nbclient
import nbformat
from nboutputs import merged_outputs

source, ours_path = sys.argv[1], sys.argv[2]
theirs = nbformat.read(source, as_version=4)
nbclient.NotebookClient(theirs, kernel_name="python3", timeout=60, allow_errors=True).execute()
ours = nbformat.read(ours_path, as_version=4)
nbformat.validate(ours)


def view(nb):
    cells = []
    for c in nb.cells:
        outs = merged_outputs(c)
        cells.append((c.cell_type, c.get("execution_count"), outs))
    return cells


bad = 0
for i, (x, y) in enumerate(zip(view(ours), view(theirs))):
    if x != y:
        bad += 1
        print("cell %d differs:\n  evalhost: %r\n  nbclient: %r" % (i, x, y))
sys.exit(1 if bad else 0)
