package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evalhost/evalhost/internal/plural"
	"github.com/evalhost/evalhost/streamsink"
)

// The resource templates: every artifact the sink or an image wrote is
// readable, none is listed one by one. A read returns at most
// MaxResourceBytes; a text artifact past that is read in pages by offset.
const (
	artifactTemplate      = streamsink.Scheme + "{id}"
	artifactRangeTemplate = streamsink.Scheme + "{id}{?offset,length}"
)

// MaxResourceBytes bounds one resources/read reply, as JSON: clients cap
// the messages they read (the Go SDK at 16 MiB) and drop the connection
// past that, so a 20 MB log is read in pages.
const MaxResourceBytes = 4 << 20

func (s *Server) addResources() {
	if s.cfg.Store == nil {
		return
	}
	s.sdk.AddResourceTemplate(&sdk.ResourceTemplate{
		Name:        "artifact",
		Title:       "Cell output artifact",
		URITemplate: artifactTemplate,
		Description: "The full output of a cell whose shown output was truncated (\"N.eval.log\"), or a " +
			"full-size image or display payload a cell produced (\"N.png\"). Eval results name them; " +
			"artifacts are kept for a few days. A read returns at most 4 MiB: a longer text ends with a " +
			"line naming the URI of the next part (artifact://ID?offset=N).",
	}, s.readArtifact)
	s.sdk.AddResourceTemplate(&sdk.ResourceTemplate{
		Name:        "artifact-range",
		Title:       "Part of a cell output artifact",
		URITemplate: artifactRangeTemplate,
		Description: "Bytes offset.. of a text artifact (at most length, and at most 4 MiB).",
	}, s.readArtifact)
}

func (s *Server) readArtifact(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	ref, err := parseArtifactURI(uri)
	if err != nil {
		return nil, err
	}
	shown := clip(uri, maxShownURI)
	path, err := s.cfg.Store.Path(ref.id)
	if err != nil {
		return nil, artifactNotFound(shown, "it names no artifact: ids are like 7.eval.log or 12.png, as eval results give them")
	}
	f, st, err := openArtifact(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, artifactNotFound(shown, "no such artifact: it never existed, or was removed (artifacts are kept 7 days, "+
			"and the oldest go when the store passes its size cap, EVALHOST_ARTIFACTS_MAX); run the cell again to get its output")
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", shown, err)
	}
	defer f.Close()
	rc := &sdk.ResourceContents{URI: uri, MIMEType: artifactMIME(path)}
	if !strings.HasPrefix(rc.MIMEType, "text/") && rc.MIMEType != "application/json" {
		if ref.offset > 0 || st.Size() > MaxResourceBytes*3/4 { // base64 grows it by 4/3
			return nil, fmt.Errorf("%s is %d bytes of %s, more than one read returns; its file is %s", shown, st.Size(), rc.MIMEType, path)
		}
		if rc.Blob, err = io.ReadAll(f); err != nil {
			return nil, err
		}
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{rc}}, nil
	}
	rc.Text, err = readTextPage(f, st.Size(), ref)
	if err != nil {
		return nil, err
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{rc}}, nil
}

// maxShownURI bounds a URI as an error repeats it: a client's 100 KiB
// one would come back whole in every refusal.
const maxShownURI = 256

// artifactNotFound is the SDK's resource-not-found error (its code and
// data) with a message that says why and what to do; uri as shown.
func artifactNotFound(uri, why string) error {
	err := sdk.ResourceNotFoundError(uri)
	if je, ok := err.(*jsonrpc.Error); ok {
		je.Message = fmt.Sprintf("resource %s not found: %s", uri, why)
	}
	return err
}

