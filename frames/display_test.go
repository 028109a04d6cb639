package frames

import (
	"encoding/json"
	"testing"
)

// A bundle whose text/plain is no string shows its HTML as text, and no
// escape sequence in it (raw, or an entity HTML decodes) reaches the
// terminal: the runner's display(..., raw=True) sends such bundles, and no
// sink sanitises HTML.
func TestDisplayTextOfHTMLIsInert(t *testing.T) {
	for _, tc := range []struct {
		name, bundle, want string
	}{
		{"a table", `{"text/html":"<table><tr><td>a</td><td>b</td></tr></table>"}`, "a\tb"},
		{"plain text first", `{"text/plain":"x\u001b[31m","text/html":"<b>y</b>"}`, "x\x1b[31m"},
		// display(bundle, raw=True) without text/plain: the protocol's is "".
		{"empty text/plain", `{"text/plain":"","text/html":"<b>hi</b>"}`, "hi"},
		{"empty text/markdown", `{"text/markdown":"","text/plain":"p","text/html":"<b>hi</b>"}`, "p"},
		{"empty, no HTML", `{"text/markdown":"","text/plain":"p"}`, "p"},
		{"OSC 52 raw", `{"text/plain":1,"text/html":"a\u001b]52;c;aGk=\u0007b"}`, "a]52;c;aGk=b"},
		{"OSC 52 as entities", `{"text/plain":null,"text/html":"a&#27;]52;c;aGk=&#7;b"}`, "a]52;c;aGk=b"},
		{"C1 CSI", `{"text/plain":["x"],"text/html":"a\u009b2Jb&#155;c"}`, "a2Jb\u203ac"}, // &#155; is ›, as HTML5 decodes it
		// A carriage return is white space in HTML, as the one &#13; makes.
		{"carriage return and DEL", `{"text/html":"a\rb\u007fc&#13;d<pre>e\rf</pre>"}`, "a bc d\ne\nf"},
		{"tabs and lines kept", `{"text/html":"a<br>b<pre>c\td</pre>"}`, "a\nb\nc\td"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b Bundle
			if err := json.Unmarshal([]byte(tc.bundle), &b); err != nil {
				t.Fatal(err)
			}
			if got := b.DisplayText(); got != tc.want {
				t.Errorf("DisplayText() = %q, want %q", got, tc.want)
			}
		})
	}
}
