// Command startbench measures what a person in a shell feels: whole
// processes, started side by side in one run (the order rotates every
// round, so load drifts hit every target alike), medians of -runs rounds:
//
//	python3 -c pass                       through PATH (a pyenv shim here)
//	<resolved python> -c pass             the real binary the shim runs
//	evalhost run -c pass                  one-shot, its resolution cached
//	evalhost run --session s -c '1+1'     attached to a warm background process
//	<baseline> run -c pass                another build, with -baseline
//	<venv python> -c pass                 a fresh venv of the resolved binary (-venv, on by default)
//	evalhost run --python <venv> -c pass  the same one-shot under that venv
//
// The venv pair is there because a base interpreter's site-packages can make
// its own start slow (a .pth that imports certifi took 47 ms of 89 here) and
// so hide evalhost's part of the ratio; a project venv does not load it.
// It prints the medians and the ratios issue 16 sets targets for, and
// writes them as JSON with -out. `make bench-start` runs it.
package main
