package frames

import (
	"encoding/json"
	"maps"
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends f as one JSON object, without a newline. Stream frames
// are the hot path (bulk output), so the encoder is hand-written appends;
// invalid UTF-8 in text becomes U+FFFD, as encoding/json does.
func AppendJSON(dst []byte, f *Frame) []byte {
	dst = append(dst, `{"type":"`...)
	dst = append(dst, f.Type.String()...)
	dst = append(dst, '"')
	if f.ID != "" {
		dst = appendField(dst, "id", f.ID)
	}
	switch f.Type {
	case TypeStdout, TypeStderr:
		dst = appendField(dst, "data", f.Data)
	case TypeDisplay, TypeUpdateDisplay, TypeResult:
		dst = appendBundle(dst, f)
		if f.Type == TypeResult {
			dst = appendInt(dst, "executionCount", f.ExecutionCount)
		}
	case TypeClearOutput:
		dst = appendBool(dst, "wait", f.Wait)
	case TypeError:
		dst = appendField(dst, "ename", f.Ename)
		dst = appendField(dst, "evalue", f.Evalue)
		dst = append(dst, `,"traceback":[`...)
		for i, line := range f.Traceback {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, line)
		}
		dst = append(dst, ']')
		if f.Exit {
			dst = appendBool(dst, "exit", true)
		}
		if f.Reported {
			dst = appendBool(dst, "reported", true)
		}
	case TypeInput:
		dst = appendField(dst, "prompt", f.Prompt)
	case TypeWarning:
		dst = appendField(dst, "message", f.Message)
	case TypeDone:
		dst = appendField(dst, "status", f.Status)
		dst = appendInt(dst, "executionCount", f.ExecutionCount)
		dst = appendBool(dst, "cancelled", f.Cancelled)
		if f.Exit {
			dst = appendBool(dst, "exit", true)
			if f.ExitStatus != 0 {
				dst = appendInt(dst, "exitStatus", f.ExitStatus)
			}
			if f.ExitPrints {
				dst = appendField(dst, "exitMessage", f.ExitMessage)
			}
		}
	case TypeReady:
		dst = appendField(dst, "runner", f.Runner)
		dst = appendField(dst, "python", f.Python)
		dst = appendInt(dst, "pid", f.PID)
		dst = appendField(dst, "executable", f.Executable)
		if f.Marks {
			dst = appendBool(dst, "marks", true)
		}
		if f.Wake > 0 {
			dst = appendInt(dst, "wake", f.Wake)
		}
	}
	return append(dst, '}')
}

func appendBundle(dst []byte, f *Frame) []byte {
	dst = append(dst, `,"bundle":{`...)
	var few [8]string // a bundle's few keys sort on the stack
	keys := few[:0]
	for mime := range f.Bundle {
		keys = append(keys, mime)
	}
	slices.Sort(keys)
	for i, mime := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, mime)
		dst = append(dst, ':')
		dst = appendRaw(dst, f.Bundle[mime])
	}
	dst = append(dst, '}')
	if len(f.Metadata) > 0 && json.Valid(f.Metadata) {
		dst = append(dst, `,"metadata":`...)
		dst = append(dst, f.Metadata...)
	}
	if f.DisplayID != "" {
		dst = appendField(dst, "displayId", f.DisplayID)
	}
	return dst
}

// appendRaw keeps a raw value's text as it came (numbers, escapes), so a
// kernel's JSON output survives byte for byte; invalid JSON becomes null.
func appendRaw(dst []byte, raw json.RawMessage) []byte {
	if len(raw) == 0 || !json.Valid(raw) {
		return append(dst, "null"...)
	}
	return append(dst, raw...)
}

func appendField(dst []byte, key, value string) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, key...)
	dst = append(dst, '"', ':')
	return AppendString(dst, value)
}

func appendInt(dst []byte, key string, v int) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, key...)
	dst = append(dst, '"', ':')
	return strconv.AppendInt(dst, int64(v), 10)
}

func appendBool(dst []byte, key string, v bool) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, key...)
	dst = append(dst, '"', ':')
	return strconv.AppendBool(dst, v)
}

const hexDigits = "0123456789abcdef"

// safeASCII marks the bytes that need no escaping inside a JSON string.
var safeASCII = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// AppendString appends s as a JSON string. It escapes like encoding/json
// with HTML escaping off (an NDJSON reader gains nothing from \u003c, and an
// agent reading the lines pays six tokens for it), escapes U+2028/9, and
// replaces invalid UTF-8 with U+FFFD.
func AppendString(dst []byte, s string) []byte {
	return appendString(dst, s, false)
}

// AppendFSString appends s, bytes from the OS (a command-line argument, a
// path), as a JSON string that Python's json reads as os.fsdecode decodes
// those bytes: each byte of invalid UTF-8 is the lone surrogate
// surrogateescape makes of it (0xff is \udcff), so the bytes survive
// (os.fsencode gives them back) instead of becoming U+FFFD.
func AppendFSString(dst []byte, s string) []byte {
	return appendString(dst, s, true)
}