// openArtifact opens a regular file the store wrote. Anything else there
// (a symbolic link, a FIFO, a device) was put by someone else, in a shared
// PI_ARTIFACTS_DIR: followed, it could hand a model any file of the user's,
// or block the read for ever.
func openArtifact(path string) (*os.File, fs.FileInfo, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s is not a regular file (%s), so not an artifact evalhost wrote; it is not read", path, fi.Mode().Type())
	}
	if artifactOpening != nil {
		artifactOpening(path)
	}
	// Non-blocking: a FIFO swapped in since the Lstat would block the
	// open for ever; SameFile below refuses what was swapped in.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err == nil && (!st.Mode().IsRegular() || !os.SameFile(fi, st)) { // an inode number may come back as another file's
		err = fmt.Errorf("%s was replaced while it was opened; it is not read", path)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

// artifactOpening, when set (by a test), is called between openArtifact's
// Lstat and its open: a test swaps the file there.
var artifactOpening func(path string)

// artifactRef is a parsed artifact URI: "artifact://7.eval.log?offset=N&length=M".
type artifactRef struct {
	id             string
	offset, length int64 // length 0: as much as a read returns
}

func parseArtifactURI(uri string) (artifactRef, error) {
	base, query, _ := strings.Cut(uri, "?")
	ref := artifactRef{id: strings.TrimPrefix(base, streamsink.Scheme)}
	q, err := url.ParseQuery(query)
	if err != nil {
		return ref, fmt.Errorf("%s: bad query: %s; use ?offset=N&length=M", clip(uri, maxShownURI), clip(err.Error(), maxShownURI))
	}
	for name, dst := range map[string]*int64{"offset": &ref.offset, "length": &ref.length} {
		if v := q.Get(name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return ref, fmt.Errorf("%s: %s=%q must be a byte count (0 or more)", clip(uri, maxShownURI), name, clip(v, 32))
			}
			*dst = n
		}
	}
	return ref, nil
}

// readTextPage reads a page of a text artifact whose JSON encoding fits
// MaxResourceBytes, cut after a newline when one is near, and ends it with
// a line naming the next page when the file goes on.
func readTextPage(f *os.File, size int64, ref artifactRef) (string, error) {
	if ref.offset > size {
		return "", fmt.Errorf("offset %d is past the end of %s%s (%s)", ref.offset, streamsink.Scheme, ref.id, plural.Of(size, "byte"))
	}
	want := min(size-ref.offset, MaxResourceBytes)
	if ref.length > 0 {
		want = min(want, ref.length)
	}
	buf := make([]byte, want)
	n, err := f.ReadAt(buf, ref.offset)
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	buf = buf[:fitJSON(buf[:n], MaxResourceBytes-1024)]
	end := ref.offset + int64(len(buf))
	text := strings.ToValidUTF8(string(buf), "\uFFFD") // raw output may hold bytes that are not UTF-8
	if end < size && (ref.length == 0 || end < ref.offset+ref.length) {
		text += fmt.Sprintf("\n[part of %s%s: bytes %d-%d of %d; the rest: %s%s?offset=%d]\n",
			streamsink.Scheme, ref.id, ref.offset, end, size, streamsink.Scheme, ref.id, end)
	}
	return text, nil
}

// fitJSON returns how many bytes of b fit in limit once escaped as a JSON
// string, cut after the last newline in the final 64 KiB when there is one,
// else on a UTF-8 boundary.
func fitJSON(b []byte, limit int) int {
	cost, n := 0, 0
	for n < len(b) {
		c := b[n]
		switch {
		case c < 0x20 && c != '\n' && c != '\t' && c != '\r':
			cost += 6
		case c < 0x20 || c == '"' || c == '\\':
			cost += 2
		case c >= 0x80:
			cost += 3 // an invalid byte becomes U+FFFD
		default:
			cost++
		}
		if cost > limit {
			break
		}
		n++
	}
	if n == len(b) {
		return n
	}
	if nl := bytes.LastIndexByte(b[:n], '\n'); nl >= 0 && n-nl < 64<<10 {
		return nl + 1
	}
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return n
}

func artifactMIME(path string) string {
	if strings.HasSuffix(path, ".log") {
		return "text/plain; charset=utf-8"
	}
	if t := mime.TypeByExtension(filepath.Ext(path)); t != "" {
		return t
	}
	return "application/octet-stream"
}
