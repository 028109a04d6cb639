package streamsink

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/evalhost/evalhost/frames"
)

// MetadataKey is the frame metadata key under which [Sink.Frame] records the
// display payloads it moved to the store:
//
//	"metadata": {"evalhost/artifacts": {"image/png": {"mime":"image/png",
//	    "artifact":"artifact://12.png","path":"/…/12.png","bytes":1234567}}}
//
// The MIME entry is removed from the bundle and text/plain gains a line
// "[image/png 1.2 MiB: artifact://12.png]". Binary types (images other than
// SVG, PDF, audio, video) are stored decoded from base64, so the file opens
// as what it is; text is stored as text and JSON values as JSON.
const MetadataKey = "evalhost/artifacts"

// Payload is a display value moved out of a frame into the store.
type Payload struct {
	MIME     string `json:"mime"`
	Artifact string `json:"artifact"`
	Path     string `json:"path"`
	Bytes    int64  `json:"bytes"`
}

var mimeExt = map[string]string{
	"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp",
	"image/svg+xml": "svg", "application/pdf": "pdf", "text/html": "html",
	"text/markdown": "md", "text/latex": "tex", "application/javascript": "js",
	"application/json": "json",
}

// moveLarge moves bundle entries above the inline limit to the store. It
// returns the frame unchanged when nothing moved, and never mutates f's maps.
func (s *Sink) moveLarge(f frames.Frame) frames.Frame {
	if s.opt.Store == nil || s.opt.InlineLimit < 0 || !s.anyLarge(f.Bundle) {
		return f
	}
	var moved []Payload
	var bundle frames.Bundle
	for _, mime := range slices.Sorted(maps.Keys(f.Bundle)) {
		raw := f.Bundle[mime]
		if !s.large(mime, raw) {
			continue
		}
		p, err := s.savePayload(mime, raw)
		if err != nil {
			s.mu.Lock()
			s.note(fmt.Sprintf("[%s display of %s kept inline: %v]", mime, humanBytes(int64(len(raw))), err))
			s.mu.Unlock()
			continue
		}
		if bundle == nil {
			bundle = maps.Clone(f.Bundle)
		}
		delete(bundle, mime)
		moved = append(moved, p)
	}
	if moved == nil {
		return f
	}
	s.mu.Lock()
	s.payloads = append(s.payloads, moved...)
	s.mu.Unlock()
	f.Bundle = bundle
	f.Metadata = withPayloads(f.Metadata, moved)
	bundle["text/plain"] = plainWithRefs(bundle["text/plain"], moved)
	return f
}

// plainWithRefs is the text/plain value with a line naming each moved
// payload after it: the text without one final newline, then the lines
// ("" for a value that is no string). The text is read and written a
// piece at a time, never decoded whole: a large one beside a large image
// is as large as a display gets.
func plainWithRefs(raw json.RawMessage, moved []Payload) json.RawMessage {
	refs := make([]string, len(moved))
	room := 2
	for i, p := range moved {
		refs[i] = fmt.Sprintf("[%s %s: %s]", p.MIME, humanBytes(p.Bytes), p.Artifact)
		room += 2 + 6*len(refs[i]) // "\n", and each byte at its longest escaped
	}
	text, isText := frames.TextPiecesOf(raw)
	if isText {
		room += text.MaxValueLen() // also bounds the text less its last newline
	}
	var v frames.TextValue
	v.Grow(room)
	wrote, held := false, false // held: a newline that may end the text
	for piece := text.Next(); isText && piece != nil; piece = text.Next() {
		if len(piece) == 0 {
			continue
		}
		if held {
			v.Write(newline)
			wrote = true
		}
		if held = piece[len(piece)-1] == '\n'; held {
			piece = piece[:len(piece)-1]
		}
		if len(piece) > 0 {
			v.Write(piece)
			wrote = true
		}
	}
	for _, ref := range refs {
		if wrote {
			v.Write(newline)
		}
		v.Write([]byte(ref))
		wrote = true
	}
	return fitted(v.Value())
}

var newline = []byte{'\n'}

