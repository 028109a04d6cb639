"""compare_papermill.py INPUT OURS THEIRS [papermill flags...]: runs
papermill's CLI on INPUT with the flags into THEIRS and compares it with
OURS (evalhost nb run with the same flags): the same cells in the same
order with the same tags, the injected cell's source, and every code
cell's outputs and execution count. Exit 0 when they match."""
import subprocess
import sys

import nbformat

source, ours_path, theirs_path, flags = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
subprocess.run([sys.executable, "-m", "papermill", source, theirs_path, "--kernel", "python3",
                "--no-progress-bar", "--log-level", "ERROR"] + flags, check=True)
ours = nbformat.read(ours_path, as_version=4)
theirs = nbformat.read(theirs_path, as_version=4)
nbformat.validate(ours)


def view(nb):
    cells = []
    for c in nb.cells:
        outs = []
        for o in c.get("outputs", []):
            o = {k: v for k, v in o.items() if k != "transient"}
            if outs and o["output_type"] == "stream" and outs[-1]["output_type"] == "stream" and outs[-1]["name"] == o["name"]:
                outs[-1] = dict(outs[-1], text=outs[-1]["text"] + o["text"])
                continue
            outs.append(o)
        # papermill gives every cell tags: [], which says what no tags says.
        cells.append((c.cell_type, c.source, c.metadata.get("tags") or None, c.get("execution_count"), outs))
    return cells


a, b = view(ours), view(theirs)
bad = 0
if len(a) != len(b):
    print("evalhost wrote %d cells, papermill %d" % (len(a), len(b)))
    bad += 1
for i, (x, y) in enumerate(zip(a, b)):
    if x != y:
        bad += 1
        print("cell %d differs:\n  evalhost: %r\n  papermill: %r" % (i, x, y))
sys.exit(1 if bad else 0)
