// Package daemon is evalhost's per-user background process: it holds one
// session registry across commands, so `evalhost run --session NAME` sees
// what the previous command with that NAME left, as a notebook does.
//
// # Files
//
// [PathsFor] puts everything in <home>/daemon, a directory of mode 0700
// that must be a real directory owned by the user (one of the user's that
// is too open is tightened; another user's is refused with [UnsafeError],
// and so is one holding a file of another user's, put there while it was
// open). The log is never opened through a link.
// The socket is <home>/daemon/sock, mode 0600, whatever the length of its
// path: on Linux a path longer than a socket's name may be (100 bytes
// here) is bound and connected as /proc/self/fd/N/sock, N a descriptor of
// its directory (without /proc that is an error that says to shorten
// EVALHOST_HOME). Elsewhere such a socket is a file named by a hash of
// home in a 0700 evalhost-<uid> directory under the temp dir (macOS's is
// the user's own), which another user could block where the temp dir is
// shared. The process binds it as "bind" beside it and renames it to
// "sock" once of mode 0600, so a client never finds it open to others. A
// client refuses a socket that is not a socket, not the user's or open to
// others, and (SO_PEERCRED on Linux, LOCAL_PEERCRED on macOS and FreeBSD)
// one served by another user's process; the server drops connections from
// other users' processes. On OpenBSD and NetBSD, whose peer calls x/sys
// does not wrap, the socket's owner, mode and directory are the checks.
//
// # Lifetime
//
// [Serve] holds an flock on "lock" for its whole life: a second Serve for
// the same home returns [ErrRunning], and a lock nobody holds means no
// process lives, so its socket is stale. A link where "lock" or
// "start.lock" goes is refused, never followed. It writes "state" (its pid,
// version and the names of the sessions it ran) and removes it on a clean
// end; a state file left behind means the process died (SIGKILL, a crash)
// with those sessions' state; it also lists, by key and language, the
// sessions whose interpreters started (sessions.Config.OnHold). "lost.json"
// holds the sessions whose state an ended process took, and why: the
// process writes it at a clean end (with what it had not told yet,
// sessions.Registry.Untold), the client that finds a state file left by a
// crash adds to it, and the next process takes it at its start, so each
// such session's next cell says so (sessions.Registry.NoteLost). It is
// bounded (256 entries, 1 MiB) and read only when it is a regular file. Serve ends when its context ends, a client
// sends stop, or no client has been connected and no job has run for
// Config.Idle (default 30 min; a running job keeps it, and Config.IdleKept
// hears each time one did); it then cancels what runs (a client that
// takes none of its last lines for serve.StalledWrite, stopped or piped
// to a pager left open, is not waited for), closes every session and removes its
// socket (unless another process's is at its name now: a home moved away
// while it ran) and state file before it releases the lock. It reaches its
// state, job counter and lost.json through its directory, opened once
// (os.Root): a home moved while the process runs takes them along, and a
// newer process at the old path keeps its own.
//
// [Connect] attaches, and starts a process when none answers: under a
// second flock ("start.lock") it tries again (another client may just have
// started one), clears what a dead process left (its sessions' losses go
// to lost.json, told once by each one's next cell; a notice names them
// only when lost.json cannot take them; [ToldEnded] leaves out the session
// whose command was told already), starts the process given by
// DialConfig.Command in its own session with its stderr in "log" (the
// process closes what else it inherited at its start, [CloseInherited], so
// no pipe of the first command's stays open while it lives), and waits
// for it to write "ready" on the pipe named by [ReadyFDEnv]
// ([SignalReady]). Two clients racing to start therefore start one. A
// process whose hello names another version ([BuildIdentity]: the version
// and the binary's Go build ID, not its path, so copies of one build share
// a process) is asked to stop and replaced,
// with a notice that says so (the state it took is told by lost.json, as
// above, not there too), unless a cell or a job runs in it ([*BusyVersionError]);
// this happens under the start lock, and the stop says "ifIdle": the
// process refuses it while another client has a request in it, and
// refuses an eval that comes once it is ending. [ConnectSend] sends the
// first line with the connection, and connects again, once, when the
// process had stopped reading (EPIPE: nothing of the line was read);
// [DialConfig.Accept] may refuse the process it reached first, from its
// hello and settings, so that nothing is sent. [Dial] attaches without starting; [Stop] ends the process.
//
// # Protocol
//
// The wire is serve's (docs/serve-protocol.md): hello first (with
// "settings": Config.Settings, what the process fixed as it started, by
// name, a secret's as a digest; left out when there are none, so a
// process that predates it sends serve's hello, and its [Client.Settings]
// is nil: nothing to compare), then eval
// lines answered by frames tagged with their cell and request id, a
// cell_end per cell and one end (or a request_error); tool_call lines that
// the client answers with tool_result; cancel, sessions, close and ping;
// job, jobs, wait and stop with a "job" field for the jobs that cells with
// onTimeout "detach" go on as (they outlive the client that sent them;
// no job_end line is sent: ask with job or wait). A line may be up to
// [MaxLine] long, so that a run's largest script fits; [Client.Send]
// refuses a longer one with a [*LineTooLongError] before writing any of it,
// and [Client.Next] a longer answer with [ErrBadLine] once it is longer.
// An eval may name "python", the interpreter the client resolved, and
// "output" ([Output]: maxBytes, noSpill, passthrough), the bounds its
// cells' output gets in place of Config.Sessions.Sink's, as a one-shot
// `evalhost run` sets its own (and, as serve's, "terminal": the one a
// run's output goes to, for that request's cells alone). With
// passthrough the cells' stdout and stderr come as [TypeBytes] lines,
// where frames would carry sanitised
// text: the line's "size" counts the bytes that follow its newline,
// unchanged and unencoded, the one place the stream is not lines
// (serve.Encoder.RawData writes the two at once; [Client.Next] reads
// them together, [Client.Bytes] returns them). serve's close takes an optional "cwd": the
// session of that name in that directory (any interpreter), as `evalhost
// kill NAME` sends it for the current directory; without it, every
// directory's (`kill --all`). An eval with "batch" true runs its cells as
// a script's (sessions.Request.Batch: a death is not retried), as `run
// --session` sends them. A cancel may say "wait" (interrupt, and wait
// for the cell while it takes the interrupt, until its time limit:
// backend.ErrInterruptWait, as a run's Ctrl-C waits for python3) and
// "alone" (interrupt the interpreter without its process group:
// backend.ErrInterruptAlone). Three ops are the background process's own:
// kill (the interpreters of the session a request runs in, that name in
// that cwd, are killed at once: a second Ctrl-C; a job running in that
// session is stopped first, its end saying why), [OpSignal] (a signal
// passed on to the cell a request runs now, or job control of it:
// [SignalJob]; answered by a [Signalled] line at once) and stop
// (without "job": the process ends). As the process ends it sends every
// client still connected a [TypeStopping] line with "why" ([Stopping])
// before it cancels their requests; [Client.Next] keeps it
// ([Client.Ending]) and, once the connection closes, returns an
// [*EndedError] that says why (empty when the process was killed or
// crashed and said nothing). The sessions those clients had requests in,
// or waited for or stopped a job of, are not kept in lost.json: their
// clients were told. A request counts once the process has read it,
// queued or not yet (its session by name and cwd until it is), and so
// does a job's wait or stop read as it ends (the refusal tells); an eval
// read once it is ending is a NotRunError, and is not counted. A line
// sent after the reading side was shut is never read (EPIPE on Linux;
// dropped on macOS, where the client then gets no answer:
// [Client.Answers]); the process did not count it, and the client sends
// an eval to the next process, as for a NotRunError. Request
// ids belong to their connection: two clients may both use "run". A client
// that disconnects cancels its requests. Every session has the environment
// of the command that started the process, and the process keeps the
// settings it read from it (Config.Settings) for its whole life: a client
// whose own differ is told by its caller (evalhost's showSettings), and
// the process is not replaced for it, since the other sessions' state
// would go with it.
//
// # A process that stops answering
//
// An eval is queued off the connection's reader (in the order it came),
// so the reader answers ping, cancel and kill at once whatever the
// requests do, a slow interpreter resolution included. A Client relies on
// it (liveness.go): after 2 s without a line it pings,
// and a process that neither sends a line nor takes what the client
// writes for 10 s (stopped, hung) ends Next or Send with a [*HungError]
// (Attached), naming its pid; the pongs are not returned by Next. So no
// request, however long its cells or its wait in a queue, waits on a
// process that cannot answer.
package daemon
