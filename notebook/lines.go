package notebook

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/evalhost/evalhost/internal/plural"
)

// Range is an inclusive 1-based line range; End 0 means to the last line.
type Range struct{ Start, End int }

// Line is one selected line of a text view.
type Line struct {
	N    int    `json:"line"` // 1-based
	Text string `json:"text"`
}

// ParseRanges reads a selector like "10-20,40-45", "7", or "30-" (to the
// end). Errors match ErrBadLines.
func ParseRanges(spec string) ([]Range, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, fmt.Errorf("%w: empty; want ranges like 10-20,40-45", ErrBadLines)
	}
	var out []Range
	for _, part := range strings.Split(spec, ",") {
		r, err := parseRange(strings.TrimSpace(part))
		if err != nil {
			return nil, fmt.Errorf("%w %q: %s; want ranges like 10-20,40-45 (1-based, inclusive)", ErrBadLines, part, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func parseRange(s string) (Range, error) {
	lo, hi, isRange := strings.Cut(s, "-")
	start, err := lineNumber(lo)
	if err != nil {
		return Range{}, err
	}
	if !isRange {
		return Range{start, start}, nil
	}
	if hi == "" {
		return Range{start, 0}, nil
	}
	end, err := lineNumber(hi)
	if err != nil {
		return Range{}, err
	}
	if end < start {
		return Range{}, fmt.Errorf("end %d is before start %d", end, start)
	}
	return Range{start, end}, nil
}

func lineNumber(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || strings.HasPrefix(s, "+") {
		return 0, fmt.Errorf("%q is not a line number", s)
	}
	if n < 1 {
		return 0, fmt.Errorf("line numbers start at 1, got %d", n)
	}
	return n, nil
}

// SplitText returns the lines of a text view (whose lines all end in "\n").
func SplitText(text string) []string {
	text = strings.TrimSuffix(text, "\n")
	if text == "" {
		return nil
	}
	return strings.Split(text, "\n")
}

// SelectLines returns the lines of text in ranges, in ascending order, each
// line once. A range starting past the last line is an error; one running
// past it stops there.
func SelectLines(text string, ranges []Range) ([]Line, error) {
	lines := SplitText(text)
	seen := make(map[int]bool)
	var nums []int
	for _, r := range ranges {
		if r.Start > len(lines) {
			return nil, fmt.Errorf("%w: line %d is past the end: the text has %s", ErrBadLines, r.Start, plural.Of(len(lines), "line"))
		}
		end := r.End
		if end == 0 || end > len(lines) {
			end = len(lines)
		}
		for n := r.Start; n <= end; n++ {
			if !seen[n] {
				seen[n] = true
				nums = append(nums, n)
			}
		}
	}
	slices.Sort(nums)
	out := make([]Line, len(nums))
	for i, n := range nums {
		out[i] = Line{N: n, Text: lines[n-1]}
	}
	return out, nil
}
