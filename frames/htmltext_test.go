package frames

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestHTMLToText(t *testing.T) {
	for _, tc := range []struct{ name, html, want string }{
		{"a table", "<table><tr><td>a</td><td>b</td></tr></table>", "a\tb"},
		{"blocks", "<p>a</p><p>b</p><div>c<div>d</div></div>", "a\nb\nc\nd"},
		{"br", "a<br>b<br/><br>c<br><br><br><br>d", "a\nb\n\nc\n\nd"},
		{"inline", "<b>bold</b> and <i>it</i>al<span>ic</span>", "bold and italic"},
		{"whitespace collapses", "  a \n\t b  \r\n<p>\n  c\n</p>  ", "a b\nc"},
		{"pre keeps it", "x<pre>\n  a\tb\n  c</pre>y", "x\n  a\tb\n  c\ny"},
		{"only the newline right after <pre> goes", "y<pre><b></b>\nx</pre>", "y\n\nx"},
		{"entities", "a &amp; b &lt;c&gt; &eacute;&#233;&#xe9; &nbsp;|&#155;&#0;", "a & b <c> ééé \u00a0|\u203a\ufffd"},
		{"script and style dropped", "a<script>x = '<p>';</script>b<style>p{}</style>c<title>t</title>d", "abcd"},
		{"an unclosed script drops the rest", "a<script>x<p>y", "a"},
		{"comments dropped", "a<!-- <p>x</p> -->b<!DOCTYPE html>c", "abc"},
		{"a lone angle bracket is text", "a < b and c > d", "a < b and c > d"},
		{"control characters pass", "a\x1b[1mb&#27;c\x00", "a\x1b[1mb\x1bc\x00"},
		{"cells trimmed, empty ones kept", "<table><tr><td> a </td><td></td><td>b </td><td></td></tr><tr><td></td><td>c</td></tr></table>", "a\t\tb\n\tc"},
		{"a block in a cell keeps the row", "<table><tr><td><p>a</p></td><td><div>b</div></td></tr></table>", "a\tb"},
		{"a nested table keeps the outer row's cells", "<table><tr><td>x</td><td><table><tr><td>y</td></tr></table></td><td>z</td></tr>" +
			"<tr><td></td><td>w</td></tr></table>", "x\ty\tz\n\tw"},
		{"a stray table end keeps the row", "<td>a</td></table><td>b</td>", "a\tb"},
		{"list", "<ul>\n <li>one</li>\n <li>two</li>\n</ul>after", "one\ntwo\nafter"},
		{"headings", "<h1>Title</h1>text<h2>Sub</h2>", "Title\ntext\nSub"},
		{"upper case tags", "<TABLE><TR><TD>a</TD><TH>b</TH></TR></TABLE><BR>c", "a\tb\nc"},
		{"empty", "", ""},
		{"only tags", "<div><p></p></div>", ""},
		{"a DataFrame", pandasTable(2), "\ta\tb\tname\n" +
			"idx\n" +
			"0\t0\t0.5\trow <0>\n" +
			"1\t1\t1.5\trow <1>\n" +
			"2 rows × 3 columns"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := HTMLToText(tc.html); got != tc.want {
				t.Errorf("HTMLToText(%q)\n = %q\nwant %q", tc.html, got, tc.want)
			}
		})
	}
}

// pandasTable is HTML as a DataFrame's _repr_html_ makes it, of rows rows.
func pandasTable(rows int) string {
	var b strings.Builder
	b.WriteString(`<div>
<style scoped>
    .dataframe tbody tr th:only-of-type {
        vertical-align: middle;
    }

    .dataframe thead th {
        text-align: right;
    }
</style>
<table border="1" class="dataframe">
  <thead>
    <tr style="text-align: right;">
      <th></th>
      <th>a</th>
      <th>b</th>
      <th>name</th>
    </tr>
    <tr>
      <th>idx</th>
      <th></th>
      <th></th>
      <th></th>
    </tr>
  </thead>
  <tbody>
`)
	for i := range rows {
		fmt.Fprintf(&b, "    <tr>\n      <th>%d</th>\n      <td>%d</td>\n      <td>%d.5</td>\n      <td>row &lt;%d&gt;</td>\n    </tr>\n", i, i, i, i)
	}
	fmt.Fprintf(&b, "  </tbody>\n</table>\n<p>%d rows × 3 columns</p>\n</div>", rows)
	return b.String()
}

// pandasTableOf is pandasTable of about n bytes.
func pandasTableOf(n int) string {
	unit := len(pandasTable(1001)) - len(pandasTable(1))
	return pandasTable(n * 1000 / unit)
}

func BenchmarkHTMLToText(b *testing.B) {
	for _, size := range []int{1 << 20, 10 << 20} {
		s := pandasTableOf(size)
		for _, impl := range []struct {
			name string
			f    func(string) string
		}{{"tokenizer", HTMLToText}, {"regexp", regexpHTMLToText}} {
			b.Run(fmt.Sprintf("%dMiB/%s", size>>20, impl.name), func(b *testing.B) {
				b.SetBytes(int64(len(s)))
				for b.Loop() {
					impl.f(s)
				}
			})
		}
	}
}

// HTMLToText never fails, and its text is UTF-8 where the HTML is (a
// bundle's text always is: JSON decoding makes it so).
func FuzzHTMLToText(f *testing.F) {
	for _, s := range []string{"<table><tr><td>a</td><td>b</td></tr></table>", "a<br>b<pre>\nc\td</pre>",
		"<script>x</script>&#27;]52;c;&#7;&#xD800;&#x110000;", "<p a=/>x</P>&amp<td>\x00\r\n", pandasTable(2), "\xff<b\xfe>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := HTMLToText(s)
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("HTMLToText(%q) = %q: not UTF-8", s, got)
		}
		if strings.TrimRight(got, " \t\n") != got || strings.HasPrefix(got, "\n") {
			t.Fatalf("HTMLToText(%q) = %q: starts with a line break or ends with white space", s, got)
		}
		if text := (Bundle{"text/html": AppendString(nil, s)}).DisplayText(); strings.ContainsFunc(text, func(r rune) bool {
			return r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f
		}) {
			t.Fatalf("DisplayText of %q = %q: a control character", s, text)
		}
	})
}
