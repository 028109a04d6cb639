"""Generate the test notebooks with the real nbformat package.

Run from this directory:  python3 gen.py
Every *.ipynb here except foreign_* is written by nbformat.write, so the Go
tests check byte-for-byte round trips against Jupyter's own serialisation.
"""

import base64
import json
import random

import nbformat
from nbformat import v4

random.seed(8)  # stable cell ids, so regenerating gives the same files

PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
).decode()


def ids(nb):
    for c in nb.cells:
        c.id = "%08x" % random.getrandbits(32)
    return nb


def write(name, nb, minor=None):
    if minor is not None:
        nb.nbformat_minor = minor
        if minor < 5:
            for c in nb.cells:
                c.pop("id", None)
    nbformat.validate(nb)
    with open(name, "w", encoding="utf-8") as f:
        nbformat.write(nb, f)


def basic():
    nb = v4.new_notebook()
    nb.metadata.kernelspec = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nb.metadata.language_info = {"name": "python", "version": "3.11.7"}
    nb.cells = [
        v4.new_markdown_cell("# Title\n\nSome *text*."),
        v4.new_code_cell("import math\nx = 1\n", execution_count=1),
        v4.new_code_cell(
            "print(x)\nx",
            execution_count=2,
            outputs=[
                v4.new_output("stream", name="stdout", text="1\n"),
                v4.new_output("execute_result", data={"text/plain": "1"}, execution_count=2),
            ],
            metadata={"tags": ["keep"], "collapsed": False},
        ),
        v4.new_raw_cell("raw text\nno newline", metadata={"format": "text/plain"}),
        v4.new_code_cell(""),
    ]
    return ids(nb)


def attachments():
    nb = v4.new_notebook()
    nb.cells = [
        v4.new_markdown_cell(
            "![dot](attachment:dot.png)\n",
            attachments={"dot.png": {"image/png": PNG}},
        ),
        v4.new_code_cell("1 + 1"),
    ]
    return ids(nb)


def widgets():
    nb = v4.new_notebook()
    state = {
        "state": {
            "a1b2": {
                "model_module": "@jupyter-widgets/controls",
                "model_module_version": "2.0.0",
                "model_name": "IntSliderModel",
                "state": {"value": 7, "max": 100, "step": 0.5, "layout": "IPY_MODEL_c3d4"},
            }
        },
        "version_major": 2,
        "version_minor": 0,
    }
    nb.metadata.widgets = {"application/vnd.jupyter.widget-state+json": state}
    nb.cells = [
        v4.new_code_cell(
            "import ipywidgets as w\nw.IntSlider(7)",
            execution_count=1,
            outputs=[
                v4.new_output(
                    "display_data",
                    data={
                        "application/vnd.jupyter.widget-view+json": {
                            "model_id": "a1b2",
                            "version_major": 2,
                            "version_minor": 0,
                        },
                        "text/plain": "IntSlider(value=7)",
                    },
                )
            ],
        )
    ]
    return ids(nb)


def nonascii():
    nb = v4.new_notebook()
    nb.metadata.title = "Überblick — 概要 🚀"
    nb.cells = [
        v4.new_markdown_cell("## Ümlaut, 中文, עברית, emoji 🎉\nline\u2028sep and \u2029 para\n"),
        v4.new_code_cell(
            's = "tab\\there <b>&amp;</b> \\\\ \'q\' \\"dq\\""\nctl = "\x01\x1f\x7f"\n# 日本語コメント\n',
            outputs=[v4.new_output("stream", name="stdout", text="naïve café\r\nprogress 50%\rprogress 100%\n")],
            execution_count=3,
        ),
        v4.new_code_cell("# %% [code] cell:0\n\\# %% escaped already\n# %%\nreal = 1"),
    ]
    return ids(nb)


def images():
    nb = v4.new_notebook()
    svg = '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4">\n<rect width="4" height="4"/>\n</svg>\n'
    nb.cells = [
        v4.new_code_cell(
            "plot()",
            execution_count=4,
            outputs=[
                v4.new_output("display_data", data={"image/png": PNG, "text/plain": "<Figure size 640x480 with 1 Axes>"},
                              metadata={"image/png": {"width": 640, "height": 480}}),
                v4.new_output("display_data", data={"image/svg+xml": svg, "text/plain": "<SVG>"}),
                v4.new_output("execute_result", execution_count=4,
                              data={"application/json": {"a": [1, 2.5, 1e-05, None, True], "b": "x"},
                                    "text/html": "<table>\n<tr><td>1</td></tr>\n</table>",
                                    "text/plain": "{'a': [1, 2.5]}"}),
            ],
        ),
        v4.new_code_cell(
            "1/0",
            execution_count=5,
            outputs=[
                v4.new_output("stream", name="stderr", text="warning: careful\n"),
                v4.new_output("error", ename="ZeroDivisionError", evalue="division by zero",
                              traceback=["\x1b[0;31m---------------------------------------------------------------------------\x1b[0m",
                                         "\x1b[0;31mZeroDivisionError\x1b[0m: division by zero"]),
            ],
        ),
    ]
    nb.metadata.numbers = {"small": 1e-05, "big": 1e+20, "neg": -0.0, "pi": 3.141592653589793, "int": 12345678901234567890}
    return ids(nb)


