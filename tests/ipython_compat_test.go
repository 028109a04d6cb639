package tests

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// Notebooks written the Jupyter way (IPython.display, display ids,
// clear_output loops, shell escapes, %%capture) run through `nb run` on the
// runner backend give the same outputs as ipykernel gives them.
func TestNotebookOutputsMatchIPykernel(t *testing.T) {
	testkit.NeedModuleIn(t, "python3", "nbclient, ipykernel", "nbclient ipykernel")
	dir := t.TempDir()
	in := filepath.Join(dir, "compat.ipynb")
	writeNotebook(t, in,
		"from IPython.display import display, clear_output, update_display, SVG, Image, Markdown, HTML, JSON\nimport base64",
		"for i in range(3):\n    clear_output(wait=True)\n    print('step', i)",
		"h = display(Markdown('**first**'), display_id=True)",
		"h.update(Markdown('**updated**'))",
		"display(HTML('<b>by id</b>'), display_id='fixed')",
		"update_display(HTML('<b>changed from a later cell</b>'), display_id='fixed')",
		`display(SVG('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>'))`,
		"png = base64.b64decode('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==')\ndisplay(Image(data=png))",
		"display(JSON({'a': [1, 2]}))\n6 * 7",
		"_ + 1",
		"!echo from a shell escape",
		"files = !printf 'a\\nb\\n'\nprint(files)",
		"%%capture captured\nprint('hidden')\ndisplay(HTML('<i>hidden</i>'))",
		"print(captured.stdout.strip(), len(captured.outputs))",
		"print('before clear')\nclear_output()\nprint('after clear')",
	)
	out := filepath.Join(dir, "ours.ipynb")
	if output, err := command(t, "nb", "run", in, "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("nb run: %v\n%s", err, output)
	}
	cmp := exec.Command("python3", "testdata/compare_ipykernel.py", in, out)
	if output, err := cmp.CombinedOutput(); err != nil {
		t.Fatalf("outputs differ from ipykernel's: %v\n%s", err, output)
	}
}
