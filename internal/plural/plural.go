package plural

import "fmt"

// integer is the counts a message holds.
type integer interface {
	~int | ~int32 | ~int64 | ~uint | ~uint32 | ~uint64
}

// Noun is noun as n of it are said: "cell" for 1, "cells" otherwise.
func Noun[N integer](n N, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

// Of is n with its noun: "1 cell", "3 cells".
func Of[N integer](n N, noun string) string {
	return fmt.Sprintf("%d %s", n, Noun(n, noun))
}
