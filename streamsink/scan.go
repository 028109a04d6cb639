package streamsink

import (
	"encoding/binary"
	"math/bits"
)

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

// plainPrefix returns how many leading bytes of p are plain. It tests 32
// bytes at a time with a rough test that flags every control byte, and
// finds the first byte that is really not plain (the rough test also flags
// "\n" and "\t") only in a block it flagged.
func plainPrefix(p []byte) int {
	i := 0
	for ; i+32 <= len(p); i += 32 {
		q := p[i : i+32 : i+32]
		w0 := binary.LittleEndian.Uint64(q[0:8])
		w1 := binary.LittleEndian.Uint64(q[8:16])
		w2 := binary.LittleEndian.Uint64(q[16:24])
		w3 := binary.LittleEndian.Uint64(q[24:32])
		if rough(w0)|rough(w1)|rough(w2)|rough(w3) == 0 {
			continue
		}
		for k, w := range [4]uint64{w0, w1, w2, w3} {
			if m := notPlain(w); m != 0 {
				return i + 8*k + bits.TrailingZeros64(m)/8
			}
		}
	}
	for ; i+8 <= len(p); i += 8 {
		if m := notPlain(binary.LittleEndian.Uint64(p[i : i+8])); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(p); i++ {
		if !plain[p[i]] {
			return i
		}
	}
	return i
}

// rough sets the high bit of some byte of w when w has a byte outside
// 0x20..0x7e. Without a byte >= 0x80 the sums carry into no other byte; with
// one, its own high bit is set anyway.
func rough(w uint64) uint64 {
	return (w | ^(w + 0x60*ones) | (w + ones)) & highs
}

// notPlain sets the high bit of exactly those bytes of w that are not plain.
// It works on the low seven bits of each byte, whose sums never carry.
func notPlain(w uint64) uint64 {
	x := w &^ highs
	below := ^(x + 0x60*ones) & highs            // < 0x20
	nl := ^((x ^ '\n'*ones) + 0x7f*ones) & highs // == "\n"
	tab := ^((x ^ '\t'*ones) + 0x7f*ones) & highs
	del := (x + ones) & highs // == 0x7f
	return w&highs | del | below&^(nl|tab)
}
