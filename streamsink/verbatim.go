package streamsink

import "unicode/utf8"

// utf8Fixer is what a Verbatim sink hands back of one stream: the bytes as
// written, except what is not UTF-8, which becomes U+FFFD per maximal
// subpart as Python's decoder (errors="replace") makes it, as the sanitiser
// does. A sequence split across chunks is completed from the next one.
type utf8Fixer struct {
	n     int
	carry [utf8.UTFMax]byte
}

// append appends p, fixed, to dst.
func (f *utf8Fixer) append(dst, p []byte) []byte {
	if f.n > 0 {
		dst, p = f.finishCarry(dst, p)
		if f.n > 0 {
			return dst
		}
	}
	start := 0
	for i := 0; i < len(p); {
		if p[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(p[i:])
		if r != utf8.RuneError || size > 1 {
			i += size
			continue
		}
		dst = append(dst, p[start:i]...)
		if !utf8.FullRune(p[i:]) {
			f.n = copy(f.carry[:], p[i:])
			return dst
		}
		dst = append(dst, replacement...)
		i += maximalSubpart(p[i:])
		start = i
	}
	return append(dst, p[start:]...)
}

// finishCarry completes the carried sequence from p and returns the rest
// of p; f.n stays set when p was too short to complete it.
func (f *utf8Fixer) finishCarry(dst, p []byte) ([]byte, []byte) {
	var buf [2 * utf8.UTFMax]byte
	n := copy(buf[:], f.carry[:f.n])
	take := copy(buf[n:utf8.UTFMax], p)
	seq := buf[:n+take]
	if !utf8.FullRune(seq) {
		f.n = copy(f.carry[:], seq)
		return dst, nil
	}
	carried := f.n
	f.n = 0
	r, size := utf8.DecodeRune(seq)
	if r == utf8.RuneError && size <= 1 {
		// The carried bytes were a valid start, so the subpart holds them.
		return append(dst, replacement...), p[maximalSubpart(seq)-carried:]
	}
	return append(dst, seq[:size]...), p[size-carried:]
}

// flush ends the stream: a truncated sequence is one U+FFFD.
func (f *utf8Fixer) flush(dst []byte) []byte {
	if f.n > 0 {
		dst = append(dst, replacement...)
	}
	f.n = 0
	return dst
}
