package sessions

import (
	"slices"
	"strconv"
	"time"
)

func quote(s string) string { return strconv.Quote(s) }

func sortDurations(d []time.Duration) { slices.Sort(d) }