// AppendFSStrings appends ss as a JSON array of AppendFSString's strings.
func AppendFSStrings(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendFSString(dst, s)
	}
	return append(dst, ']')
}

func appendString(dst []byte, s string, surrogates bool) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if i = plainEnd(s, i); i == len(s) {
			break
		}
		if c := s[i]; c < utf8.RuneSelf {
			if safeASCII[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = appendByteEscape(dst, c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			if surrogates {
				dst = append(dst, '\\', 'u', 'd', 'c', hexDigits[s[i]>>4], hexDigits[s[i]&0xF])
			} else {
				dst = append(dst, `\ufffd`...)
			}
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// plainEnd returns the index of the first byte of s at or after i that is
// not ASCII needing no escape, or len(s): bulk output is mostly such runs,
// tested here a word at a time in one loop (a call per word, each load
// bounds-checked, cost several times more). Of each word's flagged bytes
// the lowest is exact (a borrow flags only bytes above a true hit).
func plainEnd(s string, i int) int {
	const lsb, msb = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(s); i += 8 {
		t := s[i : i+8]
		w := uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
			uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
		control := (w - lsb*0x20) & ^w & msb // bytes < 0x20
		q := w ^ (lsb * '"')
		b := w ^ (lsb * '\\')
		hit := control | (q-lsb)&^q&msb | (b-lsb)&^b&msb | w&msb
		if hit != 0 {
			return i + bits.TrailingZeros64(hit)/8
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || !safeASCII[c] {
			return i
		}
	}
	return i
}

// AppendRequest appends r as one JSON object, without a newline.
func AppendRequest(dst []byte, r *Request) []byte {
	if r.Exit {
		return append(dst, `{"type":"exit"}`...)
	}
	dst = append(dst, `{"type":"execute"`...)
	dst = appendField(dst, "id", r.ID)
	dst = appendField(dst, "code", r.Code)
	if r.Cwd != "" {
		// A path's bytes: a directory whose name is not UTF-8 is still one
		// os.chdir reaches.
		dst = append(dst, `,"cwd":`...)
		dst = AppendFSString(dst, r.Cwd)
	}
	if r.Run != "" {
		dst = appendField(dst, "run", r.Run)
	}
	if len(r.Env) > 0 {
		// The command's environment's bytes (a PATH entry whose name is
		// not UTF-8), which os.environ encodes back as they were: a
		// UTF-8 encoding made each such byte U+FFFD.
		dst = append(dst, `,"env":`...)
		dst = appendEnv(dst, r.Env)
	}
	if r.Argv != nil {
		// The command line's bytes, as python3 decodes its own.
		dst = append(dst, `,"argv":`...)
		dst = AppendFSStrings(dst, r.Argv)
		if r.File != "" {
			dst = append(dst, `,"file":`...)
			dst = AppendFSString(dst, r.File)
		}
	}
	if r.Filename != "" {
		// A path's bytes, as __file__'s: the code's filename is the same string.
		dst = append(dst, `,"filename":`...)
		dst = AppendFSString(dst, r.Filename)
		if r.FirstLine > 1 {
			dst = append(dst, `,"line":`...)
			dst = strconv.AppendInt(dst, int64(r.FirstLine), 10)
		}
	}
	if r.Module != "" {
		// As the command line's argument, which python3 -m decodes.
		dst = append(dst, `,"module":`...)
		dst = AppendFSString(dst, r.Module)
	}
	if r.Script {
		dst = append(dst, `,"script":true`...)
	}
	if r.InScript {
		dst = append(dst, `,"inScript":true`...)
	}
	if r.Last {
		dst = append(dst, `,"last":true`...)
	}
	if r.ExitReports {
		dst = append(dst, `,"exitReports":true`...)
	}
	if t := r.Terminal; t != nil {
		dst = append(dst, `,"terminal":{"fds":[`...)
		for i, fd := range t.Fds {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendInt(dst, int64(fd), 10)
		}
		dst = append(dst, ']')
		if len(t.Env) > 0 {
			dst = append(dst, `,"env":`...)
			dst = appendEnv(dst, t.Env) // as the request's env, its bytes kept
		}
		if t.Request != "" {
			dst = append(dst, `,"request":`...)
			dst = AppendString(dst, t.Request)
		}
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// appendByteEscape appends the JSON escape of ASCII byte c, one that must
// be escaped, as encoding/json writes it.
func appendByteEscape(dst []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	}
	return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}

// appendEnv appends env as a JSON object of AppendFSString's strings (null
// for nil), its names sorted.
func appendEnv(dst []byte, env map[string]*string) []byte {
	dst = append(dst, '{')
	for i, k := range slices.Sorted(maps.Keys(env)) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendFSString(dst, k)
		dst = append(dst, ':')
		if v := env[k]; v != nil {
			dst = AppendFSString(dst, *v)
		} else {
			dst = append(dst, "null"...)
		}
	}
	return append(dst, '}')
}
