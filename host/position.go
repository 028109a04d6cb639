package host

import (
	"time"

	"github.com/evalhost/evalhost/frames"
)

// Position marks keep text and rich frames in the order the cell wrote them.
// fd 1, fd 2 and fd 3 are separate pipes, so the host cannot tell from
// arrival order whether text read near a display was written before or after
// it. The runner therefore writes a position mark — a sync mark whose id is
// posMarkID — to fd 1 and to fd 2 right before each frame of an ordered type
// (flushing its streams first). The k-th ordered frame of a cell is
// delivered once the k-th position mark was seen on both descriptors, and
// text read after the k-th mark on a descriptor waits until that frame is
// out. Our runner announces its marks in its ready frame. A runner that
// does not, and writes none, still works: until the process has shown one,
// an ordered frame waits at most posWait (or the cell's end marks), so it
// follows the text read by then.
const posMarkID = "\x02"

// posWait bounds the wait for position marks that may never come.
const posWait = 5 * time.Millisecond

// ordered reports whether a frame of type t is paired with position marks.
func ordered(t frames.Type) bool {
	switch t {
	case frames.TypeDisplay, frames.TypeUpdateDisplay, frames.TypeClearOutput,
		frames.TypeResult, frames.TypeError, frames.TypeInput, frames.TypeSync:
		return true
	}
	return false
}
