"""merged_outputs(cell): a cell's outputs as the compare scripts compare
them: transient left out, adjacent streams of one name merged (ipykernel
flushes on a timer, so where a stream splits is not the kernel's to keep)."""


def merged_outputs(cell):
    outs = []
    for o in cell.get("outputs", []):
        o = {k: v for k, v in o.items() if k != "transient"}
        if outs and o["output_type"] == "stream" and outs[-1]["output_type"] == "stream" and outs[-1]["name"] == o["name"]:
            outs[-1] = dict(outs[-1], text=outs[-1]["text"] + o["text"])
            continue
        outs.append(o)
    return outs
