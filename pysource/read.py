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


def first_bad(data):
    """The offset of data's first byte that is not UTF-8, or None."""
    try:
        data.decode("utf-8")
        return None
    except UnicodeDecodeError as e:
        return e.start


def line_at(data, at):
    """The number, first offset and bytes of the line holding offset at."""
    start = data.rfind(b"\n", 0, at) + 1
    end = data.find(b"\n", at)
    return data.count(b"\n", 0, at) + 1, start, data[start:] if end < 0 else data[start:end + 1]


def line_text(data, n):
    """Line n (from 1) of data, as the tokenizer shows it."""
    lines = data.split(b"\n")
    return lines[n - 1].decode("utf-8", "replace") if 0 < n <= len(lines) else None


def report(name, line, offset, text, msg):
    """"E" and python3's report of a SyntaxError at the given place."""
    e = SyntaxError(msg, (name, line, offset, text) if offset is None else (name, line, offset, text, line, offset + 1))
    err, sys.stderr = sys.stderr, io.StringIO()
    try:
        sys.__excepthook__(SyntaxError, e, None)
        return "E" + sys.stderr.getvalue()
    finally:
        sys.stderr = err


def not_utf8(name, data):
    """The tokenizer's refusal of the first byte that is not UTF-8, if
    any. 3.14 shows the line and a caret, and names line 1 for line 2
    (it reads line 2 for a declaration with line 1's number)."""
    at = first_bad(data)
    if at is None:
        return None
    line = data.count(b"\n", 0, at) + 1
    if V >= (3, 14):
        n, start, raw = line_at(data, at)
        url = "https://peps.python.org/pep-0263/"
        said = 1 if n == 2 else n
        msg = ("Non-UTF-8 code starting with '\\x%02x' in file %s on line %d, but no encoding"
               " declared; see %s for details" % (data[at], name, said, url))
        head = raw[:at - start].decode("utf-8", "replace")
        return report(name, said, len(head) + 1, raw.decode("utf-8", "replace"), msg)
    if V == (3, 10):
        line += 1  # 3.10 counts the line after
    url = ("http://python.org/dev/peps/pep-0263/" if V < (3, 9) else
           "https://python.org/dev/peps/pep-0263/" if V < (3, 11) else
           "https://peps.python.org/pep-0263/")
    return refuse(name, line, "Non-UTF-8 code starting with '\\x%02x' in file %s on line %d,"
                  " but no encoding declared; see %s for details" % (data[at], name, line, url))


def stray_utf8(name, data, bom):
    """3.14's refusal of a byte that is not UTF-8 in a UTF-8 source (a
    BOM, a utf-8 declaration), wherever it is: "(unicode error)" and the
    decoding error of its line, at that line, or line 2 for line 1 (as
    not_utf8), without a caret."""
    body = data[3:] if bom else data
    at = first_bad(body)
    if at is None:
        return None
    n, start, raw = line_at(body, at)
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as e:
        msg = "(unicode error) %s" % e
    n = max(n, 2)
    return report(name, n, None, line_text(body, n), msg)


def compiled(name, data):
    """A UTF-8 source (a BOM, a utf-8 declaration) is not checked
    whole before 3.14: a byte that is not UTF-8 is refused where the
    parser meets it (a string, a name), as compile() of the bytes refuses
    it, and passes in a comment."""
    if V >= (3, 14):
        out = stray_utf8(name, data, data.startswith(b"\xef\xbb\xbf"))
        if out is not None:
            return out
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
    except Exception as e:
        if V < (3, 14):
            return refuse(name, line, "encoding problem: " + enc)
        # 3.14 says what the codec said, at line 0
        msg = str(e).split(";")[0]  # "'base64' is not a text encoding"
        return "E" + '  File "%s", line 0\nSyntaxError: %s\n' % (name, msg)


def main():
    given, absolute, enc = sys.argv[1:4]
    line, start, end = (int(a) for a in sys.argv[4:7])
    name = given if V < (3, 9) else absolute
    data = sys.stdin.buffer.read()
    bom = data.startswith(b"\xef\xbb\xbf")
    if bom:
        if enc and enc != "utf-8" and V >= (3, 14):
            text = data[3:].split(b"\n")[line - 1].decode("utf-8", "replace")
            out = report(name, line, None, text, "encoding problem: %s with BOM" % enc)
        elif enc and enc != "utf-8":
            out = refuse(name, line, "encoding problem: %s with BOM" % enc)
        else:
            out = compiled(name, data)
    elif not enc:
        out = not_utf8(name, data) or "T" + data.decode("utf-8")
    else:
        out = None
        if V < (3, 14):  # a line before the declaration is UTF-8 (3.14: decoded as declared)
            out = not_utf8(name, data[:start])
        if out is None:
            out = compiled(name, data) if enc == "utf-8" else decoded(name, data, enc, line, end)
    sys.stdout.buffer.write(out.encode("utf-8", "surrogateescape"))


main()
