package sessions

import (
	"fmt"
	"slices"
	"strconv"
	"time"
)

func fmtSscan(s string, a ...any) (int, error) { return fmt.Sscan(s, a...) }

func quote(s string) string { return strconv.Quote(s) }

func sortDurations(d []time.Duration) { slices.Sort(d) }
