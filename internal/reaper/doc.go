// Package reaper starts a process under a small watcher, the reaper, so that
// nothing the process starts outlives the program that asked for it.
//
// Start re-executes the running binary (which must link this package: the
// init of its sub-package reap takes over when the binary is started as a
// reaper, before main and before most packages' init) with
// the child's descriptors, and the reaper starts the child in its own
// session. On Linux the binary is re-executed through /proc/self/exe, so it
// may have been replaced or deleted since; elsewhere its path must still
// hold it. The
// reaper then does nothing but wait. It ends the child and every process
// below it, and exits, when any of these happens:
//
//   - the child exits: what it left running is killed;
//   - the lifeline closes: the starting program called Kill, or died by any
//     signal, SIGKILL included, since the kernel closes its descriptors;
//   - the reaper gets SIGTERM, SIGINT or SIGHUP (a spare still waiting for
//     its child dies of it: it has nothing to end). On Linux a Spec that
//     says Idle (the child starts nothing before its first request, sent
//     after Start returns) is started before the reaper subscribes to
//     these, ~0.5 ms sooner; Start returns only once it has.
//
// On Linux the reaper is a child subreaper (PR_SET_CHILD_SUBREAPER): orphans
// below it, double-forked or moved to another session or process group
// (setsid, nohup, daemons), are re-parented to it instead of to init, so it
// finds and kills them all, and a process cannot leave the tree by forking.
// The child also gets SIGKILL as its parent-death signal. Elsewhere (macOS)
// the reaper kills the child's process group; a process that moved to
// another group or session there is not found.
//
// Not covered: a process that kills the reaper itself with SIGKILL (the
// child then dies by its parent-death signal on Linux, but processes it
// moved out of its group survive), and processes started outside the tree
// (by systemd, launchd, a container runtime, at, cron).
//
// A reaper can be started ahead, before its child is known: Prestart starts
// a spare, and the next Start hands it the child (its Spec and descriptors,
// over a Unix socket) instead of starting a reaper of its own, so the
// reaper's start overlaps with the caller's work. The spare's process is
// package launch's, which a program may call from its own package init
// (launch.Begin), earlier than this package's init can run. The spare holds the same
// lifeline and so ends with its starter; DropSpare ends one nobody used. A
// spare that died before its child came is replaced by a reaper started on
// demand.
//
// A Spec whose arguments and environment execve would refuse (E2BIG: on
// Linux one string beyond 128 KiB, or all of them beyond a quarter of the
// stack limit, at most 6 MiB) is refused by Start before anything is
// started, spare or not, with a *TooLargeError that names the largest
// string (a variable by its name, never its value) and what to do: a
// spare's own execve could say only "argument list too long". Elsewhere an
// execve's E2BIG is said with the sizes alone.
//
// Child.Wait reports the child's own wait status, which the reaper passes
// on once everything below it is gone; the reaper exits right after, and is
// collected without being waited for (at once, or at a later Start or Wait). Wait must be called exactly once; Kill is safe to call at any
// time and more than once.
package reaper
