package percent

import (
	"strings"
	"testing"
)

// A header's value that jupytext cannot write is named in the refusal
// quoted when it holds a control character: the script is often someone
// else's (a cloned repository), and a raw value could drive the reader's
// terminal or fake a line of advice.
func TestHeaderRefusalShowsValues(t *testing.T) {
	for _, tc := range []struct {
		name, value, shown string
	}{
		{"a plain tagged value", `!!binary "aGk="`, `aGk= is tagged !!binary`},
		{"a tagged value with an escape", `!!binary "a\e[2J\nevalhost: fine"`, `"a\x1b[2J\nevalhost: fine" is tagged !!binary`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "# ---\n# jupyter:\n#   x: " + tc.value + "\n# ---\n\n# %%\n1\n"
			_, err := ReadNotebook(src)
			if err == nil || !strings.Contains(err.Error(), tc.shown) || strings.ContainsAny(err.Error(), "\x1b\n") {
				t.Fatalf("ReadNotebook: %q; want a refusal saying %q, no control character raw", err, tc.shown)
			}
		})
	}
}
