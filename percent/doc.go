// Package percent splits percent-format scripts (Jupytext, VS Code,
// Spyder) into cells.
//
// Contract:
//   - [Split] cuts a script on "# %%" lines ("#%%" and "# %%%" too). A
//     "[sh]", "[bash]" or "[shell]" tag makes a shell cell, "[py]",
//     "[python]" or "[code]" a Python cell, "[markdown]"/"[md]" cells are
//     prose and are dropped; the rest of the marker line is the cell's
//     title. "# %%bash" and the like (no space or tag after "%%") are not
//     markers.
//   - Text before the first marker is a cell when it holds code; a preamble
//     of only comments (a shebang, a header) is not. Blank cells are
//     dropped. Every kept cell's code ends in exactly one "\n" and carries
//     the 1-based line of its first code line.
//   - Split never fails: any text is a script. Line ends are kept as given
//     (callers normalise CRLF first if they want to).
package percent
