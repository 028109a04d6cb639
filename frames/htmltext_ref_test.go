package frames

import (
	"html"
	"regexp"
	"strings"
	"sync"
)

// regexpHTMLToText is HTMLToText as it was, five regular expressions: kept
// to measure against (BenchmarkHTMLToText).
func regexpHTMLToText(s string) string {
	s = refDrop().ReplaceAllString(s, "")
	s = refBreak().ReplaceAllString(s, "\n")
	s = refCell().ReplaceAllString(s, "\t")
	s = refTag().ReplaceAllString(s, "")
	s = html.UnescapeString(s)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.TrimSpace(refBlank().ReplaceAllString(strings.Join(lines, "\n"), "\n\n"))
}

var (
	refDrop  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?is)<(script|style)[^>]*>.*?</(script|style)>`) })
	refBreak = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)<(br|/p|/div|/tr|/h[1-6]|/li|/table)[^>]*>`) })
	refCell  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)</t[dh]>`) })
	refTag   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`<[^>]*>`) })
	refBlank = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\n{3,}`) })
)
