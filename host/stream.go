package host

import (
	"errors"
	"os"

	"github.com/evalhost/evalhost/frames"
)

// pipeSize is the buffer asked for on the runner's pipes: with the default
// 64 KiB a cell printing in bulk waits on the host at every write (1 MiB moved
// bulk output 20-30% faster here). readSize is one raw read from fd 1 or 2:
// since reads are lent, not copied (chunks.go), 64 KiB reads cost 15% more
// CPU for bulk output than 256 KiB.
const (
	pipeSize = 1 << 20
	readSize = 256 << 10
)

// maxCarry bounds the bytes split carries from one read to the next (a
// mark's prefix with its 32-digit nonce, an id, the terminator), with room.
const maxCarry = 512

type evKind uint8

const (
	evText  evKind = iota // raw bytes from fd 1 or 2
	evMark                // a sync mark on fd 1 or 2; text is its id
	evFrame               // a frame from fd 3
	evEOF                 // the reader of fd ended
)

// event is what a reader hands the pump.
type event struct {
	kind  evKind
	fd    int
	text  string
	frame frames.Frame
}

// readRaw turns fd 1 or fd 2 into text and mark events until the pipe ends
// or is closed.
func (p *Process) readRaw(fd int, f *os.File) {
	defer p.wg.Done()
	sc := newMarkScanner(p.nonce)
	pool := p.chunks[fd]
	ci, buf := pool.take()
	var segs []segment
	var carry [maxCarry]byte
	keep := 0 // bytes carried from the last read: a partial mark or rune
	for {
		n, err := f.Read(buf[keep:])
		if n > 0 {
			data := buf[:keep+n]
			segs, keep = sc.split(data, segs[:0])
			if len(segs) == 1 && !segs[0].isMark && &segs[0].text[0] == &buf[0] && keep <= maxCarry {
				// Text alone: lend the chunk (chunks.go), read on into another.
				copy(carry[:], data[len(data)-keep:])
				p.events <- event{kind: evText, fd: fd, text: pool.lend(ci, len(segs[0].text))}
				ci, buf = pool.take()
				copy(buf, carry[:keep])
			} else {
				for _, s := range segs {
					if s.isMark {
						p.events <- event{kind: evMark, fd: fd, text: s.mark}
					} else {
						p.events <- event{kind: evText, fd: fd, text: string(s.text)}
					}
				}
				copy(buf, data[len(data)-keep:])
			}
		}
		if err != nil {
			if keep > 0 {
				p.events <- event{kind: evText, fd: fd, text: string(buf[:keep])}
			}
			p.events <- event{kind: evEOF, fd: fd}
			return
		}
	}
}

// readFrames decodes fd 3. A bad line becomes a warning frame and reading
// goes on; any other error ends the stream.
func (p *Process) readFrames() {
	defer p.wg.Done()
	r := frames.NewReader(p.frR, p.opts.MaxLine)
	for {
		f, err := r.Next()
		var pe *frames.ProtocolError
		switch {
		case err == nil:
			p.events <- event{kind: evFrame, fd: 3, frame: f}
		case errors.As(err, &pe):
			p.events <- event{kind: evFrame, fd: 3, frame: frames.Frame{
				Type:    frames.TypeWarning,
				Message: "runner sent a bad frame line; skipped it: " + err.Error(),
			}}
		default:
			p.events <- event{kind: evEOF, fd: 3}
			return
		}
	}
}
