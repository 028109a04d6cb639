package runner

import _ "embed" // for the //go:embed strings below

// Every Python file of the runner, each embedded as a string: read-only data
// in the binary, used in place. embed.FS's ReadFile copied all ~150 KB onto
// the heap at every start (~0.5 ms, most of it page faults on the fresh
// heap), before a session could spawn its interpreter (issue 16).
// TestEmbeddedListsEveryFile fails when a .py file here is not listed.
var (
	//go:embed aio.py
	aioPy string
	//go:embed argv.py
	argvPy string
	//go:embed asfile.py
	asfilePy string
	//go:embed bytecode.py
	bytecodePy string
	//go:embed cells.py
	cellsPy string
	//go:embed core.py
	corePy string
	//go:embed cprint.py
	cprintPy string
	//go:embed display.py
	displayPy string
	//go:embed figures.py
	figuresPy string
	//go:embed forks.py
	forksPy string
	//go:embed handlers.py
	handlersPy string
	//go:embed hints.py
	hintsPy string
	//go:embed imports.py
	importsPy string
	//go:embed ipy_capture.py
	ipyCapturePy string
	//go:embed ipy_display.py
	ipyDisplayPy string
	//go:embed ipy_full.py
	ipyFullPy string
	//go:embed ipy_help.py
	ipyHelpPy string
	//go:embed ipy_history.py
	ipyHistoryPy string
	//go:embed ipy_magics.py
	ipyMagicsPy string
	//go:embed ipy_rewrite.py
	ipyRewritePy string
	//go:embed ipy_shell.py
	ipyShellPy string
	//go:embed ipy_system.py
	ipySystemPy string
	//go:embed lineshift.py
	lineshiftPy string
	//go:embed modules.py
	modulesPy string
	//go:embed prelude.py
	preludePy string
	//go:embed printer.py
	printerPy string
	//go:embed runner.py
	runnerPy string
	//go:embed stdio.py
	stdioPy string
	//go:embed terminal.py
	terminalPy string
	//go:embed tracebacks.py
	tracebacksPy string
	//go:embed treeless.py
	treelessPy string
	//go:embed warm.py
	warmPy string
	//go:embed wire.py
	wirePy string
)

// ArgvSource is argv.py, the rule that sets a script's sys.argv, __file__
// and sys.path[0]: the gateway runs it in a kernel, so both backends apply
// the one rule.
func ArgvSource() string { return argvPy }

// embeddedFiles lists them in name order, as Path writes them.
var embeddedFiles = []file{
	{"aio.py", aioPy},
	{"argv.py", argvPy},
	{"asfile.py", asfilePy},
	{"bytecode.py", bytecodePy},
	{"cells.py", cellsPy},
	{"core.py", corePy},
	{"cprint.py", cprintPy},
	{"display.py", displayPy},
	{"figures.py", figuresPy},
	{"forks.py", forksPy},
	{"handlers.py", handlersPy},
	{"hints.py", hintsPy},
	{"imports.py", importsPy},
	{"ipy_capture.py", ipyCapturePy},
	{"ipy_display.py", ipyDisplayPy},
	{"ipy_full.py", ipyFullPy},
	{"ipy_help.py", ipyHelpPy},
	{"ipy_history.py", ipyHistoryPy},
	{"ipy_magics.py", ipyMagicsPy},
	{"ipy_rewrite.py", ipyRewritePy},
	{"ipy_shell.py", ipyShellPy},
	{"ipy_system.py", ipySystemPy},
	{"lineshift.py", lineshiftPy},
	{"modules.py", modulesPy},
	{"prelude.py", preludePy},
	{"printer.py", printerPy},
	{"runner.py", runnerPy},
	{"stdio.py", stdioPy},
	{"terminal.py", terminalPy},
	{"tracebacks.py", tracebacksPy},
	{"treeless.py", treelessPy},
	{"warm.py", warmPy},
	{"wire.py", wirePy},
}
