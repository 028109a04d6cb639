package pysource

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/encoding/ianaindex"
)

// SyntaxError is why a source cannot be read, as python3 says it after
// "SyntaxError: ".
type SyntaxError struct{ Msg string }

func (e *SyntaxError) Error() string { return e.Msg }

// As tokenize's cookie_re and blank_re; compiled at the first FILE read,
// not in every evalhost command's start (~50 us of package init).
var (
	cookieRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)`) })
	blankRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[ \t\f]*(?:[#\r\n]|$)`) })
)

const bom = "\xef\xbb\xbf"

// Decode reads src, the bytes of the file name (as python3's errors name
// it), as Python reads a source file; see the package doc. The BOM is
// dropped.
func Decode(src []byte, name string) (string, error) {
	hasBOM := bytes.HasPrefix(src, []byte(bom))
	if hasBOM {
		src = src[len(bom):]
	}
	enc := declared(src)
	switch {
	case enc == "":
		return utf8Text(src, name)
	case hasBOM && enc != "utf-8":
		return "", &SyntaxError{Msg: "encoding problem: " + enc + " with BOM"}
	case enc == "utf-8":
		if !utf8.Valid(src) {
			line, b := badByte(src)
			return "", &SyntaxError{Msg: fmt.Sprintf("(unicode error) 'utf-8' codec can't decode byte 0x%02x on line %d of %s", b, line, name)}
		}
		return string(src), nil
	case enc == "iso-8859-1":
		return latin1(src), nil
	}
	e, err := ianaindex.IANA.Encoding(ianaName(enc))
	if err != nil || e == nil {
		return "", &SyntaxError{Msg: "encoding problem: " + enc}
	}
	out, err := e.NewDecoder().Bytes(src)
	if err != nil {
		return "", &SyntaxError{Msg: fmt.Sprintf("encoding problem: %s: %v", enc, err)}
	}
	return string(out), nil
}

// declared is the coding the first two lines declare, named as
// tokenize's get_normal_name names it; "" for none.
func declared(src []byte) string {
	lines := bytes.SplitN(src, []byte("\n"), 3)
	for i, line := range lines {
		if i == 2 {
			break
		}
		if m := cookieRE().FindSubmatch(line); m != nil {
			return normalName(string(m[1]))
		}
		if !blankRE().Match(line) {
			break
		}
	}
	return ""
}

// normalName is tokenize.get_normal_name.
func normalName(orig string) string {
	enc := orig
	if len(enc) > 12 {
		enc = enc[:12]
	}
	enc = strings.ReplaceAll(strings.ToLower(enc), "_", "-")
	if enc == "utf-8" || strings.HasPrefix(enc, "utf-8-") {
		return "utf-8"
	}
	for _, l := range []string{"latin-1", "iso-8859-1", "iso-latin-1"} {
		if enc == l || strings.HasPrefix(enc, l+"-") {
			return "iso-8859-1"
		}
	}
	return orig
}

// pythonNames are Python codec names the IANA index spells otherwise.
var pythonNames = map[string]string{
	"sjis": "Shift_JIS", "shift-jis": "Shift_JIS", "euc-jp": "EUC-JP", "eucjp": "EUC-JP",
	"euc-kr": "EUC-KR", "euckr": "EUC-KR", "gb2312": "GB2312", "gbk": "GBK", "gb18030": "GB18030",
	"big5": "Big5", "koi8-r": "KOI8-R", "koi8-u": "KOI8-U", "cp437": "IBM437", "cp850": "IBM850",
	"cp866": "IBM866", "mac-roman": "macintosh", "macroman": "macintosh",
}

// ianaName maps a Python codec name to an IANA one: cp125N is
// windows-125N, iso8859-N is ISO-8859-N.
func ianaName(enc string) string {
	n := strings.ReplaceAll(strings.ToLower(enc), "_", "-")
	if v, ok := pythonNames[n]; ok {
		return v
	}
	if rest, ok := strings.CutPrefix(n, "cp125"); ok && len(rest) == 1 {
		return "windows-125" + rest
	}
	if rest, ok := strings.CutPrefix(n, "iso8859-"); ok {
		return "ISO-8859-" + rest
	}
	return enc
}

// utf8Text is src when it is UTF-8, else python3's error for a file that
// declares no encoding.
func utf8Text(src []byte, name string) (string, error) {
	if utf8.Valid(src) {
		return string(src), nil
	}
	line, b := badByte(src)
	return "", &SyntaxError{Msg: fmt.Sprintf("Non-UTF-8 code starting with '\\x%02x' in file %s on line %d, but no encoding declared; see https://peps.python.org/pep-0263/ for details", b, name, line)}
}

// badByte finds the first byte that is not UTF-8: its line (from 1) and
// value.
func badByte(src []byte) (line int, b byte) {
	line = 1
	for i := 0; i < len(src); {
		r, size := utf8.DecodeRune(src[i:])
		if r == utf8.RuneError && size == 1 {
			return line, src[i]
		}
		if src[i] == '\n' {
			line++
		}
		i += size
	}
	return line, 0
}

func latin1(src []byte) string {
	var sb strings.Builder
	sb.Grow(len(src) + len(src)/8)
	for _, c := range src {
		sb.WriteRune(rune(c))
	}
	return sb.String()
}
