package host

import (
	"strconv"
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

// posMarkNumber parses a position mark's id: posMarkID and the place of
// the frame it goes with ("\x02" + decimal, the runner's), or posMarkID
// alone (a runner that numbers no frames), which counts from seen. ok is
// false for an id that is no position mark.
func posMarkNumber(id string, seen int) (k int, ok bool) {
	if len(id) == 0 || id[0] != posMarkID[0] {
		return 0, false
	}
	if len(id) == 1 {
		return seen + 1, true
	}
	k, err := strconv.Atoi(id[1:])
	if err != nil || k <= 0 {
		return 0, false
	}
	return k, true
}

// settled reports whether everything the runner wrote to the fds in mask
// before the head frame has been routed. Such a frame carries no mark for
// those fds: the runner put nothing on them since their last mark that it
// knows of, and saw them empty (FIONREAD) when it sent the frame, so any
// byte written before it left the pipe by then. A reader that took such
// bytes was busy from before its read until it handed them on (rawState):
// the check waits for each reader busy now to hand its read on (evIdle),
// and routes the events queued now first. Until then it returns false, and
// the pump calls release again when the check is done.
func (r *router) settled(mask uint8) bool {
	if r.settling {
		if r.settleWait != 0 || r.drainLeft > 0 {
			return false
		}
		r.settling = false
		return true
	}
	for fd := 1; fd <= 2; fd++ {
		bit := uint8(fd)
		if mask&bit == 0 || r.eof[fd] {
			continue
		}
		st := &r.p.raw[fd]
		if st.busy.Load() {
			st.notify.Store(true)
			if st.busy.Load() {
				r.settleWait |= bit
			}
		}
	}
	r.drainLeft = len(r.p.events)
	if r.settleWait == 0 && r.drainLeft == 0 {
		return true
	}
	r.settling = true
	return false
}
