package host

import (
	"errors"
	"io"
	"os"
	"sync/atomic"
	"syscall"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/rawio"
)

// rawFile is f read or written with raw system calls when it is a
// non-blocking pipe in the poller, as the runner's pipes are: they do not
// wake the runtime's monitor thread at each cell (package rawio).
func rawFile(f *os.File) io.ReadWriter {
	if r := rawio.New(f); r != nil {
		return r
	}
	return f
}

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
	evText   evKind = iota // raw bytes from fd 1 or 2
	evMark                 // a sync mark on fd 1 or 2; text is its id
	evFrame                // a frame from fd 3
	evEOF                  // the reader of fd ended
	evRead                 // one read of fd 1 or 2: its text and marks, in order
	evIdle                 // the read of fd under way when the pump asked has been handed on
	evFrames               // frames from fd 3 that arrived together
)

// event is what a reader hands the pump.
type event struct {
	kind   evKind
	fd     int
	text   string
	frame  frames.Frame
	parts  []part         // evRead
	frames []frames.Frame // evFrames
}

// part is a piece of one read: text, or a sync mark's id.
type part struct {
	mark bool
	text string
}

// rawState is a raw reader's progress, for the pump's check that it has
// routed every byte written to a pipe before a frame that carries no mark
// for it (settled, pump.go). busy is set before each read of the pipe and
// cleared once what it read is handed on, so a byte the runner saw leave
// the pipe is either routed or behind a busy reader.
type rawState struct {
	busy   atomic.Bool
	notify atomic.Bool // the pump waits: send evIdle when the read under way is handed on
}

// handedOn ends a read: when the pump waits for it, it is told.
func (p *Process) handedOn(fd int) {
	st := &p.raw[fd]
	st.busy.Store(false)
	if st.notify.Swap(false) {
		p.events <- event{kind: evIdle, fd: fd}
	}
}

// rawStream is fd 1 or fd 2 as its reader sees it: the scanner that finds
// its marks, the chunks it reads into and the bytes it carries from one
// read to the next. A read that is text alone is lent to the pump as it was
// read (chunks.go); the next read then takes another chunk, after the read
// was handed on (rawState), since it may wait for one.
type rawStream struct {
	p     *Process
	fd    int
	sc    *markScanner
	pool  *chunks
	ci    int
	buf   []byte // nil once lent
	segs  []segment
	carry [maxCarry]byte // a lent read's kept bytes
	bulk  bool           // the last read was large
	keep  int            // bytes carried from the last read: a partial mark or rune
}

func (p *Process) newRawStream(fd int) *rawStream {
	return &rawStream{p: p, fd: fd, sc: newMarkScanner(p.nonce), pool: p.chunks[fd]}
}

// buffer is where the next read goes: a chunk, behind the carried bytes.
// It waits for a chunk when all are lent.
func (s *rawStream) buffer() []byte {
	if s.buf == nil {
		s.ci, s.buf = s.pool.take(s.bulk)
		copy(s.buf, s.carry[:s.keep])
	}
	return s.buf[s.keep:]
}

// got hands on a read of n bytes into buffer(): its text and marks, in
// order, as one event.
func (s *rawStream) got(n int) {
	s.bulk = n >= firstChunk/2
	if n == 0 {
		return
	}
	data := s.buf[:s.keep+n]
	var segs []segment
	segs, s.keep = s.sc.split(data, s.segs[:0])
	s.segs = segs
	switch {
	case len(segs) == 1 && !segs[0].isMark && &segs[0].text[0] == &s.buf[0] && s.keep <= maxCarry:
		copy(s.carry[:], data[len(data)-s.keep:])
		s.p.events <- event{kind: evText, fd: s.fd, text: s.pool.lend(s.ci, len(segs[0].text))}
		s.buf = nil
	case len(segs) > 0:
		parts := make([]part, len(segs))
		for i, sg := range segs {
			parts[i] = part{mark: sg.isMark, text: sg.mark}
			if !sg.isMark {
				parts[i].text = string(sg.text)
			}
		}
		s.p.events <- event{kind: evRead, fd: s.fd, parts: parts}
	}
	if s.buf != nil {
		copy(s.buf, data[len(data)-s.keep:])
	}
}

