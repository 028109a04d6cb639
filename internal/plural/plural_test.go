package plural

import (
	"math"
	"testing"
)

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  string
		want string
	}{
		{"one", Of(1, "session"), "1 session"},
		{"two", Of(2, "session"), "2 sessions"},
		{"zero", Of(0, "cell"), "0 cells"},
		{"int64", Of(int64(1), "byte"), "1 byte"},
		{"large int64", Of(int64(math.MaxInt64), "byte"), "9223372036854775807 bytes"},
		{"uint", Of(uint(1), "line"), "1 line"},
		{"large uint64", Of(uint64(math.MaxUint64), "line"), "18446744073709551615 lines"},
		{"several words", Of(1, "earlier chunk"), "1 earlier chunk"},
		{"several words, many", Of(3, "earlier chunk"), "3 earlier chunks"},
		{"noun alone", Noun(1, "character"), "character"},
		{"noun alone, many", Noun(5, "character"), "characters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %q, want %q", tc.got, tc.want)
			}
		})
	}
}
