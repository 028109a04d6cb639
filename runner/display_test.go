package runner

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// ipythonModes runs a test with IPython importable (the real one, patched at
// import; skipped where it is not installed) and hidden (python -S: no
// site-packages, so the runner's shim).
func ipythonModes(t *testing.T, fn func(t *testing.T, p *proc, real bool)) {
	for _, m := range []struct {
		name string
		args []string
		real bool
	}{{"real IPython", nil, true}, {"shim without IPython", []string{"-S"}, false}} {
		t.Run(m.name, func(t *testing.T) {
			if m.real {
				needIPython(t)
			}
			p := start(t, startOpts{pyArgs: m.args})
			c := p.run("import IPython\ngetattr(IPython, 'evalhost_shim', False)")
			wantOK(t, c)
			wantResult(map[bool]string{true: "False", false: "True"}[m.real])(t, c)
			fn(t, p, m.real)
		})
	}
}

func displays(c cellResult) []frames.Frame {
	var ds []frames.Frame
	for _, f := range c.frames {
		switch f.Type {
		case frames.TypeDisplay, frames.TypeUpdateDisplay, frames.TypeClearOutput:
			ds = append(ds, f)
		}
	}
	return ds
}

func TestIPythonDisplay(t *testing.T) {
	png := "\x89PNG\r\n\x1a\n0000"
	ipythonModes(t, func(t *testing.T, p *proc, real bool) {
		wantOK(t, p.run("from IPython.display import (display, Markdown, HTML, SVG, Image, JSON, clear_output, "+
			"update_display, display_markdown, DisplayHandle)"))
		for _, tc := range []struct {
			name, code string
			check      func(t *testing.T, ds []frames.Frame)
		}{
			{"markdown", "display(Markdown('**m**'))", func(t *testing.T, ds []frames.Frame) {
				if text(t, ds[0].Bundle, "text/markdown") != "**m**" || text(t, ds[0].Bundle, "text/plain") != "<IPython.core.display.Markdown object>" {
					t.Errorf("bundle %v", ds[0].Bundle)
				}
			}},
			{"html and svg", "display(HTML('<i>h</i>'), SVG('<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>'))", func(t *testing.T, ds []frames.Frame) {
				if len(ds) != 2 || text(t, ds[0].Bundle, "text/html") != "<i>h</i>" || !strings.HasPrefix(text(t, ds[1].Bundle, "image/svg+xml"), "<svg") {
					t.Errorf("frames %+v", ds)
				}
			}},
			{"image from bytes", "display(Image(data=" + pyBytes(png) + ", width=10))", func(t *testing.T, ds []frames.Frame) {
				b, err := base64.StdEncoding.DecodeString(text(t, ds[0].Bundle, "image/png"))
				if err != nil || string(b) != png {
					t.Errorf("png %q %v", b, err)
				}
				if !strings.Contains(string(ds[0].Metadata), `"width":10`) {
					t.Errorf("metadata %s", ds[0].Metadata)
				}
			}},
			{"raw bundle is sent as given", "display({'application/x-omp-status': {'phase': 'fit', 'n': 3}, 'application/json': [1]}, raw=True)", func(t *testing.T, ds []frames.Frame) {
				b := ds[0].Bundle
				if string(b["application/x-omp-status"]) != `{"phase":"fit","n":3}` || string(b["application/json"]) != `[1]` || text(t, b, "text/plain") != "" {
					t.Errorf("bundle %v", b)
				}
			}},
			{"json", "display(JSON({'a': [1, 2]}))", func(t *testing.T, ds []frames.Frame) {
				if v, ok := ds[0].Bundle["application/json"]; !ok || string(v) != `{"a":[1,2]}` {
					t.Errorf("bundle %v", ds[0].Bundle)
				}
			}},
			{"display_markdown raw", "display_markdown('# t', raw=True)", func(t *testing.T, ds []frames.Frame) {
				if text(t, ds[0].Bundle, "text/markdown") != "# t" {
					t.Errorf("bundle %v", ds[0].Bundle)
				}
			}},
			{"clear_output wait then output", "clear_output(wait=True)\ndisplay(HTML('next'))", func(t *testing.T, ds []frames.Frame) {
				if len(ds) != 2 || ds[0].Type != frames.TypeClearOutput || !ds[0].Wait || ds[1].Type != frames.TypeDisplay {
					t.Errorf("frames %+v", ds)
				}
			}},
			{"handle created", "h = display(Markdown('v1'), display_id='dh1')\ntype(h).__name__", func(t *testing.T, ds []frames.Frame) {
				if ds[0].DisplayID != "dh1" {
					t.Errorf("display id %q", ds[0].DisplayID)
				}
			}},
			{"handle updated from a later cell", "h.update(Markdown('v2'))", func(t *testing.T, ds []frames.Frame) {
				if ds[0].Type != frames.TypeUpdateDisplay || ds[0].DisplayID != "dh1" || text(t, ds[0].Bundle, "text/markdown") != "v2" {
					t.Errorf("frames %+v", ds)
				}
			}},
			{"update_display function", "update_display(HTML('v3'), display_id='dh1')", func(t *testing.T, ds []frames.Frame) {
				if ds[0].Type != frames.TypeUpdateDisplay || ds[0].DisplayID != "dh1" || text(t, ds[0].Bundle, "text/html") != "v3" {
					t.Errorf("frames %+v", ds)
				}
			}},
			{"display_id=True makes a fresh id", "h2 = display('x', display_id=True)\nh2.display('y')", func(t *testing.T, ds []frames.Frame) {
				if len(ds) != 2 || ds[0].DisplayID == "" || ds[0].DisplayID != ds[1].DisplayID {
					t.Errorf("frames %+v", ds)
				}
			}},
			{"DisplayHandle class directly", "DisplayHandle('dh9').display(HTML('z'))", func(t *testing.T, ds []frames.Frame) {
				if ds[0].DisplayID != "dh9" {
					t.Errorf("frames %+v", ds)
				}
			}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				c := p.run(tc.code)
				wantOK(t, c)
				ds := displays(c)
				if len(ds) == 0 {
					t.Fatalf("no display frames: %+v", c.frames)
				}
				tc.check(t, ds)
			})
		}
		c := p.run("type(h).__module__")
		want := map[bool]string{true: "'IPython.core.display_functions'", false: "'_evalhost_display'"}[real]
		wantResult(want)(t, c)
	})
}

