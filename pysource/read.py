"""evalhost pysource: a source file's bytes (stdin) read as this
interpreter's python3 FILE reads them, for what Go does not read alone.
argv: the file's name as given, its absolute name (3.9+ names it so),
the declared encoding ("" for none), the declaring line's number (1 or 2),
the offset it starts at and the one just past it (a BOM's bytes not
counted: a BOM and a declaration other than utf-8 are refused). Writes
"T" and the text (UTF-8), or "E" and what python3 prints on stderr as it
refuses the file (it exits 1).

Run with -I -S -W ignore: stdlib only, nothing from the cwd, no warning of
a compile the runner repeats."""

import io
import sys

V = sys.version_info[:2]


def refuse(name, line, msg):
    # 3.8 puts the refusal at FILE, line N (as given); 3.9+ says it alone.
    where = '  File "%s", line %d\n' % (name, line) if V < (3, 9) else ""
    return "E%sSyntaxError: %s\n" % (where, msg)


def not_utf8(name, data):
    """The tokenizer's refusal of the first byte that is not UTF-8, if
    any."""
    try:
        data.decode("utf-8")
        return None
    except UnicodeDecodeError as e:
        at = e.start
    line = data.count(b"\n", 0, at) + 1
    if V == (3, 10):
        line += 1  # 3.10 counts the line after
    url = ("http://python.org/dev/peps/pep-0263/" if V < (3, 9) else
           "https://python.org/dev/peps/pep-0263/" if V < (3, 11) else
           "https://peps.python.org/pep-0263/")
    return refuse(name, line, "Non-UTF-8 code starting with '\\x%02x' in file %s on line %d,"
                  " but no encoding declared; see %s for details" % (data[at], name, line, url))


def compiled(name, data):
    """A UTF-8 source (a BOM, a utf-8 declaration) is not checked
    whole: a byte that is not UTF-8 is refused where the parser meets it
    (a string, a name), as compile() of the bytes refuses it, and passes
    in a comment."""
    try:
        compile(data, name, "exec", dont_inherit=True)
    except Exception as e:  # SyntaxError; 3.12's UnicodeDecodeError in an f-string
        e.__traceback__ = None
        err, sys.stderr = sys.stderr, io.StringIO()
        try:
            sys.__excepthook__(type(e), e, None)
            return "E" + sys.stderr.getvalue()
        finally:
            sys.stderr = err
    return "T" + data.decode("utf-8-sig", "replace")


def decoded(name, data, enc, line, end):
    """The tokenizer opens the file in enc from the declaring line's last
    byte and reads a line: a codec Python lacks, one that is not a text
    encoding, or bytes it cannot decode in that first read (8 KiB) are an
    "encoding problem". A decoding error further on is one too here, where
    python3 names the line."""
    try:
        stream = io.TextIOWrapper(io.BytesIO(data[max(end - 1, 0):]), encoding=enc)
        stream.readline()  # the rest of the declaring line, dropped
        rest = stream.read()
        rest.encode("utf-8")  # a lone surrogate (utf-7's) is no source either
        return "T" + data[:end].decode("utf-8", "replace") + rest  # the head: comments
    except Exception:
        return refuse(name, line, "encoding problem: " + enc)


def main():
    given, absolute, enc = sys.argv[1:4]
    line, start, end = (int(a) for a in sys.argv[4:7])
    name = given if V < (3, 9) else absolute
    data = sys.stdin.buffer.read()
    bom = data.startswith(b"\xef\xbb\xbf")
    if bom:
        if enc and enc != "utf-8":
            out = refuse(name, line, "encoding problem: %s with BOM" % enc)
        else:
            out = compiled(name, data)
    elif not enc:
        out = not_utf8(name, data) or "T" + data.decode("utf-8")
    else:
        out = not_utf8(name, data[:start])  # a line before the declaration is UTF-8
        if out is None:
            out = compiled(name, data) if enc == "utf-8" else decoded(name, data, enc, line, end)
    sys.stdout.buffer.write(out.encode("utf-8", "surrogateescape"))


main()
