package host

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// TestHeldReleasedInOrder: held text goes out in the order it was held,
// each piece once its epoch's frame is out, as the single list scanned
// whole at each release (the reference here) sent it, for random
// interleavings of the two streams' text, marks and frames.
func TestHeldReleasedInOrder(t *testing.T) {
	for seed := range uint64(200) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			c := &cell{out: make(chan frames.Frame, 4096)}
			r := router{cur: c}
			var ref []heldText // the reference: one list, in held order
			var want, got []string
			refRelease := func(all bool) {
				kept := ref[:0]
				for _, h := range ref {
					if all || h.epoch <= c.posSent {
						want = append(want, h.frame.Data)
					} else {
						kept = append(kept, h)
					}
				}
				ref = kept
			}
			epoch := [2]int{}
			for i := range 400 {
				switch rng.IntN(4) {
				case 0, 1: // text on a stream, behind its newest mark
					s := rng.IntN(2)
					epoch[s] += rng.IntN(2)
					typ := []frames.Type{frames.TypeStdout, frames.TypeStderr}[s]
					h := heldText{epoch: epoch[s], frame: frames.Frame{Type: typ, Data: fmt.Sprint(i)}}
					ref = append(ref, h)
					c.hold(h)
				case 2: // a frame out
					c.posSent += rng.IntN(3)
					refRelease(false)
					r.releaseHeld(false)
				case 3: // the end
					if rng.IntN(20) == 0 {
						refRelease(true)
						r.releaseHeld(true)
					}
				}
			}
			refRelease(true)
			r.releaseHeld(true)
			for len(c.out) > 0 {
				got = append(got, (<-c.out).Data)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("sent %v\nwant %v", got, want)
			}
			if c.heldLen() != 0 || c.heldBytes != 0 {
				t.Errorf("%d pieces, %d bytes still held", c.heldLen(), c.heldBytes)
			}
		})
	}
}
