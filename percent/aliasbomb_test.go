package percent

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// aliasBomb is a "jupyter:" section of levels lists (or mappings), each
// nine aliases of the one before: 9^levels values once expanded.
func aliasBomb(levels int, how string) string {
	lines := []string{`#   l0: &l0 ["x", "x", "x", "x", "x", "x", "x", "x", "x"]`}
	if how != "list" {
		lines = []string{`#   l0: &l0 {a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8, i: 9}`}
	}
	for i := 1; i <= levels; i++ {
		p := fmt.Sprintf("*l%d", i-1)
		nine := strings.Repeat(p+", ", 8) + p
		switch how {
		case "list":
			lines = append(lines, fmt.Sprintf("#   l%d: &l%d [%s]", i, i, nine))
		case "values":
			// Each key's value an alias, and a merge key's pairs.
			lines = append(lines, fmt.Sprintf("#   l%d: &l%d {<<: %s, a1: %s, a2: %s, a3: %s, a4: %s, a5: %s, a6: %s, a7: %s, a8: %s}", i, i, p, p, p, p, p, p, p, p, p))
		case "merge list":
			// A merge key's list: the pairs themselves repeat.
			lines = append(lines, fmt.Sprintf("#   l%d: &l%d {<<: [%s]}", i, i, nine))
		}
	}
	return jupyterHeader(lines...) + "# %%\nx = 1\n"
}

// TestReadNotebookBoundsAliases: a header whose aliases repeat a list or
// mapping exponentially (a "billion laughs") is refused, as -y and -f
// parameters are, not expanded: nine levels took nb run past 7.8 GB of
// memory and a minute. A few aliases, as people write them, are read.
func TestReadNotebookBoundsAliases(t *testing.T) {
	for _, tc := range []struct {
		name    string
		src     string
		refused bool
	}{
		{"a few aliases", aliasBomb(2, "list"), false},
		{"a few merged aliases", aliasBomb(2, "values"), false},
		{"a few merge lists", aliasBomb(2, "merge list"), false},
		{"nine to the seventh values", aliasBomb(7, "list"), true},
		{"nine to the seventh merged", aliasBomb(7, "values"), true},
		{"nine to the seventh merge lists", aliasBomb(7, "merge list"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadNotebook(tc.src)
			if !tc.refused {
				if err != nil {
					t.Fatalf("ReadNotebook: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrBadHeader) || !strings.Contains(err.Error(), "aliases") {
				t.Fatalf("ReadNotebook: %v; want ErrBadHeader saying the aliases expand too far", err)
			}
		})
	}
}

// TestReadNotebookBoundsMergedPairs: a merge key's list of many aliases
// repeats their pairs before any value is read; those pairs are counted
// too, so a wide merge of merges is refused without being built (9
// million pairs, hundreds of MB, were).
func TestReadNotebookBoundsMergedPairs(t *testing.T) {
	all := strings.Repeat("*l1, ", 999) + "*l1"
	src := jupyterHeader(`#   l0: &l0 {a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8, i: 9}`,
		"#   l1: &l1 {<<: ["+strings.Repeat("*l0, ", 999)+"*l0]}",
		"#   l2: {<<: ["+all+"]}") + "# %%\nx = 1\n"
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ReadNotebook(src)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrBadHeader) || !strings.Contains(err.Error(), "aliases") {
		t.Errorf("ReadNotebook: %v; want ErrBadHeader saying the aliases expand too far", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 && !testkit.RaceEnabled {
		t.Errorf("ReadNotebook allocated %d bytes; want under 64 MiB", alloc)
	}
}

// TestIpynbOfWideMetadata: a header of many keys, and a marker of many
// options, become the notebook's metadata at a cost that grows with their
// number, not its square: each key was set by a copy of all the keys
// before it (5,000 header keys allocated ~700 MB; 100,000, which the
// header's bound lets through, took minutes).
func TestIpynbOfWideMetadata(t *testing.T) {
	const n = 5000
	var header, options strings.Builder
	for i := range n {
		fmt.Fprintf(&header, "#   k%d: %d\n", i, i)
		fmt.Fprintf(&options, " k%d=%d", i, i)
	}
	for _, tc := range []struct{ name, src string }{
		{"header keys", "# ---\n# jupyter:\n" + header.String() + "# ---\n# %%\nx = 1\n"},
		{"marker options", "# %%" + options.String() + "\nx = 1\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			script, err := ReadNotebook(tc.src)
			if err != nil {
				t.Fatal(err)
			}
			nb, err := script.Ipynb(false)
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 && !testkit.RaceEnabled {
				t.Errorf("%d keys: ReadNotebook and Ipynb allocated %d bytes; want under 64 MiB", n, alloc)
			}
			if tc.name == "header keys" && string(nb.Metadata("k4999")) != "4999" {
				t.Errorf("metadata k4999: %s, want 4999", nb.Metadata("k4999"))
			}
		})
	}
}
