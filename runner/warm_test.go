package runner

import (
	"testing"
	"time"
)

// warmed is a cell whose result says whether the warm-up has begun: its
// first import is token, which nothing else at start-up loads.
const warmed = "import sys\n'token' in sys.modules"

// TestWarmUpWaitsWhileBusy: a cell the host sent before ready runs with no
// warm-up beside it, however long it takes (four quiet spells here; the old
// runner began it at ready), and so does the next one, which the host
// pipelined while the first ran: the warm-up only runs once the runner is
// idle. (Sending the second after the first's end made the test depend on
// the round trip's speed: under load it took longer than a quiet spell.)
func TestWarmUpWaitsWhileBusy(t *testing.T) {
	p := start(t, startOpts{first: "import time\ntime.sleep(0.2)\n" + warmed})
	p.seq++
	p.send(map[string]any{"id": "c2", "code": warmed})
	wantResult("False")(t, p.collect("c1", nil))
	wantResult("False")(t, p.collect("c2", nil))
}

// TestWarmUpRunsWhenIdle: once no request has come for a while, the
// runner warms up what the first error needs, all of it: a step cut short
// by this test's own cells goes on at the next quiet spell.
func TestWarmUpRunsWhenIdle(t *testing.T) {
	p := start(t, startOpts{})
	deadline := time.Now().Add(watchdog)
	for {
		c := p.run(warmed + " and 'traceback' in sys.modules and 'ast' in sys.modules")
		if text(t, wantResultFrame(t, c).Bundle, "text/plain") == "True" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no warm-up within %v of idling", watchdog)
		}
		// Idle: longer than WARM_QUIET, the quiet the warm-up waits for.
		time.Sleep(200 * time.Millisecond)
	}
}

// TestWarmUpLeavesCellsModulesIn: the warm-up runs beside cells, so its
// imports must not take a cell's module of a start-up module's name (a
// random.py in the cwd) out of sys.modules, as the runner's own imports in
// the main thread do while it formats an error: a cell that ran meanwhile
// did not find its module (importlib.reload(random): "module random not in
// sys.modules", 5 runs in 60 of TestCellImportsKeepPythonSemantics on 3.9
// under load). Such a runner has no warm-up. An audit hook of the first
// cell sees every import of the runner's other threads, and whether the
// cell's random was in sys.modules then.
func TestWarmUpLeavesCellsModulesIn(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "random.py", "VALUE = 'local random'\n")
	p := start(t, startOpts{pyArgs: []string{"-S"}}) // -S: site imports random itself
	cell := func(code string) cellResult {
		return p.runReq(map[string]any{"code": code, "cwd": dir})
	}
	wantResult("'local random'")(t, cell("import _thread, sys, random\n"+
		"seen, main = [], _thread.get_ident()\n"+
		"def hook(event, args, r=random):\n"+
		"    if event == 'import' and _thread.get_ident() != main:\n"+
		"        seen.append((args[0], sys.modules.get('random') is r))\n"+
		"sys.addaudithook(hook)\n"+
		"random.VALUE"))
	waitWarmEnded(t, p, dir)
	wantResult("[]")(t, cell("[name for name, kept in seen if not kept]"))
	wantResult("'local random'")(t, cell("import importlib\nimportlib.reload(random).VALUE"))
}

// waitWarmEnded waits until the warm-up has begun (warm.py is loaded) and
// its thread has ended, idling between cells run in cwd.
func waitWarmEnded(t *testing.T, p *proc, cwd string) {
	t.Helper()
	const ended = "import sys\n" +
		"def warming(f):\n" +
		"    while f is not None:\n" +
		"        if f.f_code.co_name == '_warm':\n" +
		"            return True\n" +
		"        f = f.f_back\n" +
		"    return False\n" +
		"'_evalhost_warm' in sys.modules and not any(warming(f) for f in sys._current_frames().values())"
	deadline := time.Now().Add(watchdog)
	for text(t, wantResultFrame(t, p.runReq(map[string]any{"code": ended, "cwd": cwd})).Bundle, "text/plain") != "True" {
		if time.Now().After(deadline) {
			t.Fatalf("the warm-up did not begin and end within %v", watchdog)
		}
		time.Sleep(200 * time.Millisecond) // longer than WARM_QUIET
	}
}
