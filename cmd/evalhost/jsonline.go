package main

import (
	"bytes"
	"encoding/json"
)

// jsonLine encodes v as one NDJSON line (newline included) without HTML
// escaping, like frames.AppendJSON: the lines go to programs and agents,
// for whom "<cell 1>" reads better than "\u003ccell 1\u003e". When v cannot
// be encoded it encodes {"type": errType, "error": …} instead.
func jsonLine(v any, errType, errPrefix string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		b.Reset()
		_ = enc.Encode(map[string]string{"type": errType, "error": errPrefix + err.Error()})
	}
	return b.Bytes()
}
