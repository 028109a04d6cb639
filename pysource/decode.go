package pysource

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// SyntaxError is python3's refusal of a source: Text is what it prints on
// stderr before it exits 1, whole ("SyntaxError: ..." and, on some
// versions, a File line and the source line before it).
type SyntaxError struct{ Text string }

func (e *SyntaxError) Error() string { return strings.TrimSpace(e.Text) }

// Name is how python3's messages name a source file: as given on its
// command line (3.8) or absolute (3.9+); both "<stdin>" for stdin.
type Name struct{ Given, Abs string }

// Python finds the interpreter that will run the source, only when Decode
// needs it: its path, or why there is none.
type Python func() (string, error)

// As tokenize's cookie_re and blank_re; compiled at the first FILE read,
// not in every evalhost command's start (~50 us of package init).
var (
	cookieRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)`) })
	blankRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[ \t\f]*(?:[#\r\n]|$)`) })
)

const bom = "\xef\xbb\xbf"

// readPy is run by the interpreter for what Go does not read alone.
//
//go:embed read.py
var readPy string

// readTimeout bounds readPy's run: an interpreter start and one read.
const readTimeout = 30 * time.Second

// Decode reads src, the bytes of the source file name, as the interpreter
// python finds reads it; see the package doc. The BOM is dropped.
func Decode(src []byte, name Name, python Python) (string, error) {
	hasBOM := bytes.HasPrefix(src, []byte(bom))
	body := src
	if hasBOM {
		body = src[len(bom):]
	}
	c := declared(body)
	switch {
	case (c.enc == "" || c.enc == "utf-8") && utf8.Valid(body):
		return string(body), nil
	case c.enc == "iso-8859-1" && !hasBOM && utf8.Valid(body[:c.lineStart]):
		return latin1(body), nil
	}
	// Not UTF-8, another encoding, or a BOM and a declaration: the
	// interpreter reads it (its codec, its wording of a refusal).
	return interpreterRead(src, name, c, python)
}

// interpreterRead has the interpreter read src (readPy): a refusal is
// worded as its version words it, and a codec is its own.
func interpreterRead(src []byte, name Name, c cookie, python Python) (string, error) {
	exe, err := python()
	if err != nil {
		return "", fmt.Errorf("%s %s, which evalhost reads with the Python that runs it (give --python): %w", name.Given, c.describe(), err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-I", "-S", "-W", "ignore", "-c", readPy,
		name.Given, name.Abs, c.enc, strconv.Itoa(c.line), strconv.Itoa(c.lineStart), strconv.Itoa(c.end))
	cmd.Stdin = bytes.NewReader(src)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	switch {
	case err == nil && len(out) > 0 && out[0] == 'T':
		return string(out[1:]), nil
	case err == nil && len(out) > 0 && out[0] == 'E':
		return "", &SyntaxError{Text: string(out[1:])}
	case ctx.Err() != nil:
		err = fmt.Errorf("no answer within %s", readTimeout)
	case err == nil:
		err = errors.New("no answer")
	}
	if tail := strings.TrimSpace(stderr.String()); tail != "" {
		err = fmt.Errorf("%w: %s", err, tail)
	}
	return "", fmt.Errorf("reading %s with %s: %w", name.Given, exe, err)
}

// cookie is a source's coding declaration: enc as tokenize's
// get_normal_name names it ("" for none), on line 1 or 2 (0 for none),
// which starts at lineStart and ends (its newline included) at end.
type cookie struct {
	enc                  string
	line, lineStart, end int
}

// describe says why a source needs the interpreter.
func (c cookie) describe() string {
	if c.enc == "" || c.enc == "utf-8" {
		return "is not UTF-8"
	}
	return "declares encoding " + c.enc
}

// declared is the coding the first two lines of src (after a BOM)
// declare.
func declared(src []byte) cookie {
	start := 0
	for i := 1; i <= 2 && start < len(src); i++ {
		end := len(src)
		if nl := bytes.IndexByte(src[start:], '\n'); nl >= 0 {
			end = start + nl + 1
		}
		line := src[start:end]
		if m := cookieRE().FindSubmatch(line); m != nil {
			return cookie{enc: normalName(string(m[1])), line: i, lineStart: start, end: end}
		}
		if !blankRE().Match(line) {
			break
		}
		start = end
	}
	return cookie{}
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

func latin1(src []byte) string {
	var sb strings.Builder
	sb.Grow(len(src) + len(src)/8)
	for _, c := range src {
		sb.WriteRune(rune(c))
	}
	return sb.String()
}
