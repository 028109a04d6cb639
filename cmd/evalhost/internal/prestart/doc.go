// Package prestart starts, while the rest of evalhost is still being
// initialised, the reaper a one-shot `evalhost run` is about to need
// (reaper.Prestart): its init is the point of it. Go initialises packages
// in import-path order as their imports become ready, so this init runs
// right after package reaper's, about a millisecond before main, and the
// reaper's own start overlaps with the init of the MCP SDK, the YAML
// parser, the runner's files and the rest. cmd/evalhost imports it for
// that effect alone; run calls reaper.Prestart again (a no-op when this
// one did) and ends an unused spare with reaper.DropSpare.
//
// Guessing wrong costs little: a spare nobody uses is one sleeping process
// until DropSpare or evalhost's exit; a run that did not get one starts
// its reaper on demand.
package prestart
