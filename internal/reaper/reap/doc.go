// Package reap is the reaper process itself: the code that runs when
// package reaper re-executes the program with EnvVar set. Its init takes
// over (serves as the reaper and exits) before main.
//
// Every reaper pays the start of the whole program it is part of, so this
// package imports only bytes, os, os/signal, strconv, syscall and time, and
// internal/proctree, which imports only those and has no init
// (TestImportsStayFew). Go initialises next the first package, in
// import-path order, whose imports all are, so this init runs once those
// few and the ready packages that sort before it have: about twenty of the
// standard library's, unicode the last. Not strings: it sorts late, so it
// waits behind every ready package that sorts before it (reflect, fmt,
// log), and once it is done bufio, compress, crypto, encoding/gob,
// encoding/json and flag, which sort before this package, are ready too:
// importing it made every reaper run their inits (strs.go; reaper's
// TestReaperInitComesEarly). The
// init of the rest (the MCP SDK, its JSON and base64, image, the runner's
// embedded files) never runs in a reaper. Keep it that way: an import here
// makes every interpreter start slower
// (bench/cmd/startbench; GODEBUG=inittrace=1 shows what ran).
//
// A spare reaper (EnvVar Spare) learns its child from one message, Spec
// with the child's descriptors, on a Unix socket; Spec.Encode is what
// package reaper sends. Nothing else here is to be called; package reaper
// is the API. A program that links package reaper links this one.
package reap