// anyLarge reports whether moveLarge has something to move, before it
// sorts the bundle's keys (two allocations for every result otherwise).
func (s *Sink) anyLarge(b frames.Bundle) bool {
	for mime, raw := range b {
		if s.large(mime, raw) {
			return true
		}
	}
	return false
}

// large says whether a bundle entry goes to the store: text/plain never.
func (s *Sink) large(mime string, raw json.RawMessage) bool {
	return mime != "text/plain" && len(raw) > s.opt.InlineLimit
}

func (s *Sink) savePayload(mime string, raw json.RawMessage) (Payload, error) {
	file, asText := payloadFile(mime, raw)
	id, path, n, err := s.opt.Store.writeWith(file.ext, file.write)
	if errors.Is(err, errNotBase64) { // its file is gone: store the text
		id, path, n, err = s.opt.Store.writeWith(asText.ext, asText.write)
	}
	if err != nil {
		return Payload{}, err
	}
	return Payload{MIME: mime, Artifact: Scheme + id, Path: path, Bytes: n}, nil
}

// payloadWrite is how a bundle value is stored: the file's extension and
// what writes the file.
type payloadWrite struct {
	ext   string
	write func(io.Writer) (int64, error)
}

// errNotBase64 fails the write of a binary type's value that does not
// decode from base64, after what it decoded before the fault.
var errNotBase64 = errors.New("not base64")

// payloadFile returns how to store a bundle value: its raw JSON, or the
// string it holds, decoded from base64 for a binary type. A value of
// hundreds of megabytes is written as it is decoded, never held decoded
// whole, and decoded once: a binary type's value is taken for base64
// until it fails, and its write then fails with errNotBase64, and
// asText stores the string instead.
func payloadFile(mime string, raw json.RawMessage) (file, asText payloadWrite) {
	ext, ok := mimeExt[mime]
	if !ok {
		ext = "json"
	}
	text, isText := frames.TextPiecesOf(raw)
	if !isText {
		return payloadWrite{"json", func(w io.Writer) (int64, error) {
			n, err := w.Write(raw)
			return int64(n), err
		}}, payloadWrite{}
	}
	if !ok {
		ext = "txt"
	}
	asText = payloadWrite{ext, func(w io.Writer) (int64, error) {
		var n int64
		for piece := text.Next(); piece != nil; piece = text.Next() {
			m, err := w.Write(piece)
			if n += int64(m); err != nil {
				return n, err
			}
		}
		return n, nil
	}}
	if !isBinary(mime) {
		return asText, payloadWrite{}
	}
	if !ok {
		ext = "bin"
	}
	b64 := text // a copy: asText reads the text from its start
	return payloadWrite{ext, func(w io.Writer) (int64, error) { return decodeBase64(b64, w) }}, asText
}

// decodeBase64 decodes the text as base64, with "\n", "\r" and " " left
// out, to w; text is a copy, read from its start. It fails with
// errNotBase64 where the text is not base64.
func decodeBase64(text frames.TextPieces, w io.Writer) (int64, error) {
	d := b64Pieces{w: w}
	for piece := text.Next(); piece != nil && d.err == nil; piece = text.Next() {
		d.write(piece)
	}
	return d.close()
}

func isBinary(mime string) bool {
	switch {
	case mime == "image/svg+xml":
		return false
	case strings.HasPrefix(mime, "image/"), strings.HasPrefix(mime, "audio/"),
		strings.HasPrefix(mime, "video/"), mime == "application/pdf":
		return true
	}
	return false
}

// withPayloads adds the moved payloads to the metadata object under
// MetadataKey, keeping what was there.
func withPayloads(meta json.RawMessage, moved []Payload) json.RawMessage {
	obj := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(meta)) > 0 && json.Unmarshal(meta, &obj) != nil {
		obj = map[string]json.RawMessage{"evalhost/original": meta}
	}
	if obj == nil { // the metadata was JSON null
		obj = map[string]json.RawMessage{}
	}
	refs := map[string]Payload{}
	if old, ok := obj[MetadataKey]; ok {
		_ = json.Unmarshal(old, &refs) // a malformed old entry is replaced
	}
	for _, p := range moved {
		refs[p.MIME] = p
	}
	obj[MetadataKey], _ = json.Marshal(refs)
	out, _ := json.Marshal(obj)
	return out
}
