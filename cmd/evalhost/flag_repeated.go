package main

import (
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// repeated is a flag's value that each use appends to, as pflag's
// StringArray, whose default each registration formats through a CSV
// writer and its 4 KiB buffer: run registers ten of them, on every
// command's way to its interpreter.
type repeated struct{ to *[]string }

func (r repeated) Set(s string) error { *r.to = append(*r.to, s); return nil }

func (r repeated) Type() string { return "stringArray" }

// String is empty for no values, so help shows no default.
func (r repeated) String() string {
	if r.to == nil || len(*r.to) == 0 {
		return ""
	}
	q := make([]string, len(*r.to))
	for i, s := range *r.to {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ",") + "]"
}

// repeatedVarP defines a repeatable string flag that appends to p.
func repeatedVarP(fs *pflag.FlagSet, p *[]string, name, shorthand, usage string) {
	fs.VarP(repeated{p}, name, shorthand, usage)
}
