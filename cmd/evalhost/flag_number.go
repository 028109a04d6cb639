package main

import (
	"errors"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// number wraps a numeric flag's value so a value it cannot take is
// refused in words, not in strconv's or time's ("strconv.ParseInt:
// parsing \"1.5\": invalid syntax").
type number struct{ pflag.Value }

func (n number) Set(s string) error {
	err := n.Value.Set(s)
	if err == nil {
		return nil
	}
	if n.Type() == "duration" {
		return errors.New("want a duration such as 500ms, 2s or 1m30s")
	}
	var ne *strconv.NumError
	if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
		return errors.New("want a whole number, and a smaller one")
	}
	if strings.ContainsAny(s, ".eE") {
		return errors.New("want a whole number, without a fraction or exponent")
	}
	return errors.New("want a whole number")
}

// plainNumbers makes fs's numeric flags refuse bad values as number does.
func plainNumbers(fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		if _, wrapped := f.Value.(number); wrapped {
			return
		}
		switch f.Value.Type() {
		case "int", "int64", "uint", "uint64", "duration":
			f.Value = number{f.Value}
		}
	})
}
