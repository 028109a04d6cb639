"""For each SCRIPT NOTEBOOK NDJSON triple on the command line: runs NOTEBOOK
(the script's Jupytext pair) with nbclient + ipykernel and compares every
executed code cell's outputs and execution count with those of
`evalhost run --json SCRIPT` (its NDJSON frames, turned into nbformat
outputs). Exit 0 when all match; otherwise prints each difference."""
import json
import re
import sys

# Before nbformat, nbclient, papermill or jupytext, which import jsonschema:
# without rfc3987_syntax, whose grammar jsonschema's import builds for a
# format check none of them makes (~1.3 s of CPU). testkit.NbformatPrelude.
sys.modules.setdefault("rfc3987_syntax", None)

import nbclient
import nbformat

# %%time prints times that differ from run to run: compare their shape.
TIMES = re.compile(r"[0-9.]+ ?(ns|µs|us|ms|s)\b")


def normal_text(text):
    return TIMES.sub("T", text.replace("\r\n", "\n"))


def coalesce(outputs):
    merged = []
    for out in outputs:
        prev = merged[-1] if merged else None
        if out["output_type"] == "stream" and prev and prev["output_type"] == "stream" and prev["name"] == out["name"]:
            prev["text"] += out["text"]
            continue
        merged.append(dict(out))
    for out in merged:
        if out["output_type"] == "stream":
            out["text"] = normal_text(out["text"])
        if out["output_type"] == "error":
            out.pop("traceback", None)  # colours and frames differ by design
    return merged


def theirs(path):
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(nb, kernel_name="python3", timeout=60).execute()
    cells = []
    for cell in nb.cells:
        if cell.cell_type == "code" and cell.source.strip():
            outs = [{k: v for k, v in o.items() if k != "transient"} for o in cell.outputs]
            cells.append((cell.execution_count, coalesce(json.loads(json.dumps(outs)))))
    return cells


def ours(path):
    cells = {}
    for line in open(path, encoding="utf-8"):
        fr = json.loads(line)
        if "cell" not in fr or fr.get("type") == "cell_end":
            continue
        count, outs = cells.setdefault(fr["cell"], [None, []])
        t = fr["type"]
        if t in ("stdout", "stderr"):
            outs.append({"output_type": "stream", "name": t, "text": fr["data"]})
        elif t == "display":
            outs.append({"output_type": "display_data", "data": fr["bundle"], "metadata": fr.get("metadata", {})})
        elif t == "result":
            outs.append({"output_type": "execute_result", "data": fr["bundle"], "metadata": fr.get("metadata", {}),
                         "execution_count": fr["executionCount"]})
        elif t == "error":
            outs.append({"output_type": "error", "ename": fr["ename"], "evalue": fr["evalue"]})
        elif t == "done":
            cells[fr["cell"]][0] = fr["executionCount"]
    return [(count, coalesce(outs)) for _, (count, outs) in sorted(cells.items())]


bad = 0
args = sys.argv[1:]
for script, notebook, ndjson in zip(args[::3], args[1::3], args[2::3]):
    a, b = ours(ndjson), theirs(notebook)
    if len(a) != len(b):
        bad += 1
        print("%s: evalhost ran %d cells, nbclient %d" % (script, len(a), len(b)))
        continue
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            bad += 1
            print("%s cell %d differs:\n  evalhost: %r\n  nbclient: %r" % (script, i, x, y))
sys.exit(1 if bad else 0)
