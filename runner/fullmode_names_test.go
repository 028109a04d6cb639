package runner

import (
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// The prelude's names (read, write, env, tree, diff, tool, ...) are not the
// user's variables under --ipython: %reset -f brings them back as IPython
// brings back its own (In, Out, exit), and %pylab does not warn that it
// clobbered them, as it warns for the user's own.
func TestFullIPythonModeStartupNames(t *testing.T) {
	needIPython(t)
	t.Run("reset keeps them", func(t *testing.T) {
		p := start(t, startOpts{env: []string{"EVALHOST_IPYTHON=1"}})
		wantOK(t, p.run("x = 1\ndiff = 'mine'"))
		wantOK(t, p.run("%reset -f"))
		c := p.run("diff('a\\n', 'b\\n')\nprint(callable(tool), callable(read), 'x' in globals())")
		wantOK(t, c)
		if !strings.Contains(c.stdout, "-a\n+b\n") || !strings.Contains(c.stdout, "True True False") {
			t.Errorf("stdout %q, want the helpers' diff and no x", c.stdout)
		}
		c = p.run("%who_ls")
		wantOK(t, c)
		if r := text(t, wantResultFrame(t, c).Bundle, "text/plain"); r != "[]" {
			t.Errorf("%%who_ls after reset = %s, want []", r)
		}
	})
	t.Run("pylab", func(t *testing.T) {
		testkit.NeedModule(t, "matplotlib", "matplotlib")
		p := start(t, startOpts{env: []string{"EVALHOST_IPYTHON=1"}})
		c := p.run("%pylab inline")
		wantOK(t, c)
		if strings.Contains(c.stderr, "clobbered") || !strings.Contains(c.stderr, "numpy's diff") {
			t.Errorf("stderr %q: want a note on evalhost's diff, no clobbering warning", c.stderr)
		}
		wantResult("array([2, 3])")(t, p.run("diff([1, 3, 6])")) // numpy's, as %pylab means
		wantOK(t, p.run("x = 1\nfft = 'mine'"))
		c = p.run("%pylab inline")
		wantOK(t, c)
		if !strings.Contains(c.stderr, "clobbered these variables: ['fft']") {
			t.Errorf("stderr %q: the user's own fft is clobbered, and IPython says so", c.stderr)
		}
	})
}
