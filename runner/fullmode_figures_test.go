package runner

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// Figures under --ipython are matplotlib-inline's, as in a Jupyter kernel:
// the formats %config InlineBackend and set_matplotlib_formats choose (the
// runner's own PNG after each cell ignored them), one display per figure.
// figureFormat is a row of the figure-format tests: what a setup cell
// chooses, and the display a plot then gives.
type figureFormat struct {
	name, setup string
	mimes       []string // the display's bundle, text/plain aside
	check       func(t *testing.T, md map[string]any)
}

// wantBackground checks a figure's needs_background metadata ("" for none).
func wantBackground(want string) func(t *testing.T, md map[string]any) {
	return func(t *testing.T, md map[string]any) {
		t.Helper()
		if got, _ := md["needs_background"].(string); got != want {
			t.Errorf("needs_background %q, want %q (metadata %v)", got, want, md)
		}
	}
}

var figureFormats = []figureFormat{
	{name: "png by default", mimes: []string{"image/png"}, check: wantBackground("")},
	{name: "svg", setup: "%config InlineBackend.figure_format = 'svg'", mimes: []string{"image/svg+xml"}},
	{name: "svg after pyplot", setup: "import matplotlib.pyplot\n%config InlineBackend.figure_format = 'svg'", mimes: []string{"image/svg+xml"}},
	{name: "retina is a PNG at twice the size", setup: "%config InlineBackend.figure_format = 'retina'", mimes: []string{"image/png"},
		check: func(t *testing.T, md map[string]any) {
			png, _ := md["image/png"].(map[string]any)
			if png["width"] == nil || png["height"] == nil {
				t.Errorf("metadata %v, want the PNG's width and height", md)
			}
		}},
	{name: "jpeg", setup: "%config InlineBackend.figure_format = 'jpeg'", mimes: []string{"image/jpeg"}},
	{name: "pdf", setup: "%config InlineBackend.figure_format = 'pdf'", mimes: []string{"application/pdf"}},
	{name: "two formats", setup: "%config InlineBackend.figure_formats = {'png', 'svg'}", mimes: []string{"image/png", "image/svg+xml"}},
	{name: "set_matplotlib_formats", setup: "from matplotlib_inline.backend_inline import set_matplotlib_formats\nset_matplotlib_formats('svg')", mimes: []string{"image/svg+xml"}},
	{name: "set_matplotlib_formats with two", setup: "from matplotlib_inline.backend_inline import set_matplotlib_formats\nset_matplotlib_formats('png', 'svg')", mimes: []string{"image/png", "image/svg+xml"}},
	// %config evaluates its value in the cells' namespace, as IPython's does:
	// a papermill parameter may name the format.
	{name: "a value the cells computed", setup: "FMT = 'svg'\n%config InlineBackend.figure_format = FMT", mimes: []string{"image/svg+xml"}},
	{name: "a value continued with a backslash", setup: "%config InlineBackend.figure_format = \\\n    'svg'", mimes: []string{"image/svg+xml"}},
	// matplotlib-inline's needs_background: a transparent figure whose tick
	// labels are all dark needs a light background, all light a dark one.
	{name: "a transparent figure needs a light background", setup: "import matplotlib\nmatplotlib.rcParams['figure.facecolor'] = (1, 1, 1, 0)",
		mimes: []string{"image/png"}, check: wantBackground("light")},
	{name: "light tick labels need a dark one", setup: "import matplotlib\nmatplotlib.rcParams.update({'figure.facecolor': 'none', 'xtick.color': 'white', 'ytick.color': '#eee'})",
		mimes: []string{"image/png"}, check: wantBackground("dark")},
	{name: "mixed tick labels need none", setup: "import matplotlib\nmatplotlib.rcParams.update({'figure.facecolor': 'none', 'xtick.color': 'white'})",
		mimes: []string{"image/png"}, check: wantBackground("")},
	{name: "after %matplotlib inline", setup: "%matplotlib inline\n%config InlineBackend.figure_format = 'svg'", mimes: []string{"image/svg+xml"}},
}

func TestFullIPythonModeFigureFormats(t *testing.T) {
	needIPython(t)
	testkit.NeedModule(t, "matplotlib", "matplotlib")
	for _, tc := range figureFormats {
		t.Run(tc.name, func(t *testing.T) { checkFigureFormat(t, tc, []string{"EVALHOST_IPYTHON=1"}) })
	}
}

