//go:build !race

package testkit

// RaceEnabled says whether the test binary was built with -race. Under it
// allocation counts grow many times over (percent's header read: 180 MB
// against 9 MB; sync.Pool, for one, keeps little), so a test that bounds
// the bytes a call allocates
// checks that bound only without it (scripts/test.sh runs such tests in
// its pass without the race detector).
const RaceEnabled = false