def future():
    """A notebook from a future nbformat 4.x, whose schema lets it add cell
    types: they must survive a view and apply unchanged, shown read-only."""
    nb = v4.new_notebook()
    nb.cells = [
        v4.new_markdown_cell("# Chart below"),
        nbformat.from_dict({"cell_type": "chart", "metadata": {"height": 300},
                            "source": ["bars(x)\n", "# %% looks like a marker\n"], "spec": {"mark": "bar", "data": [1, 2]}}),
        v4.new_code_cell("x = 1"),
        nbformat.from_dict({"cell_type": "widget panel", "metadata": {}, "state": {"open": True}}),
        nbformat.from_dict({"cell_type": "odd]\"name", "metadata": {}, "source": {"not": "text"}}),
    ]
    return ids(nb)


# Files nbformat reads but its validation rejects (nbformat 5.11 cannot read
# those named unreadable_*): each one must survive a view and apply byte for
# byte, or be refused by both (TestInvalidNotebooksViewApply).
def invalid():
    code = {"cell_type": "code", "execution_count": None, "id": "c0de0001", "metadata": {}, "outputs": [], "source": "x = 1"}
    md = {"cell_type": "markdown", "id": "0d0d0001", "metadata": {}, "source": "text"}

    def nb(*cells, minor=5, **top):
        d = {"cells": list(cells), "metadata": {}, "nbformat": 4, "nbformat_minor": minor}
        d.update(top)
        return d

    def without(cell, *keys):
        return {k: v for k, v in cell.items() if k not in keys}

    cases = {
        "unknown_type_current_minor": nb(md, {"cell_type": "chart", "id": "c4a57001", "metadata": {}, "source": "bars()"}),
        "heading_cell_in_v4": nb({"cell_type": "heading", "level": 2, "id": "4ead0001", "metadata": {}, "source": "Title"}),
        "empty_cell_type": nb({"cell_type": "", "id": "e0000001", "metadata": {}}),
        "unreadable_unknown_type_no_metadata": nb({"cell_type": "chart", "id": "c4a57002"}, minor=99),
        "missing_source": nb(without(code, "source"), without(md, "source")),
        "unreadable_missing_cell_metadata": nb(without(code, "metadata")),
        "code_without_outputs": nb(without(code, "outputs", "execution_count")),
        "markdown_with_outputs": nb(dict(md, outputs=[], execution_count=None)),
        "extra_cell_property": nb(dict(code, colour="blue")),
        "bad_cell_id": nb(dict(code, id="has spaces!")),
        "duplicate_cell_ids": nb(code, dict(code, source="y = 2")),
        "missing_id_in_4_5": nb(without(code, "id")),
        "id_in_4_4": nb(code, minor=4),
        "execution_count_string": nb(dict(code, execution_count="1")),
        "unknown_output_type": nb(dict(code, outputs=[{"output_type": "hologram", "data": {}}])),
        "stream_without_name": nb(dict(code, outputs=[{"output_type": "stream", "text": "hi\n"}])),
        "missing_nbformat_minor": {"cells": [code], "metadata": {}, "nbformat": 4},
        "extra_top_level_key": nb(code, extra={"k": 1}),
        "kernelspec_without_name": nb(code, metadata={"kernelspec": {"display_name": "Python"}}),
        "unreadable_cell_type_number": nb({"cell_type": 3, "id": "00000003", "metadata": {}, "source": "x"}),
        "source_number": nb(dict(code, source=5)),
        "unreadable_cell_metadata_list": nb(dict(code, metadata=[])),
        "outputs_object": nb(dict(code, outputs={})),
    }
    for name, d in cases.items():
        with open("invalid/%s.ipynb" % name, "w", encoding="utf-8") as f:
            f.write(json.dumps(d, indent=1, sort_keys=True, ensure_ascii=False) + "\n")


def empty():
    return v4.new_notebook()


def main():
    write("basic.ipynb", basic())
    write("attachments.ipynb", attachments())
    write("widgets.ipynb", widgets())
    write("nonascii.ipynb", nonascii())
    write("images.ipynb", images())
    write("empty.ipynb", empty())
    write("future_cells.ipynb", future(), minor=99)
    invalid()
    for minor in range(5):
        nb = basic() if minor else v4.new_notebook(cells=[v4.new_code_cell("x = 1"), v4.new_markdown_cell("hi")])
        if minor == 0:
            nb.cells[0].pop("id")
            nb.cells[1].pop("id")
        write("v4.%d.ipynb" % minor, nb, minor=minor)
    # Not nbformat-written: unsorted keys, two-space indent, string sources,
    # no final newline; the Go model must still round trip it unchanged.
    foreign = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {"zeta": 1, "alpha": 2.50},
        "cells": [
            {"source": "print('hi')\nx = 1", "cell_type": "code", "metadata": {"x-extra": {"keep": True}},
             "outputs": [], "execution_count": None, "id": "f0f0f0f0"},
            {"cell_type": "markdown", "id": "e1e1e1e1", "metadata": {}, "source": ["a\n", "b"]},
        ],
    }
    with open("foreign_indent2.ipynb", "w", encoding="utf-8") as f:
        f.write(json.dumps(foreign, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
