package params

import (
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode"
)

// Values are nil, bool, *big.Int, float64, string, []any and Map.

// Resolve types a -p value as papermill's CLI does (_resolve_type):
// "True", "False" and "None" are those values, then whatever Python's
// int() reads is an int and whatever float() reads a float; anything else
// stays a string.
func Resolve(s string) any {
	switch s {
	case "True":
		return true
	case "False":
		return false
	case "None":
		return nil
	}
	if n, ok := pyInt(s); ok {
		return n
	}
	if f, ok := pyFloat(s); ok {
		return f
	}
	return s
}

var (
	// Compiled on first use: at init they would cost every evalhost start.
	pyIntRe   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[+-]?[0-9](_?[0-9])*$`) })
	pyFloatRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[+-]?(([0-9](_?[0-9])*)(\.([0-9](_?[0-9])*)?)?|\.[0-9](_?[0-9])*)([eE][+-]?[0-9](_?[0-9])*)?$`)
	})
	pyInfRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^[+-]?(inf|infinity|nan)$`) })
)

// pyArg is the text as Python's int() and float() read it: surrounding
// whitespace stripped, any Unicode decimal digit read as its ASCII one.
func pyArg(s string) string {
	s = strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f })
	return strings.Map(func(r rune) rune {
		if r > unicode.MaxASCII && unicode.Is(unicode.Nd, r) {
			return '0' + digitValue(r)
		}
		return r
	}, s)
}

// digitValue of a decimal digit: Unicode puts each script's 0..9 in a run.
func digitValue(r rune) rune {
	start := r
	for start > 0 && unicode.Is(unicode.Nd, start-1) {
		start--
	}
	return (r - start) % 10
}

// maxIntDigits is how many decimal digits Python's int() reads (3.11's
// sys.int_info.default_max_str_digits, in 3.8.14+ too); more is a
// ValueError, which papermill's -p takes as "not an int".
const maxIntDigits = 4300

// decimalDigits counts the digits of a decimal int literal, as Python's
// limit counts them (not its sign or underscores).
func decimalDigits(s string) int {
	n := 0
	for _, c := range s {
		if c >= '0' && c <= '9' {
			n++
		}
	}
	return n
}

func pyInt(s string) (*big.Int, bool) {
	s = pyArg(s)
	if !pyIntRe().MatchString(s) || decimalDigits(s) > maxIntDigits {
		return nil, false
	}
	return new(big.Int).SetString(strings.ReplaceAll(strings.TrimPrefix(s, "+"), "_", ""), 10)
}

func pyFloat(s string) (float64, bool) {
	s = pyArg(s)
	if pyInfRe().MatchString(s) {
		f, _ := strconv.ParseFloat(strings.TrimPrefix(strings.ToLower(s), "+"), 64)
		if strings.Contains(strings.ToLower(s), "nan") {
			f = math.NaN()
		}
		return f, true
	}
	if !pyFloatRe().MatchString(s) || s == "+" || s == "-" || s == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
	if err != nil && !isRange(err) {
		return 0, false
	}
	return f, true // past the range Python gives inf or 0, as ParseFloat does
}

func isRange(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}
