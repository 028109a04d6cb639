package streamsink

import (
	"unicode/utf8"
	"unsafe"
)

// escState is where a sanitiser is inside an escape sequence.
type escState uint8

const (
	ground   escState = iota
	escStart          // after ESC
	escInter          // ESC followed by intermediate bytes (nF)
	csi               // ESC [
	str               // OSC, DCS, SOS, PM, APC body
	strEsc            // ESC inside a string body: ST or a new sequence
)

// Bounds on escape sequences, so that a stray ESC cannot swallow a stream.
const (
	maxCSI = 256
	maxStr = 64 << 10
)

const replacement = "\uFFFD"

// sanitizer turns one stream's raw chunks into clean text. It carries state
// across chunks: an unfinished UTF-8 sequence, an unfinished escape
// sequence, and a "\r" that may be the first half of a CRLF.
type sanitizer struct {
	state  escState
	escLen int
	osc    bool // the string is an OSC, which a newline ends
	ncarry int
	carry  [utf8.UTFMax]byte
	cr     bool
}

// clean reports whether a chunk can pass through unchanged.
func (z *sanitizer) clean(p []byte) bool {
	return z.state == ground && z.ncarry == 0 && !z.cr && plainPrefix(p) == len(p)
}

// append appends the sanitised form of p to dst.
func (z *sanitizer) append(dst, p []byte) []byte {
	i := 0
	if z.ncarry > 0 {
		dst, i = z.finishCarry(dst, p)
		if z.ncarry > 0 {
			return dst
		}
	}
	for i < len(p) {
		if z.state != ground {
			i = z.escape(p, i)
			continue
		}
		if n := plainPrefix(p[i:]); n > 0 {
			dst = z.resolveCR(dst, p[i])
			dst = append(dst, p[i:i+n]...)
			i += n
			continue
		}
		dst, i = z.special(dst, p, i)
	}
	return dst
}

// special handles the non-plain byte at p[i] in the ground state.
func (z *sanitizer) special(dst, p []byte, i int) ([]byte, int) {
	b := p[i]
	switch {
	case b == '\r':
		z.cr = true // consecutive CRs collapse into one
		return dst, i + 1
	case b == 0x1b:
		z.state, z.escLen = escStart, 0
		return dst, i + 1
	case b < utf8.RuneSelf:
		return dst, i + 1 // C0 control or DEL
	}
	r, size := utf8.DecodeRune(p[i:])
	if r == utf8.RuneError && size <= 1 {
		if !utf8.FullRune(p[i:]) {
			z.ncarry = copy(z.carry[:], p[i:])
			return dst, len(p)
		}
		return append(z.resolveCR(dst, 0), replacement...), i + maximalSubpart(p[i:])
	}
	if r < 0xa0 {
		return dst, i + size // C1 control
	}
	j := textRun(p, i+size)
	return append(z.resolveCR(dst, 0), p[i:j]...), j
}

