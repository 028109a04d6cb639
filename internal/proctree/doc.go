// Package proctree reads Linux's /proc for what the reaper and the tool
// bridge need of a process tree: a process's children (through the
// children file of each of its threads, /proc/PID/task/TID/children) and
// whether a process has ended (gone, or every thread of it exited: a zombie
// not yet reaped; a leader that exited alone while a thread runs has not).
//
// Both answers are snapshots: a process may fork or exit right after. It is
// wrong to use them where /proc is not Linux's; Children then reports a
// process with no children, so callers keep that code in _linux.go files.
// Imports stay few: the reaper, whose start is on every run's critical
// path, uses this package.
package proctree
