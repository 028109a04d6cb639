package streamsink

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// A display whose text/plain is no string (display(bundle, raw=True)
// sends it as given) is recorded as a renderer shows it: its HTML's text
// (frames.HTMLToText), sanitised as display text is. The frame keeps its
// HTML as it came: no sink sanitises HTML.
func TestDisplayShownFromHTMLIsRecorded(t *testing.T) {
	for _, tc := range []struct {
		name, bundle string
		verbatim     bool
		text         string // the dump's
	}{
		{"number", `{"text/plain":1,"text/html":"<b>x</b>"}`, false, "before\nx\n"},
		{"null", `{"text/plain":null,"text/html":"<table><tr><td>a</td><td>b</td></tr></table>"}`, false, "before\na\tb\n"},
		{"no text/plain", `{"text/html":"<p>a</p><p>b</p>"}`, false, "before\na\nb\n"},
		{"escapes, raw and as entities", `{"text/plain":[1],"text/html":"<b>a</b>\u001b]52;c;aGk=\u0007b &#27;[2J\u009bc"}`, false, "before\nab c\n"},
		{"markdown no string either", `{"text/plain":1,"text/markdown":2,"text/html":"<i>y</i>"}`, false, "before\ny\n"},
		{"verbatim", `{"text/plain":1,"text/html":"<b>r</b>&#27;[1md"}`, true, "before\nrd\n"},
		// The protocol's text/plain of display(bundle, raw=True) without one.
		{"empty text/plain", `{"text/plain":"","text/html":"<b>x</b>"}`, false, "before\nx\n"},
		{"empty text/markdown", `{"text/markdown":"","text/plain":"","text/html":"<b>x</b>"}`, false, "before\nx\n"},
		// Unchanged: a non-empty string text/plain is what is shown, an
		// empty one where there is no HTML (an empty display ends a line).
		{"empty text/plain, no HTML", `{"text/plain":""}`, false, "before\n"},
		{"empty text/plain, HTML no string", `{"text/plain":"","text/html":1}`, false, "before\n"},
		{"plain", `{"text/plain":"p","text/html":"<b>x</b>"}`, false, "before\np\n"},
		{"no html", `{"text/plain":1}`, false, "before"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var bundle frames.Bundle
			if err := json.Unmarshal([]byte(tc.bundle), &bundle); err != nil {
				t.Fatal(err)
			}
			s := newSink(t, Options{Verbatim: tc.verbatim})
			s.Write(frames.TypeStdout, []byte("before"))
			out := s.Frame(frames.Frame{Type: frames.TypeDisplay, ID: "c", Bundle: bundle})
			if !maps.EqualFunc(out.Bundle, bundle, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }) {
				t.Errorf("bundle %q, want it as it came: %s", out.Bundle, tc.bundle)
			}
			if d := closeDump(t, s); d.Text != tc.text {
				t.Errorf("dump text %q, want %q", d.Text, tc.text)
			}
			// A terminal shows what the dump has, sanitised the same way.
			if shown := DisplayText(bundle); !strings.HasSuffix(tc.text, "\n"+shown+"\n") && shown != "" {
				t.Errorf("DisplayText %q, not the dump's %q", shown, tc.text)
			}
		})
	}
}

