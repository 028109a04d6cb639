// Package percent splits percent-format scripts (Jupytext, VS Code,
// Spyder) into the code cells a notebook of them would run, as Jupytext
// reads them, and reads them whole into the notebook Jupytext makes of
// them.
//
// Contract:
//   - [SplitScript] cuts a script on cell markers: "# %%" lines ("#%%",
//     "# %%%" sub-cells, indented ones, and Jupytext's "# In[1]:" and
//     "# <codecell>" too); a marker inside a Python string is code. "# %%bash"
//     and the like (no space or "[" after "%%") are not markers.
//   - A marker's text is Jupytext's: a title, then metadata as key=value
//     pairs (values JSON or Python literals, a bare key is null) or as a
//     JSON object. Text Jupytext cannot read as metadata stays in the
//     title. Cell.Tags is metadata.tags; Cell.Metadata is all of it.
//   - "[markdown]", "[md]" and "[raw]" cells are never code. "[sh]",
//     "[bash]" or "[shell]" make a shell cell, "[py]", "[python]" or
//     "[code]" a Python one (evalhost's, not Jupytext's). A cell that is
//     not active in a notebook (an "active-py" tag, active="py") is left
//     out, as Jupytext makes it a raw cell; one active in the notebook
//     only ("active-ipynb", active="ipynb", a frozen cell) is uncommented.
//   - Jupytext's YAML header ("# ---" around "jupyter:") is read by
//     [ReadHeader] and is not code. With it (unless its comment_magics
//     is false as jupytext reads it: Python's truth of the PyYAML value,
//     so "no", 0 and null are false), or with [MagicsOn], magics Jupytext
//     commented out ("# %matplotlib inline", "# !pip install x",
//     "# files = !ls", "# %%time") are uncommented in Python cells.
//   - Text before the first marker is a cell when it holds code; a preamble
//     of only comments (a shebang, a header) is not. Blank cells are
//     dropped. Every kept cell's code ends in exactly one "\n" and carries
//     the 1-based line of its first code line.
//   - A script without any cell marker and without Jupytext's header is a
//     plain script, not a notebook in text form: it is exactly one cell,
//     kept also when empty or only comments (its text as given: python3
//     runs such a file and prints nothing, and so does a caller that runs
//     the cell), and that cell (a Python one) has sessions.Cell.Script set,
//     so it runs as python3 runs the file, showing no expression's value;
//     its code is the text as it is, trailing blank lines and a missing
//     last "\n" kept (python3's compile of the file places an error at its
//     end by them; an empty one is "\n"). A
//     script with a marker, even one that only starts markdown, is a
//     notebook: each cell shows its last expression, and one of no code
//     cells gives none.
//   - With Options.KeepTagged, a cell that does not run (markdown, raw,
//     blank, not active in a notebook) but has one of those tags is kept
//     as a NoRun cell without code, so a caller can place cells by it as
//     in the notebook (papermill injects after a markdown "parameters"
//     cell) before dropping it.
//   - Split never fails: any text is a script. Line ends are kept as given
//     (callers normalise CRLF first if they want to). [CheckFormat] says
//     what Split would read wrongly: a header naming another Jupytext
//     format ([ErrNotPercent]), or whose "jupyter:" section is not YAML or
//     holds a value of a type jupytext cannot use (kernelspec: 3, a
//     format_name that is no string, a kernelspec without the name and
//     display_name nbformat requires) ([ErrBadHeader], naming it), which
//     jupytext refuses. A bad value never drops the rest of the header:
//     [Header] still says what the rest of a YAML section says.
//   - [CheckRun] is CheckFormat for a program that runs the script as
//     python3 runs the file (evalhost run), to which the header is
//     comments: another format is still refused ([ErrNotPercent]), but a
//     header jupytext cannot read is a one-line warning naming the value;
//     the cells are read by the rest of the header, unless it leaves the
//     format untold (the section not YAML, a format_name that is no
//     string: Header.FormatUnknown), when Options.Whole makes the file
//     one cell run as python3 runs it (Script), header and markers the
//     comments they are to python3.
//   - [ReadNotebook] is the other reader: the notebook jupytext 1.19 makes
//     of a .py script (jupytext.read, "jupytext --to ipynb"), every cell,
//     code, markdown and raw, with its source as jupytext gives it
//     (markdown and raw text uncommented, a triple-quoted markdown cell's
//     string, magics uncommented, "%%R" put back in a cell with a language
//     option) and its metadata (the marker's options, title, cell_depth,
//     lines_to_next_cell), the notebook's metadata the header's "jupyter:"
//     section and what jupytext records in metadata.jupytext; the header's
//     other keys are a first raw cell. Its markers are jupytext's, not
//     Split's: "# %%" and whitespace, a bare "# %%", "# In[1]:", "#
//     <codecell>" ("# %%[sh]" is text); its lines are Python's
//     str.splitlines(), its whitespace Python's. A script with a marker and
//     a magic left uncommented is, as jupytext guesses, hydrogen: its
//     commented magics stay comments. [Notebook.Ipynb] is the .ipynb
//     jupytext writes of it. Refused as jupytext refuses them: a header
//     that is not YAML or holds a value jupytext or nbformat's schema
//     cannot use ([ErrBadHeader]), a coding line other than utf-8
//     ([ErrEncoding]), text that is not UTF-8 (ErrEncoding too, naming the
//     first such line and byte), a marker's options jupytext
//     fails on ([ErrBadCell]: tags that are no list of strings, ...).
//     Refused where jupytext would exhaust memory: a "jupyter:" section
//     past 100,000 keys and values once its aliases and merge keys are expanded
//     ([ErrBadHeader]; a "billion laughs" header took 7.8 GB).
//     Refused by design, where jupytext reads another format: a header
//     naming one, or a Jupytext header naming none over a script without a
//     marker (light, to jupytext) ([ErrNotPercent]), a script with neither
//     marker nor Jupytext header ([ErrNoCells]); and a date in the header,
//     which jupytext reads and cannot write into a notebook. Where it
//     differs from jupytext: cell_metadata_filter lists its keys sorted
//     (jupytext in a Python set's order, which changes from run to run);
//     no jupytext configuration file (jupytext.toml) is read; an option
//     value of a Python type JSON has not (bytes, complex, a set) is
//     incorrectly_encoded_metadata (jupytext keeps it, and cannot write
//     the notebook); in a notebook whose kernel is not Python, only "%"
//     magics of a language commented with "#" are read as magics. Tests
//     compare it with jupytext itself on its examples, edge cases and
//     random scripts.
package percent
