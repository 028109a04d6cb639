"""Executes a notebook with nbclient + ipykernel, as `jupyter nbconvert
--execute` does, and writes the result: the anchor for `evalhost nb run`."""
import sys

import nbclient
import nbformat

nb = nbformat.read(sys.argv[1], as_version=4)
nbclient.NotebookClient(nb, kernel_name="python3", timeout=60).execute()
nbformat.write(nb, sys.argv[2])
