package serve

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/plural"
)

// Request lines are read by one goroutine at a time, which dispatches each
// line itself: a preempted op is answered there, in line order. A handled op
// (eval, reset) is run by the goroutine that read it, once it has taken the
// request's place in its session's queue and handed the reading on to a
// goroutine parked after running an earlier request (whose stack has grown
// already), or to a new one. A warm eval thus goes from its line to its
// interpreter without a hand-off between goroutines (each cost a thread
// wake-up), and a cancel, ping or tool_result behind it is still read at
// once. The loop is internal/handoff's Relay; its goroutines are counted in
// s.wg from the dispatch of a handled op until they read again or exit.

// readUntilWork reads and dispatches request lines until one leaves work to
// run, which it returns, or until the input ends, a shutdown line, or the
// server stops taking requests (nil); the reader that meets the end reports
// it on s.readEnd.
func (s *Server) readUntilWork() func() {
	for {
		line, err := s.in.Line()
		var pe *frames.ProtocolError
		switch {
		case errors.As(err, &pe):
			if s.tooLong(pe) {
				s.endReading(nil)
				return nil
			}
			continue
		case errors.Is(err, io.EOF):
			s.endReading(nil)
			return nil
		case err != nil:
			s.endReading(err)
			return nil
		}
		// The request outlives the reader's buffer (its work runs while the
		// next reader reads into it): parseRequest copies the line into the
		// string all of a request's values are read from, and dispatch
		// keeps nothing else of it.
		work, stop := s.dispatch(line)
		if stop {
			s.endReading(nil)
			return nil
		}
		if work != nil {
			return work
		}
	}
}

// endReading reports why reading ended; only the first report counts.
func (s *Server) endReading(err error) {
	select {
	case s.readEnd <- err:
	default:
	}
}

// tooLong refuses an over-long line, naming its request when its prefix
// does; it reports whether the server stopped taking requests.
func (s *Server) tooLong(pe *frames.ProtocolError) (stopped bool) {
	s.dispatchMu.Lock()
	defer s.dispatchMu.Unlock()
	if s.stopped {
		return true
	}
	s.reply(RequestError{Error: fmt.Sprintf("line longer than --max-line (%s); split the request or raise the limit", plural.Of(s.cfg.MaxLine, "byte")),
		ID: fieldOfPrefix(pe.Line, "id"), Line: pe.Line, Op: fieldOfPrefix(pe.Line, "op"), Type: TypeRequestError})
	return false
}

// stopDispatch makes every reader stop before its next request: none is
// dispatched once it returns. Parked goroutines exit.
func (s *Server) stopDispatch() {
	s.dispatchMu.Lock()
	s.stopped = true
	s.dispatchMu.Unlock()
	close(s.quit)
}

// fieldOfPrefix reads a request's string field (its "id", its "op") from
// the start of a line too long to read whole, so the client learns which
// request was refused instead of waiting for its end. A value cut off by the
// prefix's end is not guessed.
func fieldOfPrefix(prefix, name string) string {
	v := gjson.Get(prefix, name)
	if v.Type != gjson.String || len(v.Raw) < 2 || !strings.HasSuffix(v.Raw, `"`) || v.Index <= 0 || v.Index+len(v.Raw) >= len(prefix) {
		return ""
	}
	return v.Str
}
