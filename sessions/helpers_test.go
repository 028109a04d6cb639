package sessions

import (
	"fmt"
	"strconv"
)

func fmtSscan(s string, a ...any) (int, error) { return fmt.Sscan(s, a...) }

func quote(s string) string { return strconv.Quote(s) }
