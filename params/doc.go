// Package params passes parameters to notebooks and percent scripts as
// papermill does.
//
// Contract:
//   - [Resolve] types a command-line value as papermill's -p does: "True",
//     "False", "None", then what Python's int() or float() accepts, else
//     the string; int() reads no more than 4,300 decimal digits (Python
//     3.11's limit), so a longer number is float()'s (inf). [Params.SetRaw]
//     keeps it a string (-r).
//   - [Params.MergeYAML] reads a YAML mapping (-f FILE, -y TEXT) as
//     papermill does with PyYAML's safe loader minus timestamps: YAML 1.1
//     plain scalars (yes/no/on/off are booleans, 0o... is not octal but
//     010 is, 1e5 is a string), anchors and merge keys; a decimal int of
//     more than 4,300 digits is refused, as PyYAML's int() refuses it,
//     naming Python's limit and how to pass it as a string (a value's
//     error: not [ErrNotParameters]), and so is one written in another
//     base (0x..., 010..., 0b..., base 60's 1:30) whose value has that many
//     digits in decimal, as the parameters cell writes it (python3 refuses
//     that literal; papermill's translation of it fails). A
//     document that is
//     not a mapping, a YAML error, or a name that is not a Python
//     identifier is a [*Error] ([ErrBadParameter]) saying what and where;
//     one whose text is no parameters at all (no YAML mapping, -P without
//     NAME:VALUE, a -p or -r NAME that is no identifier, as 8080: perhaps a
//     script's flag) matches [ErrNotParameters] too. A keyword for a name
//     is a name, one Python cannot assign.
//   - Values merge as papermill's CLI merges them: a later value of a name
//     replaces an earlier one in its place. [Params.Source] renders them as
//     papermill's Python translator does without black: "# Parameters\n"
//     then "name = value\n" per name, strings escaped with
//     unicode_escape, floats as Python's repr, nan and infinities as
//     float('nan'), float('inf').
//   - [Params.Metadata] is what papermill records in the notebook's
//     metadata.papermill.parameters, as values notebook.SetMetadata
//     writes (NaN and infinities as floats, which it writes NaN,
//     Infinity, -Infinity as json.dumps does; mapping keys as json.dumps
//     makes them strings).
//   - [InjectNotebook] puts the source into a new code cell tagged
//     "injected-parameters": in place of an existing injected cell, else
//     right after the first cell tagged "parameters", else at the top.
//     [InjectCells] does the same to a percent script's cells.
package params
