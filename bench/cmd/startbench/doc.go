// Command startbench measures what a person in a shell feels: whole
// processes, started side by side in one run (the order rotates every
// round, so load drifts hit every target alike), medians of -runs rounds:
//
//	python3 -c pass                       through PATH (a pyenv shim here)
//	<resolved python> -c pass             the real binary the shim runs
//	evalhost run -c pass                  one-shot, its resolution cached
//	evalhost run --session s -c '1+1'     attached to a warm background process
//	<baseline> run -c pass                another build, with -baseline
//
// It prints the medians and the ratios issue 16 sets targets for, and
// writes them as JSON with -out. `make bench-start` runs it.
package main
