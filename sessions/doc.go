// Package sessions owns evalhost's interpreter sessions: the registry that
// keys them by (session id, absolute cwd, resolved interpreter), queues each
// session's requests in arrival order while different sessions run in
// parallel, and gives every cell a truthful result.
//
// Contract:
//   - A request is a list of cells run in order in one session; after a cell
//     that is not ok the rest are skipped (unless KeepGoing) and the result
//     names the failed cell. Earlier state stays. A cell with RaisesOK
//     that raises (StatusError) is not such a failure (nbclient's
//     raises-exception tag): its result says error, and the request goes on.
//   - Mode session reuses interpreters; mode per-call starts fresh ones and
//     always shuts them down, also on error and cancel. A per-call request
//     sends each interpreter's last cell (the last of its language) with the
//     exit request right behind it where the executor can take that
//     (host.Process.ExitAfterNextCell), so it leaves as soon as that cell
//     ends; the cell runs, is stopped and reports as any other, and its
//     interpreter's exit does not count as lost state. What the interpreter
//     prints as it exits (atexit, finalizers, threads) is that cell's output,
//     and its timeout covers the exit (host.Process.ExitAfterNextCell); when a
//     failure skipped that cell, an empty one leaves in its place (a
//     script's, InScript, when the request has Argv) and its exit
//     output is emitted under the last cell of its language that ran; in a
//     batch, an exit the host reports as an error (InterpreterExit: an
//     atexit handler's os._exit(N), python3's 120 for streams it could not
//     flush, a signal) makes that cell an error with its ExitStatus or
//     Signal, as python3's process would end. Such a batch's Python cells
//     (per call, with Argv: evalhost run) leave text their streams could
//     not write to that exit's report, python3's, once, with no warning
//     frame at each cell's end (frames.Request.ExitReports); other
//     requests' cells warn. A
//     cancelled request's and a session's interpreters print at exit to no
//     one: that output is dropped.
//   - A cell's reset restarts the session's interpreters before it runs; a
//     reset while another reset of the session is in progress is rejected
//     with ErrResetInProgress.
//   - A dead interpreter is replaced before execution. One that dies during a
//     cell is replaced and the cell retried once, unless the caller cancelled
//     or the deadline passed; a second death fails the cell with
//     "interpreter died twice: <how>". With Request.Batch (a batch run)
//     the first death fails the cell (StatusKilled) and skips the
//     request's later cells, KeepGoing or not; so does a cell's sys.exit()
//     (its status stays ok), and, in a script's request (Argv), a Python
//     cell's uncaught KeyboardInterrupt that no interrupt caused (the
//     builtin, not a class of its name: frames.Frame.KeyboardInterrupt),
//     which python3 dies of by SIGINT (ExitStatus 130); a notebook's is an
//     error as any other. A Python interpreter's own exit there
//     (os._exit(N), a C exit(N)) is the script's, as python3's process
//     would end: the cell is killed and says how, with Exited and
//     ExitStatus N (CellResult.ScriptExit); a signal's or a gateway's
//     death is not.
//   - Timeouts (default 30 s, clamped to 1..600 s; NoTimeout: none) interrupt, wait the
//     grace window, then kill; the output gains "Command timed out after N
//     seconds". A timeout counts from when the cell is first sent, so an
//     interpreter's start (bounded by StartTimeout) does not use it up; a
//     retry shares the deadline. It counts the time the interpreter could
//     run: while Suspend holds a Python interpreter stopped (job control,
//     Ctrl-Z) its running cell's timeout (and a detachable cell's
//     MaxRuntime; not the point where it detaches) stands still until
//     Resume. A paused clock, not the process's own time: CPU time does not
//     grow while a cell waits (a sleep, a socket), and the kernel keeps no
//     count of the time a process spent stopped, while the one who stops
//     it knows when it did. So the deadline is a timer stopped and set
//     again for what is left (deadline.go), and the backend gets it as
//     backend.WithTimeLimit rather than as the context's deadline, a fixed
//     instant; a wait the timeout bounds after an interrupt the caller
//     waits for (backend.ErrInterruptWait) moves with it. The grace window
//     after the interrupt counts run time too (package host), and a Python
//     cell's result tells the time it was stopped apart
//     (CellResult.StoppedMs), so its run time is DurationMs less that.
//   - A cell still running when its timeout or the caller's cancel comes
//     ends timeout or cancelled even when it catches the interrupt and ends
//     without an error: its done frame says cancelled, and a notice and the
//     result's Message say the cell caught the interrupt.
//   - A cell the caller's cancel came before, while its request waited its
//     turn, while its interpreter started, or before its turn among the
//     request's cells, is CellResult.NotStarted (its CancelledBeforeStart,
//     which every such path sets through markNotStarted and every reader,
//     run's renderer, nb's saver, serve's cell_end "notStarted", goes by):
//     nothing of it ran.
//   - A cell with OnTimeout detach is not stopped at its timeout: its
//     result ends StatusDetached, naming a job (CellResult.Job) and holding
//     the output so far, and the cell runs on until it ends or its
//     MaxRuntime (default 1 h, at most 24 h, counted as the timeout is)
//     stops it as a timeout stops a cell. Until the job ends its session is
//     busy: a request (or reset) to it is refused with a *SessionBusyError
//     (ErrSessionBusy) naming the job, also one queued before the cell
//     detached; the request's later cells are skipped. Registry.Job reads a
//     job's status and output from a byte offset (bounded as a cell's
//     output; the full output is in the job's artifact), WaitJob waits for
//     it, StopJob stops it as a cancel stops a cell. Config.OnJobEnd hears
//     of every job's end exactly once, after the request that detached it
//     returned. An interpreter that dies under a job is not restarted to run
//     it again (that would repeat its side effects). Closing the session or
//     the registry stops its job, and the job's result says so; DrainJobs
//     waits for running jobs.
//   - Every CellResult says status, execution count, duration, stateLost and
//     retried; output produced before a death or timeout is kept.
//   - State loss is told to whoever relied on it, with stateLost and a
//     "[state lost: …]" stderr notice saying why, on the request's first cell
//     of that language. A loss tells the requests queued before it (another
//     request's second Ctrl-C (KillSession, Kill), the death, timeout or
//     reset in its cell, Reset), never the request whose cell caused it.
//     A loss no request caused or saw is pending: it tells every request
//     queued before the language's next interpreter starts (an interpreter
//     that ended between cells; eviction and the idle close, remembered
//     for the session opened again under its key; NoteLost, a background
//     process's end). A session closed with CloseSession is no news when
//     opened again: its user asked. Untold lists what a registry holds and
//     has not told, for a successor.
//   - Request.Streams, when set, gets the stdout and stderr of Python cells
//     in the runner (not of sh, gateway or detachable cells) as bytes lent
//     for the call only, in place of stream frames, in order with them;
//     emit's frames are always the caller's to keep.
//   - Request.Terminal tells the request's Python cells in the runner of the
//     terminal its caller shows them on (terminal.go), each cell alone:
//     Config.Terminal tells whole interpreters, which in a session serve
//     commands with a terminal and without. sh cells run under a pty of
//     their own whatever it says; a gateway kernel is not told.
//   - The launch environment is filtered: the reference's allow-list and its
//     LC_/XDG_/PI_ prefixes, minus a deny-list of secrets, names ending in
//     _API_KEY, _SECRET, _PASSWORD, _TOKEN, prefixed names that look like
//     secrets (a word KEY, AUTH, PASS, COOKIE…, or one containing SECRET,
//     TOKEN, PASSWORD, CREDENTIAL, PRIVATE…), the gateway token (evalhost's
//     own, which no interpreter uses) and the host's PI_TOOL_BRIDGE_*
//     (evalhost sets its own bridge's after filtering). Credentials in URLs
//     (proxies, package indexes) are stripped from the values that pass.
//   - MaxSessions bounds the sessions kept: over it, the least recently used
//     idle sessions are evicted. A new or busy session (a request running or
//     queued) is never evicted and no request waits for a slot: while more
//     than MaxSessions are busy the limit is exceeded, and the sessions over
//     it are evicted as their requests end. Idle sessions shut down after
//     IdleTimeout. Close waits for every interpreter and goroutine.
//   - The interpreter is Request.Python, else Config.Python, else resolved
//     per cwd (ResolveInterpreter). A .venv or venv in the cwd that another
//     user could have put or changed (internal/trustdir's judgement of code)
//     is refused with an *UntrustedVenvError, not passed over: in /tmp it
//     would run as whoever starts evalhost there; unless the user listed
//     the project in <Home>/safe-directories (SafeDirectories, read when a
//     judgement needs it: a team's project another user owns), and then
//     the refusal says how. The refusal names what must change: where a
//     link in the venv led elsewhere, the link and its target, which is
//     what to chown or chmod. Judged of such a venv: bin/ and bin/python,
//     and any bin/*._pth (it replaces sys.path) with the directories it
//     names (read as getpath reads them: a "#" ends a line; a relative
//     one joined to bin as python names it: through the cwd's .venv link,
//     not where it leads; a missing one judged as a missing .pth path
//     line, below);
//     pyvenv.cfg and bin/pyvenv.cfg, and the home each names (a relative
//     one is the cwd's, python's working directory) and its
//     parent (the prefix python takes its standard library from, even
//     when bin/python links elsewhere) with the prefix's lib*/python*
//     directories; each lib*/ and lib*/*/ directory (site-packages yet to
//     be made included, pypy3.X too) and each lib*/*/site-packages (a
//     lib64 linked to lib once), and what in it python's site module runs
//     at start: *.pth; sitecustomize and usercustomize as .py, .pyc, an
//     extension module or a package, whole; __pycache__ and the forms of
//     them in it; what a .pth's import line (site.py exec()s a line
//     starting "import " whole: an editable install's
//     "import __editable___x_finder; ...install()", virtualenv's
//     "import _virtualenv", "__import__('_distutils_hack')") may import,
//     in any site-packages: every identifier of the line, in code or a
//     string, taken as a name (a superset), and NAME.py, NAME.pyc,
//     NAME.*.so, __pycache__/NAME.*.pyc and a package NAME/ with its
//     __init__ in those forms judged, and in such a package the line's
//     names again (import a.b, from a import b); lines split both as
//     python 3.13 and earlier ones split them (3.13 in the locale's
//     encoding when the text is not UTF-8: an import may begin after any
//     byte that is not ASCII, or after GB18030's U+2028); and where a setuptools
//     editable finder such a line imports (__editable___x_finder, whose
//     install() maps names to the project's source for later import
//     lines and sitecustomize) maps those names and sitecustomize, read
//     from its MAPPING and NAMESPACES: a package there judged as one in
//     site-packages, a module's forms in its directory, one missing as a
//     missing path line. A .pth's other lines name
//     directories (or zips) python appends to sys.path (a relative one
//     joined to site-packages as python names it, cwd/.venv/lib/..., links
//     unresolved, then cleaned), where sitecustomize
//     and those names are looked for too: each that exists is judged as
//     code (the way to it too) with its sitecustomize, usercustomize and
//     the names; one missing (or that stat cannot reach: ENOTDIR, EACCES)
//     in a directory everyone may write or another user owns, or behind a
//     file another user owns (which they may replace with a directory), or
//     a symbolic link to nothing, is refused (whoever made it would run
//     code at start), as is a lib*, lib*/* or site-packages that links to
//     nothing (site.py lists it once it exists). Not
//     judged: the packages below site-packages, what an imported module
//     imports in turn, names an import line builds at run time (escapes,
//     concatenation) or paths it puts on sys.path itself, and the standard
//     library's modules (a walk of thousands of files per resolution), so
//     a third user's file in a package is not seen; nor the base's
//     site-packages an include-system-site-packages venv adds; nor
//     the directories above the prefix python searches when it has no
//     library; nor VIRTUAL_ENV's, CONDA_PREFIX's or the
//     managed venv, which the user chose. The judgement is part of the
//     resolution, cached with it below: a chmod inside the venv after it
//     is seen when the entry drops. A binary is started as found, with no
//     probe; a script (a version-manager shim) is probed once in the cwd
//     and its answer cached under Config.Home, keyed by everything the shim
//     reads (resolve_cache.go); a start that fails or reports another
//     executable drops the entry. What a request's cwd resolved to (its
//     absolute path, its interpreter) is reused while the process's working
//     directory (for a relative cwd), the directories on the cwd's and the
//     home's paths, the names resolution looks up in the cwd (.venv, venv,
//     the version files; other files made there, as an agent's edits, are
//     no change) and the home's managed venv are unchanged: the next
//     request after such a change resolves again. On
//     Linux inotify, the mount table's poll event and getcwd tell, with no
//     call that can block (keycache.go, keywatch_linux.go), once a key is
//     used a second time unchanged (a registry that resolves once makes no
//     inotify instance); before that, and elsewhere, stats. (So an entry
//     taken out of the safe directories stops a cwd's venv at the next
//     resolution, not in a long-lived registry that reuses one; its modules
//     are judged at each interpreter start. Likewise a chmod or chown alone
//     of a directory on the way, the cwd's made writable by all: a venv
//     judged before it is refused once an entry on the way changes, which
//     is what using the new permission to plant one takes. Watching
//     attributes would cost a walk of each directory's cached entries.)
//   - Config.PythonArgs are python3's interpreter options for every
//     interpreter the runner's starter starts (host.Options.Args, before
//     runner.py): -b -B -E -I -O -q -s -S -u, -W ARG, -X OPT, combined as
//     python3 takes them (-uB, -OO, -Werror). Anything else (-c, -m, -i,
//     -x, -P, a long option, a -W without its value) refuses every request
//     with a *PythonArgsError (ErrPythonArgs, ErrBadRequest), so no code or
//     module can be given to run through them; a gateway kernel's start
//     fails with ErrPythonArgs on any (its command line is its
//     kernelspec's). PYTHONUNBUFFERED is not on the environment's
//     allow-list, so the runner's streams write through under -u, or when
//     the caller passes the variable on (Config.ExtraEnv: evalhost run's
//     own PYTHONUNBUFFERED, as python3 reads it).
//   - Request.Env is set in the interpreter before the request's first
//     cell of each language, and again in one that replaced it (a retry,
//     a death under KeepGoing), as env X=1 cmd sets it as cmd starts: a
//     cell's change to a variable is seen by the request's later cells,
//     and a later request without Env keeps what the session has.
//   - A variable name of Request.Env or Config.ExtraEnv that is empty or
//     holds "=", white space or a control character (NUL included) is
//     surely a mistake ("A B=1"): it refuses the request, or every request,
//     with an *EnvNameError (ErrBadRequest), rather than set a variable no
//     shell can name (CheckEnvName).
//   - Request.Environ, the environment of the command a request comes from
//     (run --session's), is what the interpreters the request starts get
//     in Config.Environ's place (filtered the same way); a running one
//     gets PATH and VIRTUAL_ENV (and a shell PYTHONPATH), as a start would
//     make them, before the request's first cell of its language when
//     they differ from what it last got, so a cell's own change to them
//     lasts while the requests' stay the same. PYTHONPATH, which python
//     reads only as it starts, differing from the Python interpreter's is
//     told on the request's first Python cell, once ("[evalhost: session
//     s's py interpreter started with PYTHONPATH …]"). Without Environ
//     (serve's clients) nothing is compared (cmdenv.go).
//   - A cwd that does not exist, is not a directory, or that this user may
//     not enter (no search permission) refuses the request with a
//     *CwdError (ErrBadRequest) naming it and the cause, before any
//     interpreter would fail to start there.
//   - A session id longer than MaxSessionIDBytes refuses the request
//     (ErrBadRequest): it goes into the interpreters' environment, where
//     one that long could not start them.
//   - A Python interpreter starts with the extension modules
//     runner.FindModules finds and judges for the session (<Home>/modules,
//     then <cwd>/.evalhost/modules, judged with the user's safe
//     directories): what it refuses (another user's .evalhost in /tmp, a
//     link of theirs, a file others may write) is not run, and the cell
//     that started the interpreter gets a warning frame per refusal right
//     after ready, with the executor's own start warnings (a gateway
//     kernel's module that raised).
//   - A session's cwd is a directory, not a path (cwdid.go, retire.go): a
//     request whose cwd path now leads to another directory (removed or
//     moved and made again: device, inode and birth time differ) retires
//     the session there and starts a fresh one, its first cell of each
//     language told why (a pending loss). A retired session finishes
//     the requests it holds, in its own interpreters, and closes. A
//     request whose cwd is a session's directory under a new path (renamed;
//     the old path leads elsewhere or nowhere) takes that session over,
//     idle, with its state, its interpreters sent the new path with their
//     next cell (a busy one is left, and the request gets a fresh one). The
//     identity is read with the path's resolution (one statx, as the stat
//     it replaced) and kept in the key cache, so a warm request makes no
//     call for it; where the platform keeps no birth time (OpenBSD,
//     DragonFly) device and inode alone; off Unix it is not checked.
//   - The session's cwd goes to a fresh interpreter, after which a cell's
//     own chdir or cd lasts, as in Jupyter; Request.EnterCwd (run
//     --session's) sends it again with the request's first cell of each
//     language, as a command run there starts there, so a cell's change
//     lasts to the request's end only (cwdenter.go).
//   - KillSession kills one session id's interpreters at once (a second
//     Ctrl-C for a registry shared by many clients), in every cwd;
//     KillSessionIn in one cwd (the request's own session); Kill kills
//     them all. CloseSessionIn is CloseSession for one cwd (need not
//     exist: a removed directory's session can be closed).
//     A job in them ends too, its result's Message saying why.
//   - Signal sends a signal to a session id's Python interpreters (SignalGroup
//     to their process groups), as kill(1) would reach a python3 process: a
//     program passing on what it was sent (evalhost run's SIGTERM).
//     SignalForeground sends one to the process group of whichever of a
//     session id's interpreters runs a cell now, Python's or the terminal's
//     foreground group of bash's, as a terminal's key reaches its
//     foreground job (evalhost run's Ctrl-\), and says whether one got it
//     (not between cells, nor to a gateway kernel); SignalCell sends one
//     to the running cell's Python interpreter alone (Signal's way), or to
//     a shell cell's foreground job, as kill(1) of one program (evalhost
//     run's kill -QUIT). SignalIn, SignalForegroundIn, SignalCellIn,
//     SuspendIn and ResumeIn
//     reach the session id of one cwd alone, as KillSessionIn does (the
//     background process passes a request's signal on to that request's
//     session, not to sessions of that name in other directories). Suspend
//     and Resume stop and continue their process groups for job control
//     (evalhost run's Ctrl-Z and fg), holding the running cell's timeout
//     meanwhile (see Timeouts); a shell cell's bash is not stopped, and its
//     timeout runs on.
//     A batch cell whose interpreter dies of a signal (that one, the
//     script's own, an outside one; not one the registry sent to stop it),
//     while it runs, between the cell before and it (the next Python cell
//     finds it dead), or as it exits after the last cell, says which in
//     CellResult.Signal; one whose interpreter exited by itself
//     (os._exit(N), a thread's too) during it or between the cell before
//     and it is Exited with ExitStatus N, as python3 would have exited. A context cancelled with
//     backend.ErrInterruptWait as its cause interrupts the running cell
//     and waits for it within its timeout (host), and the cell's outcome is
//     what it then did: finished (ok) or sys.exit(N) (the script's exit),
//     not cancelled; a cell that took it (the KeyboardInterrupt was raised
//     there, and it ended ok) lets the request's later cells run, as
//     python3 goes on past an except KeyboardInterrupt:. A cause that holds
//     backend.ErrInterruptAlone too (errors.Join) is passed down as it is:
//     the interrupt goes to the interpreter alone (evalhost run's kill -INT).
package sessions
