package serve

import (
	"errors"
	"io"
	"strings"
	"sync"

	"github.com/tidwall/gjson"

	"github.com/evalhost/evalhost/frames"
)

// readResult is one request line, an over-long line's prefix, or the error
// that ended the input (never io.EOF: the channel closes then).
type readResult struct {
	line []byte
	long *frames.ProtocolError
	err  error
}

// readLines feeds r's lines to the returned channel until r ends or stop is
// called. stop does not wait for a Read in progress: the goroutine may sit
// in a read that never returns (a terminal's stdin); it sends nothing once
// stopped and exits when that read returns.
func readLines(r io.Reader, maxLine int) (<-chan readResult, func()) {
	out := make(chan readResult)
	done := make(chan struct{})
	go func() {
		defer close(out)
		fr := frames.NewReader(r, maxLine)
		for {
			var res readResult
			line, err := fr.Line()
			var pe *frames.ProtocolError
			switch {
			case errors.As(err, &pe):
				res.long = pe
			case errors.Is(err, io.EOF):
				return
			case err != nil:
				res.err = err
			default:
				res.line = append([]byte(nil), line...)
			}
			select {
			case out <- res:
			case <-done:
				return
			}
			if res.err != nil {
				return
			}
		}
	}()
	var once sync.Once
	return out, func() { once.Do(func() { close(done) }) }
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
