// Package launch starts reaper processes: the re-execution of the running
// program as a reaper (Process), and a spare reaper started ahead of its
// child (Begin, Take). Package reaper is the API that uses them; this
// package is apart so that a program's own package init can start the
// spare as early as Go allows, before the inits of the rest of the program
// (cmd/evalhost's package prestart does, for a one-shot run).
//
// Go initialises next the first package, in import-path order, whose
// imports all are; so this package imports only what package reap does
// (and sync), and has no init: TestImportsStayFew. An import here makes
// every one-shot run's interpreter start later (bench/cmd/startbench).
//
// Begin is safe to call from an init and from any goroutine; at most one
// spare is begun per process until Take takes it. Take waits for the start
// Begin began. A spare nobody takes holds a lifeline this process keeps
// open, so it ends when this process exits; reaper.DropSpare ends it
// sooner.
package launch
