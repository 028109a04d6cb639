"""Runs a notebook with nbclient + ipykernel and compares every cell's outputs
and execution count with an evalhost-executed copy. Exit 0 when they match;
otherwise prints each difference."""
import sys

# Before nbformat, nbclient, papermill or jupytext, which import jsonschema:
# without rfc3987_syntax, whose grammar jsonschema's import builds for a
# format check none of them makes (~1.3 s of CPU). testkit.NbformatPrelude.
sys.modules.setdefault("rfc3987_syntax", None)

import nbclient
import nbformat

source, ours_path = sys.argv[1], sys.argv[2]
theirs = nbformat.read(source, as_version=4)
nbclient.NotebookClient(theirs, kernel_name="python3", timeout=60).execute()
ours = nbformat.read(ours_path, as_version=4)
nbformat.validate(ours)

# ipykernel runs !cmd under a pseudo-terminal, which turns "\n" into "\r\n";
# evalhost passes the command's bytes as written. That is the one intended
# difference, so stream text is compared with line endings normalised.
for cell in theirs.cells:
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            out["text"] = out["text"].replace("\r\n", "\n")


# ipykernel's stream flushes run on a timer, so one print() can land as two
# stream outputs when the machine is busy (seen in CI: "hidden" then " 1\n").
# Front ends render adjacent same-name streams as one, as nbconvert's
# coalesce_streams does; compare them that way on both sides.
def coalesce_streams(nb):
    for cell in nb.cells:
        merged = []
        for out in cell.get("outputs", []):
            prev = merged[-1] if merged else None
            if (out.get("output_type") == "stream" and prev is not None
                    and prev.get("output_type") == "stream"
                    and prev.get("name") == out.get("name")):
                prev["text"] += out["text"]
                continue
            merged.append(out)
        if cell.cell_type == "code":
            cell.outputs = merged


coalesce_streams(theirs)
coalesce_streams(ours)
bad = 0
for i, (a, b) in enumerate(zip(ours.cells, theirs.cells)):
    if a.cell_type != "code":
        continue
    if a.outputs != b.outputs or a.execution_count != b.execution_count:
        bad += 1
        print("cell %d differs:\n  evalhost: %r %r\n  ipykernel: %r %r"
              % (i, a.execution_count, a.outputs, b.execution_count, b.outputs))
# nbclient writes the kernel's language_info (nbconvert --to script reads it).
if ours.metadata.get("language_info") != theirs.metadata.get("language_info"):
    bad += 1
    print("metadata.language_info differs:\n  evalhost: %r\n  ipykernel: %r"
          % (ours.metadata.get("language_info"), theirs.metadata.get("language_info")))
sys.exit(1 if bad else 0)