// textRun returns the end of the run of plain ASCII and well-formed
// printable multi-byte runes starting at p[i], so text in scripts other
// than Latin is copied in runs rather than rune by rune.
func textRun(p []byte, i int) int {
	for i < len(p) {
		if c := p[i]; c < utf8.RuneSelf {
			if !plain[c] {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(p[i:])
		if r < 0xa0 || (r == utf8.RuneError && size <= 1) {
			return i
		}
		i += size
	}
	return i
}

// finishCarry completes a UTF-8 sequence split across chunks. It returns
// how many bytes of p it consumed.
func (z *sanitizer) finishCarry(dst, p []byte) ([]byte, int) {
	var buf [2 * utf8.UTFMax]byte
	n := copy(buf[:], z.carry[:z.ncarry])
	take := copy(buf[n:utf8.UTFMax], p)
	seq := buf[:n+take]
	if !utf8.FullRune(seq) {
		z.ncarry = copy(z.carry[:], seq) // still incomplete: p was tiny
		return dst, len(p)
	}
	carried := z.ncarry
	z.ncarry = 0
	r, size := utf8.DecodeRune(seq)
	if r == utf8.RuneError && size <= 1 {
		// One U+FFFD for the maximal subpart, exactly as when the sequence
		// is not split; it may reach into p.
		k := maximalSubpart(seq)
		return append(z.resolveCR(dst, 0), replacement...), max(0, k-carried)
	}
	if r >= 0xa0 {
		dst = append(z.resolveCR(dst, 0), seq[:size]...)
	}
	return dst, size - carried
}

// resolveCR emits a held-back "\r" unless next makes it a CRLF.
func (z *sanitizer) resolveCR(dst []byte, next byte) []byte {
	if z.cr {
		z.cr = false
		if next != '\n' {
			dst = append(dst, '\r')
		}
	}
	return dst
}

// escape consumes bytes of an escape sequence starting at p[i]; it returns
// the index of the first byte it did not consume.
func (z *sanitizer) escape(p []byte, i int) int {
	for i < len(p) && z.state != ground {
		b := p[i]
		z.escLen++
		switch z.state {
		case escStart:
			if !z.escFirst(b) {
				return i // not part of a sequence: reprocess as text
			}
		case escInter:
			if b >= 0x30 && b <= 0x7e {
				z.state = ground
			} else if b < 0x20 || b > 0x2f {
				z.state = ground
				return i
			}
		case csi:
			if !z.csiByte(b) {
				return i
			}
		case str:
			switch {
			case b == 0x07 || b == 0x18 || b == 0x1a:
				z.state = ground
			case b == 0x1b:
				z.state = strEsc
			case b == '\n' && z.osc:
				// An OSC (title, hyperlink) never spans lines; one left
				// unterminated must not swallow the lines after it.
				z.state = ground
				return i
			case z.escLen > maxStr:
				z.state = ground
			}
		case strEsc:
			z.state = ground
			if b != '\\' {
				z.state, z.escLen = escStart, 0
				continue // ESC began a new sequence: reread b
			}
		}
		i++
	}
	return i
}

// escFirst handles the byte after ESC; false means b is not consumed.
func (z *sanitizer) escFirst(b byte) bool {
	switch {
	case b == '[':
		z.state = csi
	case b == ']' || b == 'P' || b == 'X' || b == '^' || b == '_':
		z.state, z.osc = str, b == ']'
	case b == 0x1b:
		z.escLen = 0
	case b >= 0x20 && b <= 0x2f:
		z.state = escInter
	case b >= 0x30 && b <= 0x7e:
		z.state = ground
	default:
		z.state = ground
		return false
	}
	return true
}

// csiByte handles one byte inside a CSI; false means b is not consumed.
func (z *sanitizer) csiByte(b byte) bool {
	switch {
	case b >= 0x40 && b <= 0x7e:
		z.state = ground // final byte
	case b >= 0x20 && b <= 0x3f:
		if z.escLen > maxCSI {
			z.state = ground
		}
	case b == 0x1b:
		z.state, z.escLen = escStart, 0
	case b == 0x18 || b == 0x1a:
		z.state = ground // CAN, SUB cancel the sequence
	default:
		// Another control or a non-ASCII byte: the sequence is broken;
		// keep the byte as text (a newline must not vanish).
		z.state = ground
		return false
	}
	return true
}

// maximalSubpart returns how many bytes at the start of p (which does not
// start a valid rune) become one U+FFFD: a lead byte with the continuation
// bytes that could still have completed it, else one byte. This is
// Unicode's recommended practice, which Python's and browsers' decoders
// follow, so "e\xe2\x82" reads as "e\uFFFD" here as it does there.
func maximalSubpart(p []byte) int {
	b := p[0]
	n, lo, hi := 0, byte(0x80), byte(0xbf)
	switch {
	case b >= 0xc2 && b <= 0xdf:
		n = 2
	case b == 0xe0:
		n, lo = 3, 0xa0
	case b == 0xed:
		n, hi = 3, 0x9f
	case b >= 0xe1 && b <= 0xef:
		n = 3
	case b == 0xf0:
		n, lo = 4, 0x90
	case b >= 0xf1 && b <= 0xf3:
		n = 4
	case b == 0xf4:
		n, hi = 4, 0x8f
	default:
		return 1
	}
	k := 1
	for ; k < n && k < len(p); k++ {
		c := p[k]
		if k == 1 && (c < lo || c > hi) || k > 1 && (c < 0x80 || c > 0xbf) {
			break
		}
	}
	return k
}

// flush ends the stream: an unfinished UTF-8 sequence becomes U+FFFD, an
// unfinished escape sequence is dropped, a held-back "\r" is emitted.
func (z *sanitizer) flush(dst []byte) []byte {
	if z.ncarry > 0 {
		dst = append(z.resolveCR(dst, 0), replacement...) // a truncated sequence is one error
	}
	dst = z.resolveCR(dst, 0)
	*z = sanitizer{}
	return dst
}

// Sanitize returns s as a [Sink] would forward it if s were a whole stream.
func Sanitize(s string) string {
	var z sanitizer
	b := bytesOf(s)
	if z.clean(b) {
		return s
	}
	out := z.append(make([]byte, 0, len(s)), b)
	return string(z.flush(out))
}

// bytesOf views s as bytes without copying; callers must not modify them.
func bytesOf(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
