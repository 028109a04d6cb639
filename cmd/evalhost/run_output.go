package main

import (
	"io"

	"github.com/evalhost/evalhost/frames"
)

// guardedWriter reports its first failed write: output that can no longer
// be shown ends the run. After it nothing more is written, on either
// stream: once the reader has left (EPIPE, as with | head), as a process
// killed by SIGPIPE prints nothing more; after another failure (a full
// disk), as python3 stops at the write that failed, where what follows it
// here (the interrupt that stops the script, its traceback, the cancelled
// cell's notices) would say the script was interrupted.
type guardedWriter struct {
	w    io.Writer
	in   *interrupts
	slot int // stdout's 0, stderr's 1 (interrupts.writing)
}

func (g guardedWriter) Write(p []byte) (int, error) {
	if g.in.outputGone() {
		return len(p), nil
	}
	g.in.writeStarted(g.slot)
	n, err := g.w.Write(p)
	g.in.writeEnded(g.slot)
	if err != nil {
		g.in.outputLost(g.slot, err)
	}
	return n, err
}

// runRenderer renders a run's frames and cell ends, its own or those the
// background process sends an attached run, as python3 would show them:
// --json's lines, or the human view, whose notices of an exit or a death
// the run dies of too are left out, as python3 says nothing then (in);
// flush shows every frame even without an end line. streams, when set,
// takes the cells' bytes as written: bulk output without a copy per chunk.
func runRenderer(f runFlags, stdout, stderr io.Writer, in *interrupts) (out renderer, streams func(int, frames.Type, []byte), flush func()) {
	if f.json {
		j := newJSONRenderer(stdout)
		return j, nil, j.flush
	}
	h := newHumanRenderer(stdout, stderr, f.imagesDir, f.maxOutput > 0)
	h.pythonExits = !f.ipython
	h.holdNotices = true
	h.diesOf, h.silenced = in.diesOf, in.silenced
	if !h.bounded {
		streams = h.stream
	}
	return h, streams, func() {}
}
