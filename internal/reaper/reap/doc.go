// Package reap is the reaper process itself: the code that runs when
// package reaper re-executes the program with EnvVar set. Its init takes
// over (serves as the reaper and exits) before main.
//
// Every reaper pays the start of the whole program it is part of, so this
// package imports only os, os/signal, strconv, strings, syscall and time:
// Go initialises a package as soon as its imports are (the first such in
// import-path order), so a reaper's init runs right after those few, and
// the init of the program's other packages (JSON, crypto, image, the MCP
// SDK, ...) never runs in a reaper. Keep it that way: a new import here
// makes every interpreter start slower (bench/cmd/startbench).
//
// Nothing here is to be called; package reaper is the API. A program that
// links package reaper links this one.
package reap
