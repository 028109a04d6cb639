// Package pysource reads a Python source file's bytes as the interpreter
// does (PEP 263, PEP 3120): a UTF-8 byte order mark, else a coding
// declaration in the first two lines (# -*- coding: latin-1 -*-, vim's
// fileencoding=), else UTF-8. evalhost splits and sends cells as text, so
// a script in another encoding must be decoded before it is split, or its
// non-ASCII text would reach the interpreter as U+FFFD.
//
// [Decode] returns the text, or a *[SyntaxError] whose message is
// python3's for the same file where python3 has one (a byte that is not
// UTF-8 with no declaration; an encoding it does not know). Encodings other
// than UTF-8 and Latin-1 are decoded with golang.org/x/text's IANA index,
// reached from Python's codec names (cp1252, shift_jis, euc_jp, gbk, ...);
// a byte such an encoding cannot decode becomes U+FFFD, where python3
// would refuse the file.
package pysource
