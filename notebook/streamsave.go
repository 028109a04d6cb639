package notebook

import (
	"crypto/sha256"
	"hash"
	"io"
)

// A notebook whose last encoding was past maxHeldBytes (a run's big
// outputs) is saved by writing its encoding into the temp file as it is
// made, a spillBytes buffer at a time, hashed on the way for the next
// save's check: a save needs no buffer of the file's size. Saving 300 MB
// of a cell's prints held a 340 MB buffer at each save.

// spillBytes is how much encoding a streamed save buffers before writing.
const spillBytes = 1 << 20

// streams reports whether nb is saved streamed: big, by its last
// encoding or by what its changed cells hold now (a cell that just printed
// 300 MB), and not the file it was parsed from unchanged (whose text is
// written as it is).
func (nb *Notebook) streams() bool {
	if nb.unedited() {
		return false
	}
	if nb.size > maxHeldBytes {
		return true
	}
	size := 0
	for i, c := range nb.cells {
		if enc, ok := nb.cache.at(i, c); ok {
			size += len(enc)
		} else if size += textSize(c, maxHeldBytes-size); size > maxHeldBytes {
			return true
		}
	}
	return size > maxHeldBytes
}

// textSize is the length of v's scalars and keys as written, a lower bound
// of its encoding, counted up to limit.
func textSize(v *value, limit int) int {
	n := len(v.raw)
	for _, e := range v.arr {
		if n > limit {
			return n
		}
		n += textSize(e, limit-n)
	}
	for _, m := range v.obj {
		if n > limit {
			return n
		}
		n += len(m.rawKey) + textSize(m.val, limit-n)
	}
	return n
}

// saveStreamed is save of nb's encoding written as it is made.
func (nb *Notebook) saveStreamed(path string, sync bool) error {
	root := nb.syncedRoot()
	sum := sha256.New()
	var size int64
	write := func(w io.Writer) error {
		e := encoder{indent: nb.layout.indent, newline: nb.layout.newline, buf: make([]byte, 0, spillBytes+64<<10),
			out: &hashingWriter{w: w, sum: sum, n: &size}}
		e.value(root, 0)
		if nb.layout.finalNewline {
			e.buf = append(e.buf, nb.layout.newline...)
		}
		e.spill(0)
		return e.err
	}
	file, err := writeFileWith(path, write, nb.expectedAt(path), sync)
	if err != nil {
		return err
	}
	nb.origin, nb.named = canonical(path), absolute(path)
	nb.held = held{stamp: Stamp{exists: true, size: size, sum: [sha256.Size]byte(sum.Sum(nil))}, file: file}
	nb.cache.drop()
	nb.free, nb.size = nil, int(size)
	return nil
}

// hashingWriter writes to w, hashing and counting what it wrote.
type hashingWriter struct {
	w   io.Writer
	sum hash.Hash
	n   *int64
}

func (h *hashingWriter) Write(p []byte) (int, error) {
	n, err := h.w.Write(p)
	h.sum.Write(p[:n])
	*h.n += int64(n)
	return n, err
}

// spill writes the encoder's buffer out once it holds at least min bytes
// (a streamed encoding; the buffer is the whole encoding otherwise).
func (e *encoder) spill(min int) {
	if e.out == nil || len(e.buf) < min {
		return
	}
	if e.err == nil {
		_, e.err = e.out.Write(e.buf)
	}
	e.buf = e.buf[:0]
}
