package frames

import "strings"

// DisplayMIME is the MIME type whose text a renderer shows for a bundle:
// text/markdown, else text/plain, else text/html (as text, [HTMLToText]).
// An empty text/markdown or text/plain is passed over for HTML: the
// protocol's text/plain is empty when the cell gave none (display(bundle,
// raw=True)). "" when none of them is a JSON string.
func (b Bundle) DisplayMIME() string {
	for _, mime := range textPrecedence {
		if p, ok := b.Pieces(mime); ok && p.Len() > 0 {
			return mime
		}
	}
	if _, ok := b.Pieces("text/html"); ok {
		return "text/html"
	}
	for _, mime := range textPrecedence {
		if _, ok := b.Pieces(mime); ok {
			return mime // empty, and shown as such
		}
	}
	return ""
}

// Text precedence for renderers, as the reference renders displays.
var textPrecedence = []string{"text/markdown", "text/plain"}

// DisplayText is the text a renderer shows for a bundle (DisplayMIME's),
// HTML's with its control characters dropped: no sink sanitises HTML, and
// an entity (&#27;) decodes to an escape that would drive the terminal
// showing it. What follows an escape's control bytes stays: a renderer
// with streamsink at hand uses streamsink.DisplayText, which removes each
// sequence whole.
func (b Bundle) DisplayText() string {
	mime := b.DisplayMIME()
	s, _ := b.Text(mime)
	if mime == "text/html" {
		return inert(HTMLToText(s))
	}
	return s
}

// inert drops the C0 controls but tab and newline, DEL and the C1 controls:
// what is left of an escape sequence is printable text.
func inert(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f {
			return -1
		}
		return r
	}, s)
}

// ErrorText is the text a renderer shows for an error frame: its traceback's
// lines, or "Ename: Evalue" when it has none (an exit status, an error the
// host itself reports).
func (f *Frame) ErrorText() string {
	if len(f.Traceback) == 0 {
		return f.Ename + ": " + f.Evalue
	}
	return strings.Join(f.Traceback, "\n")
}
