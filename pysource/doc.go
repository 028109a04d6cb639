// Package pysource reads a Python source file's bytes as the interpreter
// that runs it does (PEP 263, PEP 3120): a UTF-8 byte order mark, else a
// coding declaration in the first two lines (# -*- coding: latin-1 -*-,
// vim's fileencoding=), else UTF-8. evalhost splits and sends cells as
// text, so a script in another encoding must be decoded before it is
// split, or its non-ASCII text would reach the interpreter as U+FFFD.
//
// [Decode] reads UTF-8 and Latin-1 itself. Anything else (another codec, a
// byte that is not UTF-8) it has the interpreter read (read.py, run with
// -I -S: one start, only for such files, nothing of the source runs), so
// the codecs are Python's own, as its tokenizer uses them (a codec that is
// not a text encoding, utf-16, or bytes the first 8 KiB read cannot decode
// are an "encoding problem"), and a refusal is a *[SyntaxError] holding
// what that version's python3 FILE prints: 3.8 names the file as given,
// with a File line; 3.9+ its absolute path; a UTF-8 declaration or BOM
// lets a stray byte pass in a comment, and compile() of the bytes refuses
// it elsewhere as the file's run would. A decoding error past the first
// read is an "encoding problem" too, where python3 names the line.
package pysource
