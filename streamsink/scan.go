package streamsink

import "encoding/binary"

// plain[b] is true for bytes that pass the sanitiser unchanged in any
// context: printable ASCII, "\t" and "\n".
var plain = func() (t [256]bool) {
	for b := 0x20; b < 0x7f; b++ {
		t[b] = true
	}
	t['\t'], t['\n'] = true, true
	return t
}()

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plainPrefix returns how many leading bytes of p are plain. It tests eight
// bytes at a time and looks at single bytes only in a word that holds a
// byte outside 0x20..0x7e, which for text is mostly a newline.
func plainPrefix(p []byte) int {
	i := 0
	for ; i+8 <= len(p); i += 8 {
		w := binary.LittleEndian.Uint64(p[i:])
		low := (w - 0x20*ones) & ^w & highs // some byte < 0x20
		d := w ^ 0x7f*ones
		del := (d - ones) & ^d & highs // some byte == 0x7f
		if (w&highs)|low|del == 0 {
			continue
		}
		for j := i; j < i+8; j++ {
			if !plain[p[j]] {
				return j
			}
		}
	}
	for ; i < len(p); i++ {
		if !plain[p[i]] {
			return i
		}
	}
	return i
}
