package runner

import "testing"

// A script's cells (inScript or argv) write with python3's codecs for the
// interpreter's environment, here PYTHONIOENCODING's strict handler; every
// other cell (serve's, MCP's, a notebook's) with UTF-8 and
// backslashreplace, so no text of its is lost to an encoding error, before
// a script's cells and after them. A cell's own reconfigure stays.
func TestStdioCodecsByCell(t *testing.T) {
	p := start(t, startOpts{env: []string{"PYTHONIOENCODING=utf-8:strict"}})
	const lone = `import sys; print('x\ud800y'); print('e\ud800', file=sys.stderr)`
	for _, c := range []struct {
		name           string
		req            map[string]any
		ename          string // the error the cell raises; "" for none
		stdout, stderr string
	}{
		{"a notebook cell's text is kept", map[string]any{"code": lone}, "", `x\ud800y` + "\n", `e\ud800` + "\n"},
		{"a script's cell is python3's", map[string]any{"code": lone, "inScript": true}, "UnicodeEncodeError", "", ""},
		{"a cell with argv is a script's", map[string]any{"code": lone, "argv": []string{"-c"}}, "UnicodeEncodeError", "", ""},
		{"its stderr backslashreplaces, as python3's", map[string]any{"code": `import sys; print('e\ud800', file=sys.stderr)`, "inScript": true}, "", "", `e\ud800` + "\n"},
		{"a notebook cell after a script's", map[string]any{"code": lone}, "", `x\ud800y` + "\n", `e\ud800` + "\n"},
		{"a script's own reconfigure", map[string]any{"code": "import sys; sys.stdout.reconfigure(errors='replace')", "inScript": true}, "", "", ""},
		{"lasts into its later cells", map[string]any{"code": `print('x\ud800y')`, "inScript": true}, "", "x?y\n", ""},
		{"and a notebook cell's after", map[string]any{"code": `import sys; print(sys.stdout.errors, sys.stderr.errors)`}, "", "replace backslashreplace\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := p.runReq(c.req)
			if c.ename == "" {
				wantOK(t, res)
			} else {
				wantError(t, res, c.ename)
			}
			if c.ename == "" && (res.stdout != c.stdout || res.stderr != c.stderr) {
				t.Errorf("stdout %q, stderr %q; want %q, %q", res.stdout, res.stderr, c.stdout, c.stderr)
			}
		})
	}
}
