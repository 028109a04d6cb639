package runner

import (
	"fmt"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/testkit"
)

// TestTreelessCompileSignal: a signal handler that raises while the first
// cell is compiled (cells._treeless_code, else compile()): the cell fails
// with its error, as it would from compile(), and neither the trace nor the
// warning filter stays behind. The signal is sent by an audit hook at the
// nth event named, counted from the cell's compile's first (its first
// sys.settrace, or compile()'s of "<cell 1>"), so the handler runs at that
// exact point: mostly in the hook, whose own error would be a refusal of
// what only the treeless compile does.
func TestTreelessCompileSignal(t *testing.T) {
	for _, tc := range []struct {
		name, first string
		event       string // the audit event; of code named "<string>" for compile and exec
		nth         int
		handler     string // the handler given to signal.signal; on_signal when ""
	}{
		{name: "as the trace is set", first: "x = 1\nx", event: "sys.settrace", nth: 1},
		{name: "as the trace takes the probe", first: "x = 1\nx", event: "object.__getattr__", nth: 1},
		{name: "as exec compiles", first: "x = 1\nx", event: "compile", nth: 1},
		{name: "as exec runs the code", first: "x = 1\nx", event: "exec", nth: 1},
		{name: "as the trace takes the code", first: "x = 1\nx", event: "object.__getattr__", nth: 3},
		{name: "as the interpreter removes the trace", first: "x = 1\nx", event: "sys.settrace", nth: 2},
		{name: "as the trace is removed", first: "x = 1\nx", event: "sys.settrace", nth: 3},
		{name: "as the trace is removed after a syntax error", first: "x = 1", event: "sys.settrace", nth: 2},
		{name: "as the last expression's trace is set", first: "x = 1\nx", event: "sys.settrace", nth: 4},
		{name: "as compile() compiles", first: "x = 1\nx;", event: "compile", nth: 1},
		{name: "a method as the trace is set", first: "x = 1\nx", event: "sys.settrace", nth: 1, handler: "Handler().on_signal"},
		{name: "a partial as the trace is set", first: "x = 1\nx", event: "sys.settrace", nth: 1, handler: "functools.partial(on_signal)"},
		{name: "a callable object as the trace is set", first: "x = 1\nx", event: "sys.settrace", nth: 1, handler: "Handler()"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			handler := tc.handler
			if handler == "" {
				handler = "on_signal"
			}
			module := fmt.Sprintf("import signal, sys\nEVENT, NTH = %q, %d\nseen = []\nsys.sent = []\n", tc.event, tc.nth) +
				"def hook(event, args):\n" +
				"    if event == 'sys.settrace' or event == 'compile' and args[1] == '<cell 1>':\n        seen.append(None)\n" +
				"    if event != EVENT or not seen or sys.sent:\n        return\n" +
				"    if event == 'compile' and args[1] not in ('<string>', '<cell 1>') or event == 'object.__getattr__' and args[1] != 'f_code':\n        return\n" +
				"    if event == 'exec' and getattr(args[0], 'co_filename', '') != '<string>':\n        return\n" +
				"    seen.append(event)\n" +
				"    if seen.count(event) == NTH:\n        sys.sent.append(event)\n        signal.raise_signal(signal.SIGUSR1)\n" +
				"def on_signal(sig, frame):\n    raise TimeoutError('signal')\n" +
				"class Handler:\n    def on_signal(self, sig, frame):\n        raise TimeoutError('signal')\n    __call__ = on_signal\n" +
				"import functools\nsignal.signal(signal.SIGUSR1, " + handler + ")\nsys.addaudithook(hook)\n"
			if tc.event == "sys.settrace" && !testkit.PythonAtLeast(t, 3, 9) {
				t.Skip("3.8 reports an error in sys.settrace's audit hook as unraisable, not raised")
			}
			dir := t.TempDir()
			writeFile(t, dir, "setup.py", module)
			p := start(t, startOpts{first: tc.first, pyArgs: []string{"-S"}, modules: []string{dir}})
			for _, f := range p.early {
				if f.Type == frames.TypeWarning {
					t.Fatalf("start-up: %s", f.Message)
				}
			}
			c := p.collect("c1", nil)
			c2 := p.run("import _warnings\n(sys.sent, sys.gettrace(), [f for f in _warnings.filters if f[0] == 'error'])")
			sent := text(t, wantResultFrame(t, c2).Bundle, "text/plain")
			if want := fmt.Sprintf("(['%s'], None, [])", tc.event); sent != want {
				t.Errorf("signal sent, trace, filters: %s, want %s", sent, want)
			}
			tb := strings.Join(wantError(t, c, "TimeoutError").Traceback, "\n")
			if !strings.Contains(tb, "on_signal") {
				t.Errorf("traceback lacks the handler:\n%s", tb)
			}
			wantNo(frames.TypeResult)(t, c)
		})
	}
}