// end hands on the carried bytes, which are text at the end of the stream,
// and the end.
func (s *rawStream) end() {
	if s.keep > 0 {
		rest := s.carry[:s.keep]
		if s.buf != nil {
			rest = s.buf[:s.keep]
		}
		s.p.events <- event{kind: evText, fd: s.fd, text: string(rest)}
	}
	s.p.raw[s.fd].busy.Store(false)
	s.p.events <- event{kind: evEOF, fd: s.fd}
}

// readRaw turns fd 1 or fd 2 alone into one event per read, its text and
// marks, until the pipe ends or is closed: fd 1 merged (fd 2 is its pipe),
// and both where there is no ordered reader (order_other.go).
func (p *Process) readRaw(fd int, f *os.File) {
	defer p.wg.Done()
	s := p.newRawStream(fd)
	read := p.rawReader(fd, f)
	for {
		n, err := read(s.buffer())
		s.got(n)
		if err != nil {
			s.end()
			return
		}
		p.handedOn(fd)
	}
}

// rawReader returns f's read for readRaw: it marks the reader busy before
// each read of the pipe (see rawState), and tells a waiting pump when a
// read finds the pipe empty. io.EOF ends the stream.
func (p *Process) rawReader(fd int, f *os.File) func([]byte) (int, error) {
	st := &p.raw[fd]
	rc, err := f.SyscallConn()
	if err != nil {
		return f.Read // not a pollable pipe: nothing to mark
	}
	return func(b []byte) (int, error) {
		for {
			var n int
			var rerr error
			idle := false
			err := rc.Read(func(s uintptr) bool {
				st.busy.Store(true)
				for {
					// An ordinary read, not rawio's: a bulk read copies up to
					// readSize in the kernel, and as a raw call it held its P
					// meanwhile (run | wc -c of 200 MiB: 290 -> 373 ms; the
					// serve print loop ~11% slower). A warm cell that prints
					// nothing never reads here.
					n, rerr = syscall.Read(int(s), b)
					if rerr != syscall.EINTR {
						break
					}
				}
				if rerr == syscall.EAGAIN {
					st.busy.Store(false)
					idle = st.notify.Swap(false)
					return idle // false: wait until the pipe is readable
				}
				return true
			})
			switch {
			case err != nil:
				return 0, err
			case idle:
				p.events <- event{kind: evIdle, fd: fd}
			case rerr != nil:
				return 0, rerr
			case n == 0:
				return 0, io.EOF
			default:
				return n, nil
			}
		}
	}
}

// batch is an empty array for frames read together: one the pump gave
// back, else a new one. Each was ~1.3 KB of garbage per warm cell.
func (p *Process) batch() []frames.Frame {
	select {
	case b := <-p.batches:
		return b
	default:
		return make([]frames.Frame, 0, 4) // a quick cell's started, result, done
	}
}

// giveBatch returns an evFrames array once routed, its frames zeroed so it
// keeps nothing alive.
func (p *Process) giveBatch(b []frames.Frame) {
	clear(b)
	select {
	case p.batches <- b[:0]:
	default:
	}
}

// readFrames decodes fd 3. A bad line becomes a warning frame and reading
// goes on; any other error ends the stream.
func (p *Process) readFrames() {
	defer p.wg.Done()
	r := frames.NewReader(rawFile(p.frR), p.opts.MaxLine)
	var batch []frames.Frame // frames read together go to the pump in one event
	for {
		f, err := r.Next()
		var pe *frames.ProtocolError
		switch {
		case err == nil:
		case errors.As(err, &pe):
			f = frames.Frame{Type: frames.TypeWarning, Message: "runner sent a bad frame line; skipped it: " + err.Error()}
		default:
			if len(batch) > 0 {
				p.events <- event{kind: evFrames, fd: 3, frames: batch}
			}
			p.events <- event{kind: evEOF, fd: 3}
			return
		}
		if len(batch) == 0 && !r.Buffered() {
			p.events <- event{kind: evFrame, fd: 3, frame: f}
			continue
		}
		if batch == nil {
			batch = p.batch()
		}
		batch = append(batch, f)
		if !r.Buffered() {
			p.events <- event{kind: evFrames, fd: 3, frames: batch}
			batch = nil
		}
	}
}