func pyBytes(s string) string {
	var b strings.Builder
	b.WriteString("b'")
	for i := 0; i < len(s); i++ {
		b.WriteString("\\x")
		b.WriteString("0123456789abcdef"[s[i]>>4 : s[i]>>4+1])
		b.WriteString("0123456789abcdef"[s[i]&15 : s[i]&15+1])
	}
	b.WriteString("'")
	return b.String()
}

func TestGetIPythonShim(t *testing.T) {
	ipythonModes(t, func(t *testing.T, p *proc, real bool) {
		for _, tc := range []struct{ name, code, result string }{
			{"builtin", "ip = get_ipython()\n(ip.kernel, type(ip.user_ns).__name__, ip.user_ns is globals())", "(None, 'dict', True)"},
			{"from IPython", "from IPython import get_ipython as g\ng() is ip", "True"},
			{"run_line_magic", "ip.run_line_magic('pwd', '') == __import__('os').getcwd()", "True"},
			{"run_cell_magic", "ip.run_cell_magic('capture', 'cc', 'print(5)')\ncc.stdout", "'5\\n'"},
			{"getoutput", "ip.getoutput('echo a; echo b')", "['a', 'b']"},
			{"system", "ip.system('exit 4')\n_exit_code", "4"},
			{"events register", "seen = []\nip.events.register('post_run_cell', lambda r: seen.append(r.success))", ""},
			{"events fired", "seen", "[True]"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				c := p.run(tc.code)
				wantOK(t, c)
				if tc.result != "" {
					wantResult(tc.result)(t, c)
				}
			})
		}
		c := p.run("get_ipython().display_pub.publish({'text/plain': 'p'}, transient={'display_id': 'pub1'})\n" +
			"get_ipython().display_pub.publish({'text/plain': 'q'}, transient={'display_id': 'pub1'}, update=True)")
		wantOK(t, c)
		ds := displays(c)
		if len(ds) != 2 || ds[0].DisplayID != "pub1" || ds[1].Type != frames.TypeUpdateDisplay || text(t, ds[1].Bundle, "text/plain") != "q" {
			t.Errorf("display_pub frames %+v", ds)
		}
	})
}

func TestHistory(t *testing.T) {
	p := start(t, startOpts{})
	for _, code := range []string{"10", "x = 5", "20", "30"} {
		wantOK(t, p.run(code))
	}
	for _, tc := range []struct{ name, code, result string }{
		{"underscores", "(_, __, ___)", "(30, 20, 10)"},
		{"numbered", "(_1, _3, _4)", "(10, 20, 30)"},
		{"Out only for values", "sorted(Out)", "[1, 3, 4, 5, 6]"},
		{"In holds sources", "In[1:3]", "['10', 'x = 5']"},
		{"input shortcuts", "(_i, _i2)", "('In[1:3]', 'x = 5')"},
		{"count", "len(In) - 1", "10"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := p.run(tc.code)
			wantOK(t, c)
			wantResult(tc.result)(t, c)
		})
	}
}

// JSON has no NaN or infinity: a bundle or metadata holding them is sent
// with those values as their repr ("nan", "inf"), as jupyter_client's
// json_clean sends them, instead of a frame that is not JSON, which lost
// the whole output (its text/plain too).
func TestDisplayNonFiniteFloats(t *testing.T) {
	p := start(t, startOpts{})
	c := p.run(`display({"application/json": {"n": float("nan"), "l": [1.5, float("inf"), -float("inf")]}, "text/plain": "t"}, raw=True, metadata={"w": float("nan")})`)
	wantOK(t, c)
	ds := displays(c)
	if len(ds) != 1 {
		t.Fatalf("displays %+v, want one", ds)
	}
	if got := string(ds[0].Bundle["application/json"]); got != `{"n":"nan","l":[1.5,"inf","-inf"]}` {
		t.Errorf("application/json %s", got)
	}
	if text(t, ds[0].Bundle, "text/plain") != "t" || !strings.Contains(string(ds[0].Metadata), `"w":"nan"`) {
		t.Errorf("display %+v: want its text and metadata kept", ds[0])
	}
}