// What the artifact keeps of such a display: the HTML's text sanitised,
// or with Verbatim as it came, as it keeps other display text.
func TestDisplayShownFromHTMLInTheArtifact(t *testing.T) {
	html := `{"text/plain":1,"text/html":"<b>r</b>&#27;[1md"}`
	for _, tc := range []struct {
		name     string
		verbatim bool
		want     string
	}{
		{"sanitised", false, "x\nrd\n"},
		{"verbatim", true, "x\nr\x1b[1md\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var bundle frames.Bundle
			if err := json.Unmarshal([]byte(html), &bundle); err != nil {
				t.Fatal(err)
			}
			// MaxBytes 4: the display spills, and the artifact holds it all.
			s := newSink(t, Options{Store: NewStore(t.TempDir()), MaxBytes: 4, Verbatim: tc.verbatim, InlineLimit: -1})
			s.Write(frames.TypeStdout, []byte("x"))
			s.Frame(frames.Frame{Type: frames.TypeDisplay, ID: "c", Bundle: bundle})
			d := closeDump(t, s)
			got, err := os.ReadFile(d.ArtifactPath)
			if err != nil || string(got) != tc.want {
				t.Errorf("artifact %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// HTML larger than the inline limit is named, not turned into text: where
// nothing moved it (a notebook's sink keeps every payload inline, a sink
// has no store, the store failed), turning it into text cost fourteen
// times its size for HTML of short rows, and a second for a few MiB, and
// the sink's memory is to be bounded whatever a display holds.
func TestDisplayShownFromLargeHTMLIsNamed(t *testing.T) {
	raw := json.RawMessage(`"` + strings.Repeat("<p>row</p>", 110<<10) + `"`) // 1.1 MiB
	for _, tc := range []struct {
		name  string
		opt   Options
		named bool
	}{
		{"notebook", Options{Verbatim: true, InlineLimit: -1, Store: NewStore(t.TempDir())}, true},
		{"no store", Options{}, true},
		{"no store, a higher limit", Options{InlineLimit: 2 << 20}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSink(t, tc.opt)
			bundle := frames.Bundle{"text/html": raw, "application/vnd.plotly.v1+json": json.RawMessage(`{}`)}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			s.Frame(frames.Frame{Type: frames.TypeDisplay, ID: "c", Bundle: bundle})
			runtime.ReadMemStats(&after)
			d := closeDump(t, s)
			if !tc.named {
				if !strings.HasSuffix(d.Text, "row\nrow\n") {
					t.Errorf("dump text %.80q, want the HTML's text", d.Text)
				}
				return
			}
			if want := "[text/html 1.1 MiB]\n"; d.Text != want {
				t.Errorf("dump text %.80q, want %q", d.Text, want)
			}
			if got := after.TotalAlloc - before.TotalAlloc; got > uint64(len(raw)/4) {
				t.Errorf("%d bytes allocated for HTML of %d", got, len(raw))
			}
		})
	}
}

// A renderer names such HTML too, as the dump of a sink with the default
// limit does: `run` shows a display as it comes, where its store failed or
// a payload stayed inline, and its text would cost as much there.
func TestDisplayTextNamesLargeHTML(t *testing.T) {
	html := func(n int) frames.Bundle { // HTML whose JSON value is n bytes
		return frames.Bundle{"text/html": json.RawMessage(`"<p>` + strings.Repeat("x", n-len(`"<p></p>"`)) + `</p>"`)}
	}
	for _, tc := range []struct {
		name   string
		bundle frames.Bundle
		want   string // a prefix of what DisplayText gives
	}{
		{"at the limit", html(DefaultInlineLimit), "xxx"},
		{"above it", html(DefaultInlineLimit + 1), "[text/html 256.0 KiB]"},
		{"1 MiB", html(1 << 20), "[text/html 1.0 MiB]"},
		{"above it, beside text/plain", frames.Bundle{"text/plain": json.RawMessage(`"p"`), "text/html": html(1 << 20)["text/html"]}, "p"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shown := DisplayText(tc.bundle)
			if !strings.HasPrefix(shown, tc.want) {
				t.Errorf("DisplayText %.40q, want it to start with %q", shown, tc.want)
			}
			s := newSink(t, Options{MaxBytes: 2 * DefaultInlineLimit, MaxColumns: 2 * DefaultInlineLimit})
			s.Frame(frames.Frame{Type: frames.TypeDisplay, ID: "c", Bundle: tc.bundle})
			if d := closeDump(t, s); d.Text != shown+"\n" {
				t.Errorf("DisplayText %.40q, not the dump's %.40q", shown, d.Text)
			}
		})
	}
}

// What Verbatim changes in the artifact, as Options.Verbatim says: stream
// text goes in as it came either way; traceback and display text go in as
// the frame carries them, sanitised, or with Verbatim as they came. The
// dump is the same either way.
func TestVerbatimInTheArtifact(t *testing.T) {
	for _, tc := range []struct {
		name     string
		verbatim bool
		artifact string
	}{
		{"sanitised", false, "\x1b[1ms\r\nt\nd\nh\n"},
		{"verbatim", true, "\x1b[1ms\r\n\x1b[31mt\n\x1b[32md\n\x1b[33mh\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// MaxBytes 4: the cell spills, and the artifact holds it all.
			s := newSink(t, Options{Store: NewStore(t.TempDir()), MaxBytes: 4, MaxLines: 100, Verbatim: tc.verbatim, InlineLimit: -1})
			s.Write(frames.TypeStdout, []byte("\x1b[1ms\r\n"))
			s.Frame(frames.Frame{Type: frames.TypeError, ID: "c", Ename: "E", Traceback: []string{"\x1b[31mt"}})
			s.Frame(frames.Frame{Type: frames.TypeDisplay, ID: "c", Bundle: frames.Bundle{"text/plain": json.RawMessage(`"\u001b[32md"`)}})
			s.Frame(frames.Frame{Type: frames.TypeDisplay, ID: "c", Bundle: frames.Bundle{"text/plain": json.RawMessage(`""`), "text/html": json.RawMessage(`"<b>&#27;[33mh</b>"`)}})
			d := closeDump(t, s)
			got, err := os.ReadFile(d.ArtifactPath)
			if err != nil || string(got) != tc.artifact {
				t.Errorf("artifact %q, %v; want %q", got, err, tc.artifact)
			}
			if d.Text != "d\nh\n" {
				t.Errorf("dump text %q, want the tail's last lines, sanitised", d.Text)
			}
		})
	}
}