// checkFigureFormat runs tc on a runner of its own started with env.
func checkFigureFormat(t *testing.T, tc figureFormat, env []string) {
	t.Helper()
	p := start(t, startOpts{env: env})
	if tc.setup != "" {
		wantOK(t, p.run(tc.setup))
	}
	c := p.run("import matplotlib.pyplot as plt\nplt.plot([1, 2, 3]);")
	wantOK(t, c)
	ds := displays(c)
	if len(ds) != 1 {
		t.Fatalf("want one display, got %d: %+v", len(ds), c.frames)
	}
	var got []string
	for _, k := range keys(ds[0].Bundle) {
		if k != "text/plain" {
			got = append(got, k)
		}
	}
	slices.Sort(got)
	if strings.Join(got, " ") != strings.Join(tc.mimes, " ") {
		t.Errorf("display has %v, want %v", got, tc.mimes)
	}
	if tc.check != nil {
		var md map[string]any
		if len(ds[0].Metadata) > 0 {
			if err := json.Unmarshal(ds[0].Metadata, &md); err != nil {
				t.Fatal(err)
			}
		}
		tc.check(t, md)
	}
}

// A GUI backend cannot show anything here: %matplotlib qt says so and
// figures go out inline, in the formats chosen.
func TestFullIPythonModeGUIBackendGoesInline(t *testing.T) {
	needIPython(t)
	testkit.NeedModule(t, "matplotlib", "matplotlib")
	p := start(t, startOpts{env: []string{"EVALHOST_IPYTHON=1"}})
	c := p.run("%matplotlib qt\n%config InlineBackend.figure_format = 'svg'")
	wantOK(t, c)
	if !strings.Contains(c.stderr, "without a GUI event loop") {
		t.Errorf("stderr %q, want why qt is not used", c.stderr)
	}
	c = p.run("import matplotlib.pyplot as plt\nplt.plot([1, 2, 3]);")
	wantOK(t, c)
	if ds := displays(c); len(ds) != 1 || text(t, ds[0].Bundle, "image/svg+xml") == "" {
		t.Errorf("want one SVG display: %+v", c.frames)
	}
}

// %matplotlib alone picks the default backend, matplotlib-inline's, without
// a note (IPython 8 gave the note matplotlib's "auto" object for a name).
func TestFullIPythonModeMatplotlibDefault(t *testing.T) {
	needIPython(t)
	testkit.NeedModule(t, "matplotlib", "matplotlib")
	p := start(t, startOpts{env: []string{"EVALHOST_IPYTHON=1"}})
	c := p.run("%matplotlib")
	wantOK(t, c)
	if c.stderr != "" || !strings.Contains(c.stdout, "matplotlib_inline") {
		t.Errorf("stdout %q, stderr %q; want the inline backend, no note", c.stdout, c.stderr)
	}
}

// The inline backend is the runner's process's default, not its children's:
// they get MPLBACKEND=Agg, as in the runner's own mode. ipykernel's value in
// the environment made `import matplotlib` fail in a child Python without
// matplotlib-inline (a venv a cell ran with !python), and a child script's
// plt.show() print "Figure(640x480)". A MPLBACKEND of the user's is kept.
func TestFullIPythonModeChildBackend(t *testing.T) {
	needIPython(t)
	testkit.NeedModule(t, "matplotlib", "matplotlib")
	cell := "import subprocess, sys, matplotlib\n" +
		"child = subprocess.run([sys.executable, '-c', 'import os; print(os.environ.get(\"MPLBACKEND\"))'],\n" +
		"                       capture_output=True, text=True).stdout.strip()\n" +
		"print(child, matplotlib.get_backend().rsplit('.', 1)[-1])\n"
	for _, tc := range []struct {
		name, setup string
		env         []string
		want        string // the child's MPLBACKEND, then the runner's backend
	}{
		{name: "default", want: "Agg backend_inline"},
		{name: "MPLBACKEND of the user's", env: []string{"MPLBACKEND=svg"}, want: "svg svg"},
		{name: "set by a cell", setup: "import os\nos.environ['MPLBACKEND'] = 'pdf'", want: "pdf pdf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := start(t, startOpts{env: append([]string{"EVALHOST_IPYTHON=1"}, tc.env...)})
			if tc.setup != "" {
				wantOK(t, p.run(tc.setup))
			}
			c := p.run(cell)
			wantOK(t, c)
			if got := strings.TrimSpace(c.stdout); got != tc.want && got != strings.Replace(tc.want, "backend_inline", "inline", 1) {
				t.Errorf("child's MPLBACKEND and the runner's backend %q, want %q", got, tc.want)
			}
		})
	}
}
