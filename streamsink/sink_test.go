package streamsink

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/testkit"
)

func newSink(t *testing.T, o Options) *Sink {
	t.Helper()
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func closeDump(t *testing.T, s *Sink) Dump {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	return s.Dump()
}

func TestTail(t *testing.T) {
	tests := []struct {
		name      string
		opt       Options
		chunks    []string
		text      string
		truncated bool
		total     int64 // lines
		notice    string
	}{
		{"fits", Options{}, []string{"a\n", "b\n"}, "a\nb\n", false, 2, ""},
		{"unterminated last line counts", Options{}, []string{"a\nb"}, "a\nb", false, 2, ""},
		{"line limit", Options{MaxLines: 2}, []string{"1\n2\n3\n4\n"}, "3\n4\n", true, 4, "[…2 lines elided…]"},
		{"line limit partial last", Options{MaxLines: 2}, []string{"1\n2\n3"}, "2\n3", true, 3, "[…1 line elided…]"},
		{"byte limit mid line", Options{MaxBytes: 4}, []string{"abcdefgh"}, "efgh", true, 1, "[…4 B of a long line elided…]"},
		{"byte limit across chunks", Options{MaxBytes: 5}, []string{"ab\n", "cd\n", "ef\n"}, "ef\n", true, 3, "[…2 lines elided…]"},
		{"byte limit keeps whole lines", Options{MaxBytes: 20}, []string{"line 16\nline 17\nline 18\nline 19\n"}, "line 18\nline 19\n", true, 4, "[…2 lines elided…]"},
		{"byte limit drops an empty remnant", Options{MaxBytes: 6}, []string{"x\nx\nx\nx\n\n"}, "x\nx\n\n", true, 5, "[…2 lines elided…]"},
		{"long last line keeps its end", Options{MaxBytes: 10, MaxColumns: 4}, []string{"a\n", "0123456789ABCDEF"}, "[+6 chars]…CDEF", true, 2, "[…1 line and 6 B of a long line elided…]"},
		{"long line cut across chunks keeps its end", Options{MaxBytes: 10, MaxColumns: 4}, []string{"a\n01234", "56789ABC", "DEF"}, "[+6 chars]…CDEF", true, 2, "[…1 line and 6 B of a long line elided…]"},
		{"long line then short lines", Options{MaxBytes: 10}, []string{strings.Repeat("z", 30), "\nok\n"}, "ok\n", true, 2, "[…1 line elided…]"},
		{"rune boundary 2-byte", Options{MaxBytes: 5}, []string{"ééé"}, "éé", true, 1, ""},
		{"rune boundary 3-byte", Options{MaxBytes: 7}, []string{"€€€"}, "€€", true, 1, ""},
		{"rune boundary 4-byte chunked", Options{MaxBytes: 6}, []string{"𝄞", "𝄞", "𝄞"}, "𝄞", true, 1, ""},
		{"progress collapsed", Options{}, []string{"10%\r", "50%\r", "100%\n", "done\n"}, "100%\ndone\n", false, 2, ""},
		{"progress final state without newline", Options{}, []string{"a\n10%\r20%\r"}, "a\n20%", false, 2, ""},
		{"progress with ansi", Options{}, []string{"\x1b[2K 10%\r\x1b[2K 90%\r\x1b[2K100%\r\n"}, "100%\n", false, 1, ""},
		{"crlf split across chunks", Options{}, []string{"a\r", "\nb\r", "\n"}, "a\nb\n", false, 2, ""},
		{"clamp columns", Options{MaxColumns: 3}, []string{"abcdef\nxy\n"}, "abc…[+3 chars]\nxy\n", true, 2, "[1 line clamped to 3 columns]"},
		{"clamp counts runes", Options{MaxColumns: 3}, []string{"ééé\n€€€€\n"}, "ééé\n€€€…[+1 char]\n", true, 2, "[1 line clamped to 3 columns]"},
		{"stdout and stderr share the tail", Options{}, []string{"o1\n", "e1\n"}, "o1\ne1\n", false, 2, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSink(t, tc.opt)
			for i, c := range tc.chunks {
				typ := frames.TypeStdout
				if tc.name == "stdout and stderr share the tail" && i == 1 {
					typ = frames.TypeStderr
				}
				s.Write(typ, []byte(c))
			}
			d := closeDump(t, s)
			if d.Text != tc.text {
				t.Errorf("text = %q, want %q", d.Text, tc.text)
			}
			if d.Truncated != tc.truncated {
				t.Errorf("truncated = %v, want %v", d.Truncated, tc.truncated)
			}
			if d.TotalLines != tc.total {
				t.Errorf("total lines = %d, want %d", d.TotalLines, tc.total)
			}
			if d.KeptBytes != len(d.Text) || d.KeptLines != countLines(d.Text) {
				t.Errorf("kept = %d bytes %d lines, text %q", d.KeptBytes, d.KeptLines, d.Text)
			}
			raw := int64(len(strings.Join(tc.chunks, "")))
			if d.TotalBytes != raw {
				t.Errorf("total bytes = %d, want %d", d.TotalBytes, raw)
			}
			if tc.notice != "" && !contains(d.Notices, tc.notice) {
				t.Errorf("notices %q lack %q", d.Notices, tc.notice)
			}
			if !tc.truncated && len(d.Notices) != 0 {
				t.Errorf("untruncated output has notices %q", d.Notices)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestWriteReturnsLiveText(t *testing.T) {
	s := newSink(t, Options{})
	got := []string{
		s.Write(frames.TypeStdout, []byte("plain\n")),
		s.Write(frames.TypeStdout, []byte("\x1b[31mred\xe2\x82")),
		s.Write(frames.TypeStderr, []byte("err\r")),
		s.Write(frames.TypeStdout, []byte("\xac\x1b[0")),
		s.Write(frames.TypeStdout, []byte("m\r")),
		s.Flush(frames.TypeStdout),
		s.Flush(frames.TypeStderr),
	}
	want := []string{"plain\n", "red", "err", "€", "", "\r", "\r"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("chunk %d: live %q, want %q", i, got[i], want[i])
		}
	}
	// stderr's "err" is recorded before stdout completes its "€".
	if d := closeDump(t, s); d.Text != "plain\nrederr€" {
		t.Errorf("dump text %q", d.Text)
	}
	if s.Write(frames.TypeStdout, []byte("late\x00")) != "late" {
		t.Error("write after close must still sanitise")
	}
	if d := s.Dump(); strings.Contains(d.Text, "late") {
		t.Errorf("write after close was recorded: %q", d.Text)
	}
}

func TestAppend(t *testing.T) {
	s := newSink(t, Options{})
	dst := []byte("> ")
	dst = s.Append(dst, frames.TypeStdout, []byte("a\x1b[1mb\n"))
	if string(dst) != "> ab\n" {
		t.Errorf("Append = %q", dst)
	}
}

func TestBadOptions(t *testing.T) {
	for _, o := range []Options{{MaxBytes: -1}, {MaxLines: -5}, {MaxColumns: -1}, {ArtifactCap: -1}, {ArtifactCap: 10}, {MaxBytes: 2}} {
		if _, err := New(o); !errors.Is(err, ErrBadOptions) {
			t.Errorf("New(%+v) error = %v, want ErrBadOptions", o, err)
		}
	}
}

func TestSpill(t *testing.T) {
	tests := []struct {
		name     string
		opt      Options
		chunks   []string
		artifact bool
		want     string // artifact content; "" = input joined
	}{
		{"no overflow no artifact", Options{MaxBytes: 100}, []string{"a\n", "b\n"}, false, ""},
		{"overflow writes from the first byte", Options{MaxBytes: 8}, []string{"line1\n", "line2\n", "line3\n"}, true, ""},
		{"raw beyond hold spills though tail fits", Options{MaxBytes: 8}, []string{"\x1b[31m\x1b[0m\x1b[31m", "ok\n"}, true, ""},
		{"lines overflow", Options{MaxLines: 2}, []string{"1\n2\n", "3\n"}, true, ""},
		{"raw bytes kept, not sanitised", Options{MaxBytes: 4}, []string{"\x1b[1mbold\xff\r\n", "more\n"}, true, ""},
		{"head and tail", Options{MaxBytes: 4, ArtifactCap: 100},
			[]string{strings.Repeat("h", 60), strings.Repeat("m", 200), strings.Repeat("t", 50)}, true,
			strings.Repeat("h", 50) + "\n[ARTIFACT TRUNCATED: 210 bytes elided; kept the first 50 and the last 50 of 310 bytes]\n" + strings.Repeat("t", 50)},
		{"head and tail under cap", Options{MaxBytes: 4, ArtifactCap: 100}, []string{strings.Repeat("x", 80)}, true, ""},
		{"line clamped to columns spills", Options{MaxColumns: 5}, []string{"short\n", "abcdef", "gh\n"}, true, ""},
		{"line of wide characters within columns", Options{MaxColumns: 5, MaxBytes: 100}, []string{"€€€€€\n"}, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.opt.Store = NewStore(t.TempDir())
			s := newSink(t, tc.opt)
			for _, c := range tc.chunks {
				s.Write(frames.TypeStdout, []byte(c))
			}
			d := closeDump(t, s)
			if (d.ArtifactID != "") != tc.artifact {
				t.Fatalf("artifact id %q, want artifact %v; notices %q", d.ArtifactID, tc.artifact, d.Notices)
			}
			if !tc.artifact {
				return
			}
			got, err := os.ReadFile(d.ArtifactPath)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if want == "" {
				want = strings.Join(tc.chunks, "")
			}
			if string(got) != want {
				t.Errorf("artifact = %q\nwant %q", got, want)
			}
			ref := "[full output: artifact://" + d.ArtifactID + " (" + humanBytes(d.TotalBytes) + ") at " + d.ArtifactPath + "]"
			if tc.want != "" {
				ref = "[head and tail of the output (artifact capped at 100 B): artifact://" + d.ArtifactID + " (210 B of 310 B elided) at " + d.ArtifactPath + "]"
			}
			if !contains(d.Notices, ref) {
				t.Errorf("notices %q lack the artifact reference", d.Notices)
			}
		})
	}
}

func TestArtifactIDSequence(t *testing.T) {
	dir := t.TempDir()
	// Files another process left, and one that is not an artifact.
	for _, name := range []string{"3.eval.log", "7.png", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st := NewStore(dir)
	other := NewStore(dir) // a second process on the same directory
	var ids []string
	for i := range 4 {
		use := st
		if i%2 == 1 {
			use = other
		}
		f, id, err := use.Create("eval.log")
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		ids = append(ids, id)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("id %s handed out twice: %v", id, ids)
		}
		seen[id] = true
	}
	if ids[0] != "8.eval.log" {
		t.Errorf("first id %s, want 8.eval.log after the existing 7.png", ids[0])
	}
}

func TestStorePath(t *testing.T) {
	st := NewStore("/a/b")
	tests := []struct {
		ref, want string
		bad       bool
	}{
		{"artifact://3.eval.log", "/a/b/3.eval.log", false},
		{"3.png", "/a/b/3.png", false},
		{"artifact://../x", "", true},
		{"artifact://", "", true},
		{"a/b", "", true},
		{"..", "", true},
		{strings.Repeat("a", 255), "/a/b/" + strings.Repeat("a", 255), false},
		{"artifact://" + strings.Repeat("a", 256), "", true}, // no file has such a name
	}
	for _, tc := range tests {
		got, err := st.Path(tc.ref)
		if tc.bad != (err != nil) || got != tc.want {
			t.Errorf("Path(%.40q) = %.40q, %v", tc.ref, got, err)
		}
		if err != nil && len(err.Error()) > 200 {
			t.Errorf("Path(%.40q): a %d-byte error, repeating the id", tc.ref, len(err.Error()))
		}
		if tc.bad && !errors.Is(err, ErrBadRef) {
			t.Errorf("Path(%q) error %v is not ErrBadRef", tc.ref, err)
		}
	}
}

func TestArtifactsDir(t *testing.T) {
	t.Setenv("PI_ARTIFACTS_DIR", "")
	if got := ArtifactsDir("/h"); got != "/h/artifacts" {
		t.Errorf("ArtifactsDir = %q", got)
	}
	t.Setenv("PI_ARTIFACTS_DIR", "/x/y")
	if got := ArtifactsDir("/h"); got != "/x/y" {
		t.Errorf("ArtifactsDir with env = %q", got)
	}
}

// Tests run as root, so permissions cannot make a write fail; a directory
// below a regular file can never be created.
func TestUnwritableStoreDegrades(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s := newSink(t, Options{Store: NewStore(filepath.Join(file, "artifacts")), MaxLines: 2})
	for _, c := range []string{"1\n", "2\n", "3\n", "4\n"} {
		if got := s.Write(frames.TypeStdout, []byte(c)); got != c {
			t.Fatalf("live text %q, want %q", got, c)
		}
	}
	err := s.Close()
	if err == nil {
		t.Error("Close reported no artifact failure")
	}
	d := s.Dump()
	if d.Text != "3\n4\n" || !d.Truncated || d.ArtifactID != "" {
		t.Errorf("dump %+v", d)
	}
	if !hasPrefix(d.Notices, "[full output not saved (") {
		t.Errorf("notices %q lack the failure", d.Notices)
	}
}

// A write that fails midway (here: the file is closed under the sink, as
// a full disk would fail it) removes the partial artifact and keeps the
// tail.
func TestWriteFailureMidStream(t *testing.T) {
	s := newSink(t, Options{Store: NewStore(t.TempDir()), MaxBytes: 4})
	s.Write(frames.TypeStdout, []byte("first\n"))
	path := s.Dump().ArtifactPath
	s.spill.f.Close()
	s.Write(frames.TypeStdout, []byte("second\n"))
	s.Write(frames.TypeStdout, []byte("x\n"))
	d := closeDump(t, s)
	if d.Text != "x\n" || d.ArtifactID != "" {
		t.Errorf("dump %+v", d)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("partial artifact %s left behind: %v", path, err)
	}
	if !hasPrefix(d.Notices, "[full output not saved (") {
		t.Errorf("notices %q", d.Notices)
	}
}

// A capped artifact writes its elision line and its tail at Close: a
// write that fails there removes the artifact as one midway does, and
// Close does not go on into the ring it dropped.
func TestWriteFailureAtCappedClose(t *testing.T) {
	s := newSink(t, Options{Store: NewStore(t.TempDir()), MaxBytes: 4, ArtifactCap: 1000})
	for range 100 {
		s.Write(frames.TypeStdout, []byte("a line of output\n"))
	}
	path := s.Dump().ArtifactPath
	if s.spill.ringLen == 0 {
		t.Fatal("nothing in the ring: the test writes too little")
	}
	s.spill.f.Close()
	if err := s.Close(); err == nil {
		t.Error("Close reported no artifact failure")
	}
	d := s.Dump()
	if d.ArtifactID != "" || !hasPrefix(d.Notices, "[full output not saved (") {
		t.Errorf("dump %+v", d)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("partial artifact %s left behind: %v", path, err)
	}
}

func hasPrefix(list []string, p string) bool {
	for _, x := range list {
		if strings.HasPrefix(x, p) {
			return true
		}
	}
	return false
}

func TestFrame(t *testing.T) {
	s := newSink(t, Options{})
	out := s.Frame(frames.Frame{Type: frames.TypeStdout, ID: "c", Data: "\x1b[32mok\x1b[0m\n"})
	if out.Data != "ok\n" || out.ID != "c" {
		t.Errorf("stdout frame %+v", out)
	}
	s.Frame(frames.Frame{Type: frames.TypeStdout, Data: "partial"})
	tb := []string{"Traceback (most recent call last):", "  \x1b[1mFile \"x\"\x1b[0m", "ValueError: bad"}
	in := frames.Frame{Type: frames.TypeError, Ename: "ValueError", Evalue: "bad\x00", Traceback: tb}
	out = s.Frame(in)
	if out.Traceback[1] != "  File \"x\"" || out.Evalue != "bad" {
		t.Errorf("error frame %+v", out)
	}
	if tb[1] != "  \x1b[1mFile \"x\"\x1b[0m" {
		t.Error("Frame modified the caller's traceback")
	}
	bundle := frames.Bundle{}
	bundle.SetText("text/plain", "\x1b[1m<Fig>\x1b[0m")
	out = s.Frame(frames.Frame{Type: frames.TypeDisplay, Bundle: bundle})
	if v, _ := out.Bundle.Text("text/plain"); v != "<Fig>" {
		t.Errorf("display text/plain %q", v)
	}
	if v, _ := bundle.Text("text/plain"); v != "\x1b[1m<Fig>\x1b[0m" {
		t.Error("Frame modified the caller's bundle")
	}
	md := frames.Bundle{}
	md.SetText("text/plain", "plain")
	md.SetText("text/markdown", "# Title")
	s.Frame(frames.Frame{Type: frames.TypeResult, Bundle: md})
	s.Frame(frames.Frame{Type: frames.TypeError, Ename: "KeyError", Evalue: "'k'"})
	done := frames.Frame{Type: frames.TypeDone, Status: "ok"}
	if got := s.Frame(done); got.Status != "ok" || got.Type != frames.TypeDone {
		t.Errorf("done frame changed: %+v", got)
	}
	d := closeDump(t, s)
	want := "ok\npartial\nTraceback (most recent call last):\n  File \"x\"\nValueError: bad\n<Fig>\n# Title\nKeyError: 'k'\n"
	if d.Text != want {
		t.Errorf("dump text\n%q\nwant\n%q", d.Text, want)
	}
}

func TestLargePayloads(t *testing.T) {
	dir := t.TempDir()
	s := newSink(t, Options{Store: NewStore(dir), InlineLimit: 100})
	png := bytes.Repeat([]byte{0x89, 'P', 'N', 'G', 0, 1, 2, 3}, 40)
	b64, _ := json.Marshal(png) // encoding/json writes []byte as base64
	small := frames.Bundle{"image/png": json.RawMessage(`"AAAA"`)}
	small.SetText("text/plain", "<small>")
	bundle := frames.Bundle{
		"image/png":        b64,
		"application/json": json.RawMessage(`{"k":"` + strings.Repeat("v", 200) + `"}`),
	}
	bundle.SetText("text/plain", "<Figure>")
	bundle.SetText("text/html", "<b>"+strings.Repeat("x", 200)+"</b>")
	meta := json.RawMessage(`{"image/png":{"width":640}}`)

	if got := s.Frame(frames.Frame{Type: frames.TypeDisplay, Bundle: small}); len(got.Bundle) != 2 || got.Metadata != nil {
		t.Errorf("small display changed: %+v", got)
	}
	out := s.Frame(frames.Frame{Type: frames.TypeDisplay, Bundle: bundle, Metadata: meta})
	if len(bundle) != 4 {
		t.Error("Frame modified the caller's bundle")
	}
	if _, ok := out.Bundle["image/png"]; ok || len(out.Bundle) != 1 {
		t.Errorf("moved MIME types still inline: %v", keys(out.Bundle))
	}
	plain, _ := out.Bundle.Text("text/plain")
	var m map[string]json.RawMessage
	if err := json.Unmarshal(out.Metadata, &m); err != nil {
		t.Fatalf("metadata %s: %v", out.Metadata, err)
	}
	if string(m["image/png"]) != `{"width":640}` {
		t.Errorf("existing metadata lost: %s", out.Metadata)
	}
	var refs map[string]Payload
	if err := json.Unmarshal(m[MetadataKey], &refs); err != nil || len(refs) != 3 {
		t.Fatalf("refs %s: %v", m[MetadataKey], err)
	}
	pngRef := refs["image/png"]
	data, err := os.ReadFile(pngRef.Path)
	if err != nil || !bytes.Equal(data, png) || pngRef.Bytes != int64(len(png)) || !strings.HasSuffix(pngRef.Path, ".png") {
		t.Errorf("png artifact %+v: %v, %d bytes", pngRef, err, len(data))
	}
	html, _ := os.ReadFile(refs["text/html"].Path)
	if !strings.HasPrefix(string(html), "<b>xxx") {
		t.Errorf("html artifact %q", html)
	}
	if !strings.HasPrefix(plain, "<Figure>\n[application/json ") || !strings.Contains(plain, "[image/png 320 B: "+pngRef.Artifact+"]") {
		t.Errorf("text/plain %q", plain)
	}
	if d := closeDump(t, s); len(d.Payloads) != 3 || !strings.Contains(d.Text, pngRef.Artifact) {
		t.Errorf("dump payloads %+v text %q", d.Payloads, d.Text)
	}
}

func keys(b frames.Bundle) []string {
	var k []string
	for m := range b {
		k = append(k, m)
	}
	return k
}

func TestPayloadStoreFailureKeepsInline(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	s := newSink(t, Options{Store: NewStore(filepath.Join(file, "a")), InlineLimit: 10})
	b := frames.Bundle{"image/png": json.RawMessage(`"` + strings.Repeat("A", 40) + `"`)}
	b.SetText("text/plain", "<img>")
	out := s.Frame(frames.Frame{Type: frames.TypeDisplay, Bundle: b})
	if _, ok := out.Bundle["image/png"]; !ok {
		t.Error("payload dropped although the store failed")
	}
	if d := closeDump(t, s); !hasPrefix(d.Notices, "[image/png display of 42 B kept inline: ") {
		t.Errorf("notices %q", d.Notices)
	}
}

// The golden file pins the rendered dump of a cell with every kind of
// noise, so format changes are deliberate: go test -run Golden -update.
func TestDumpGolden(t *testing.T) {
	s := newSink(t, Options{MaxLines: 5, MaxColumns: 40})
	s.Write(frames.TypeStdout, []byte("\x1b[1mstart\x1b[0m\r\n"))
	for i := range 5 {
		s.Write(frames.TypeStdout, []byte(strings.Repeat("=", i*3)+"\r"))
	}
	s.Write(frames.TypeStdout, []byte("\x1b]8;;http://x\x1b\\100%\x1b]8;;\x1b\\\n"))
	s.Write(frames.TypeStderr, []byte("warn: \xff\xfe bad bytes\n"))
	s.Write(frames.TypeStdout, []byte(strings.Repeat("wide ", 20)+"\n"))
	s.Frame(frames.Frame{Type: frames.TypeError, Ename: "E", Evalue: "v", Traceback: []string{"Traceback:", "E: v"}})
	d := closeDump(t, s)
	got, _ := json.MarshalIndent(d, "", "  ")
	got = append(got, '\n')
	testkit.Golden(t, filepath.Join("testdata", "dump.golden.json"), got)
	if !utf8.ValidString(d.String()) {
		t.Error("invalid UTF-8")
	}
}

// TestPassthrough: stream text comes back as written, held back nowhere,
// counted, neither tailed nor spilled; other text is still sanitised.
func TestPassthrough(t *testing.T) {
	dir := t.TempDir()
	store := NewStore(dir)
	s := newSink(t, Options{Passthrough: true, Store: store, MaxBytes: 8})
	chunks := []struct {
		typ frames.Type
		raw string
	}{
		{frames.TypeStdout, "\x1b[31mred\x1b[0m\r\n"},
		{frames.TypeStderr, "bad \xff byte, half a rune \xe2\x82"},
		{frames.TypeStdout, "\x00\x07" + strings.Repeat("long line ", 10)},
	}
	var total int
	for _, c := range chunks {
		if got := s.Frame(frames.Frame{Type: c.typ, Data: c.raw}).Data; got != c.raw {
			t.Errorf("%s %q came back as %q", c.typ, c.raw, got)
		}
		total += len(c.raw)
	}
	if got := string(s.Append(nil, frames.TypeStdout, []byte("\x1b]8;;x\x07"))); got != "\x1b]8;;x\x07" {
		t.Errorf("Append gave %q", got)
	}
	total += len("\x1b]8;;x\x07")
	for _, typ := range []frames.Type{frames.TypeStdout, frames.TypeStderr} {
		if held := s.Flush(typ); held != "" {
			t.Errorf("Flush(%s) = %q: nothing should be held back", typ, held)
		}
	}
	if d := s.Dump(); d.TotalBytes != int64(total) {
		t.Errorf("TotalBytes %d, want %d", d.TotalBytes, total)
	}
	e := s.Frame(frames.Frame{Type: frames.TypeError, Ename: "E", Evalue: "v\x1b[1m"})
	if e.Evalue != "v" {
		t.Errorf("error frame not sanitised: %q", e.Evalue)
	}
	d := closeDump(t, s)
	if d.Text != "E: v\n" || d.ArtifactID != "" || strings.Contains(d.Text, "red") {
		t.Errorf("stream text was kept: %+v", d)
	}
	if left, _ := os.ReadDir(dir); len(left) > 0 {
		t.Errorf("store holds %d files", len(left))
	}
}

// TestVerbatim: a Verbatim sink hands text back as the interpreter wrote
// it (escape sequences, CRLF, control characters: what Jupyter keeps in a
// notebook), with only what is not UTF-8 replaced as Python's decoder
// replaces it, also across chunks; its tail and dump are sanitised as
// without it.
func TestVerbatim(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string // stdout chunks
		want   string   // what comes back, held-back bytes flushed
		dump   string
	}{
		{"colours", []string{"\x1b[31mred\x1b[0m plain\n"}, "\x1b[31mred\x1b[0m plain\n", "red plain\n"},
		{"a sequence split across chunks", []string{"\x1b[3", "1mred\x1b", "[0m\n"}, "\x1b[31mred\x1b[0m\n", "red\n"},
		{"CRLF, bell and a progress bar", []string{"a\r\nb\x07\n10%\r", "100%\n"}, "a\r\nb\x07\n10%\r100%\n", "a\nb\n100%\n"},
		{"a hyperlink", []string{"\x1b]8;;http://x\x07link\x1b]8;;\x07\n"}, "\x1b]8;;http://x\x07link\x1b]8;;\x07\n", "link\n"},
		{"invalid bytes", []string{"bad \xff\xfe, half \xe2\x82!\n"}, "bad \uFFFD\uFFFD, half \uFFFD!\n", "bad \uFFFD\uFFFD, half \uFFFD!\n"},
		{"a rune split across chunks", []string{"caf\xc3", "\xa9 \xe2\x82", "\xac\n"}, "café €\n", "café €\n"},
		{"a truncated rune at the end", []string{"x\xe2\x82"}, "x\uFFFD", "x\uFFFD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSink(t, Options{Verbatim: true})
			var got strings.Builder
			for _, c := range tt.chunks {
				got.WriteString(s.Frame(frames.Frame{Type: frames.TypeStdout, Data: c}).Data)
			}
			got.WriteString(s.Flush(frames.TypeStdout))
			if got.String() != tt.want {
				t.Errorf("handed back %q, want %q", got.String(), tt.want)
			}
			if d := closeDump(t, s); d.Text != tt.dump {
				t.Errorf("dump %q, want %q", d.Text, tt.dump)
			}
		})
	}
	t.Run("tracebacks and display text", func(t *testing.T) {
		s := newSink(t, Options{Verbatim: true})
		tb := []string{"\x1b[0;31mValueError\x1b[0m Traceback", "\x1b[0;31mValueError\x1b[0m: bad"}
		e := s.Frame(frames.Frame{Type: frames.TypeError, Ename: "ValueError", Evalue: "bad", Traceback: tb})
		if strings.Join(e.Traceback, "|") != strings.Join(tb, "|") {
			t.Errorf("traceback came back as %q", e.Traceback)
		}
		bundle := frames.Bundle{}
		bundle.SetText("text/plain", "\x1b[1m<Fig>\x1b[0m")
		d := s.Frame(frames.Frame{Type: frames.TypeDisplay, Bundle: bundle})
		if v, _ := d.Bundle.Text("text/plain"); v != "\x1b[1m<Fig>\x1b[0m" {
			t.Errorf("display text/plain came back as %q", v)
		}
		if got := closeDump(t, s).Text; got != "ValueError Traceback\nValueError: bad\n<Fig>\n" {
			t.Errorf("dump %q", got)
		}
	})
}
