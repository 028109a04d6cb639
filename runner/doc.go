// Package runner embeds the Python end of the evalhost runner protocol and
// puts it on disk for the host to start.
//
// runner.py (a small bootstrap that loads core.py, the runner proper,
// through a bytecode cache in __pycache__ beside it, because a script is
// recompiled on every start) speaks the protocol written down in package
// frames: the host starts `<python> <Path(...)>` with fd 0 = requests, fd 1/2 = raw
// stdout/stderr pipes, fd 3 = frames, EVALHOST_SYNC_NONCE set and optionally
// EVALHOST_MODULES ([ModulesValue]: a JSON array of [path, dev, ino, owner] of the
// extension module files to run, in order, as [FindModules] judged them). prelude.py is
// the set of helpers (read, write, env, tree, diff, and the tool bridge's
// tool / ToolError, see bridge/doc.go) every Python session starts with; the
// Jupyter gateway backend runs [Prelude] in its kernels, so it defines
// nothing IPython owns (display, get_ipython).
//
// core loads its other modules the same way, each one concern: wire (every
// byte written to fd 3 and the marks on fd 1/2: frame lines, the held line
// batched with the next frame, position and sync marks, FIONREAD checks, the
// done frame and the interrupted ack, and the descriptors they go to, moved
// out of the cells' way with the os.close, os.closerange, os.dup2 and
// os.fdopen that spare them; as core loads), stdio (what cells get
// instead of a terminal: stdout and stderr on fd 1/2, their flusher and the
// flush before any other writer of fd 1/2, the stdin that refuses
// (input(); sys.stdin reads empty, or refuses too, with the host's reason,
// where host.Options.StdinWithheld gives one) or the script's stdin the
// host gave on fd 4, the stdlib modules adapted as they
// are imported (pdb's stack, bdb's get_stack, starts at the first frame
// that is not the runner's, as python3's at the script's <module>, which
// is its bottom too: a step past the script's end stops in no frame of
// the runner's, only, as python3's, in the exit's threading._shutdown and
// atexit handlers); as core loads), cells (an execute
// request as a Cell object whose steps have names: accept, start,
// send_started, apply, run, execute, end, fail, finish; a result goes through
// update_user_ns, compute_format_data and write_format_data, as in IPython's
// DisplayHook, except a plain builtin value's, its repr alone, which the Cell
// keeps (keep_result) to place and send with done: one look at the pipes for
// both frames, unless a post-cell hook, figures or an error come between,
// when it is sent at once as before; loaded right after ready is sent, while
// the host answers it; a request's "module" runs as python3 -m runs it,
// runpy._run_module_as_main called from cells, not from cell code, so its
// traceback starts at runpy's frames; the names runpy set, __spec__,
// __file__..., go with the next request's argv; and sys.orig_argv, for a
// request's argv, is python3's for that command line: the interpreter
// and its options as the host started it, then FILE ARG..., -c CODE
// ARG... (the request's code), -m MODULE ARG... or - ARG..., where
// runner.py stood; the gateway's kernels keep their own), argv (a
// request's "argv" and "file": sys.argv, __file__, __loader__ and
// __cached__ and sys.path as python3 sets them: the notebook's entries, the
// cwd core put first (or a request's cwd since) and every "" (core's
// before site-packages, IPython's in a kernel), go, so a module in the cwd
// shadows the stdlib's only where python3's would; a later argv gives
// back what one took and takes what it put, a request without argv keeps
// them as the last one left them, and a request's cwd under a script's
// sys.path only chdirs (it is the cwd entry the next argv gives back);
// loaded with cells, and its source is [ArgvSource], which the gateway
// runs in a kernel, so both apply one rule), warm (the warm-up, below; once the runner has been
// idle, so never in a one-shot run), terminal (a request's "terminal": what
// EVALHOST_TTY tells the interpreter, for that cell alone, then taken
// back: run --session at a terminal, whose session's next command may be
// piped; loaded by cells for such a request only), and on first use imports (the runner's
// own imports, below), display (the IPython display protocol), tracebacks,
// printer (with tracebacks and the warm-up: an exception's str() taken once,
// by the TracebackException, which the error frame's evalue reuses, and
// 3.8-3.10's last line as their C printer writes it, "__main__.E: x"),
// hints (python3's "Did you mean" suggestion on an error's last line, below;
// 3.10+, by tracebacks and the warm-up), cprint (the interpreter's own error
// printer run into a list: hints and asfile use it; 3.8-3.12 a script's
// report on a sys.stderr object of its own), asfile (a script's
// compile error as python3 FILE's: where and with what
// text the C tokenizer's file mode places it, a NUL byte as that mode reads
// it, shown by the interpreter's own display before 3.13; loaded only by
// such an error), modules (EVALHOST_MODULES), figures (the formats of figures left open),
// aio (top-level await's event loop), handlers (what a script's signal
// handler raises between cells, below), forks (3.12+, at a cell's first
// fork: its warning of threads is shown as python3's would be, not of the
// runner's own threads), bytecode (once for an interpreter, when the host
// asks: runner.py's bytecode, below),
// and the IPython compatibility split by feature:
// ipy_rewrite (the magic rewriter), ipy_system (shell escapes), ipy_help
// (obj? and %pinfo, printed as IPython's terminal shows them), ipy_magics,
// ipy_capture, ipy_shell (get_ipython), ipy_display (the IPython import
// hook's work), ipy_full (EVALHOST_IPYTHON=1) and ipy_history (IPython 9's
// record of outputs, bounded, in that mode); a `!ls` cell loads
// ipy_rewrite and ipy_system only. Each is loaded once: a thread that asks
// for one another thread is loading waits until its code has run, and a child
// forked meanwhile loads it afresh. Every frame line is built by wire's
// _frame, but those of every cell, each built whole where it is made (started,
// a plain value's result, done, interrupted), and a quick cell's done and
// result ask each pipe for unread bytes (FIONREAD) once between them, in one
// call. Every *.py of this directory is embedded and written by [Path].
//
// Nothing another user could write is run (issue 19). [Path] re-verifies
// its copy on every call: cacheDir is this user's (made 0700 if looser; an
// error wrapping [ErrUnsafeCache] if another user owns it), the runner dir is
// a real 0700 directory of this user's, and each file is a regular file of
// this user's, writable by no one else, byte for byte the embedded one (else
// it is rewritten atomically: written as .tmp-<name>.<pid>-<random> and
// renamed over it; a first copy is a directory .runner-tmp.<pid>-<random>
// renamed into place); a __pycache__ that is not this user's alone is
// removed. "Byte for byte" is known from the dir's stamp (.intact,
// stamp_unix.go) when every file still has the device, inode, size, mode and
// change time it records (one lstat each; no call can set a change time
// back), and by comparing the content when not, after which the stamp is
// written, unless a file changed within the last 2 s (a file clock's tick
// could hide a write: git's "racily clean"). A start that finds the copy
// whole takes no lock and reads no directory; one that must write holds <cache>/.runner-lock (flock) while
// it checks again and writes, so a write another start makes, in any pid
// namespace or on any host sharing the cache, is waited for, not taken for
// a killed one's; holding it, it removes what writers killed before their
// rename left (such names, of this user's: a regular file, a copy, or an
// untrusted copy moved aside as .runner-old.<pid>-<random>). A pid cannot
// say whether such a writer lives: in a container or sandbox sharing the
// home, or on another host, it names another process or none.
//
// runner.py runs cached bytecode (__pycache__/<name>.<tag>.evh) only from a
// regular file of this user's, writable by no one else (opened without
// following a link or waiting on a fifo), whose header holds the
// interpreter's magic, the inode, size, mtime and ctime of the .py beside it,
// and the payload's length; anything else is recompiled and rewritten. The
// key is the .py's identity, not a hash of its content, which Path has just
// checked: Path puts a file in place only by a rename (a new inode), and any
// other write changes the ctime, unless it falls in the clock tick of a
// compile's read (git's "racily clean"); the next Path then finds the stamp
// broken, compares the file and replaces it, so a cache older than such a
// write lives until the next start (or on, if a second write in that tick
// put the embedded bytes back: this user's own doing). A cache copied in
// from another runner dir (another user's, a backup) names another inode.
// No device number: the .py and its cache share a file system, and an NFS
// home has another device on each host, each of which would refuse the
// others' caches. The payload carries no hash (nor does CPython's .pyc):
// only this user writes it, whole, and its length refuses a cut or extended
// one; what a hash would add, a payload changed in place to another of its
// length, only this user (who could as well write a consistent header) or
// the disk can make. This costs ~0.1 ms in Path (0.5 ms when it compares
// the files: the first touch of the embedded bytes) and per loaded module a
// stat and the .evh's open, fstat, read and close (~0.01-0.04 ms cold)
// before marshal.loads, against ~12 ms for compiling core.py on every
// start; reading and hashing the source and hashing the payload had cost
// ~0.2 ms more over the 7 modules a first cell loads (issue 16). A cache is
// written as <cache>.<pid>.tmp, created exclusively (O_EXCL), and renamed
// over it; what a runner killed between the two leaves, the next runner to
// start removes once ready is sent (~10 us, core's _sweep_cache): only a
// regular file of this user's whose pid no longer runs, so a live writer's
// stays and two runners may write one cache. Across pid namespaces a pid
// says less (see above), and there no lock is needed: a live writer's file
// removed only fails its write (the cache is not written), and a writer
// that finds its name taken (another writer with its pid, or a dead one's
// file not yet swept) writes no cache, so two writers never mix one file.
//
// runner.py itself python compiles at each start from it (~0.5 ms: the
// parser's first use in a fresh interpreter), so a host starts the runner
// from runner.py's own bytecode once a runner has written it ([BootFor]):
// __pycache__/runner.<16 hex of a SHA-256 of the interpreter's inode, size,
// mtime and change time>.pyc (of the file its path leads to: the venvs of
// one python share one, and two interpreters behind one path, in a home
// hosts or containers share, each keep theirs), a
// .pyc python runs as its script, checking its magic number only. The 12
// header bytes after the magic number (which python skips) are the first
// of the SHA-256 of runner.py's path and the interpreter's and runner.py's
// inode, size, mtime and change time (the interpreter's through its links);
// the host uses the file only when it is a regular file of this user's
// that no one else may write (opened as the .evh files are) whose header
// holds that key. Else it starts from runner.py with [BootEnv] set to the
// key, the name and those facts, and that runner (bytecode.py, once ready is
// sent, off a start's way but for the first cell of that one start) writes
// the file only when the facts are its own: sys.executable's, and those of
// the runner.py it reads and compiles (with optimize 0, as the .evh files);
// for a launcher that runs another interpreter it is never written (each
// start asks again, and its runner loads bytecode.py to refuse, before its
// first cell; a read-only or full disk costs each start that, and a
// compile of runner.py on a full one). A new interpreter at the path has
// another name; a runner.py Path put back changes the key, and the file is
// left to the next write. Where python refuses it anyway (a shared
// libpython of another version under the same binary: another magic
// number; a payload gone bad), its start ends before a line of it runs
// (but after site's code: sitecustomize and .pth files), with "Bad magic
// number" or "Bad code object in .pyc file" on stderr, as it does when the
// file went between the host's check and python's open (another start's
// removal): host.Start removes it and starts once more from runner.py,
// which writes it anew, and in which site's code runs again. The runner
// dir holds one such file per interpreter used (an interpreter replaced,
// by an upgrade, leaves its own, as an evalhost upgrade leaves its runner
// dir).
//
// Contract of the Python side, beyond frames/doc.go:
//   - ready is sent after the prelude and extension modules are loaded; a
//     module that raises (or prints, or shows anything a cell would send as
//     a frame: a display, a result, an error, an input request, whose id
//     would name a cell that does not exist yet) is a warning frame without
//     id that names it, never fatal.
//   - [FindModules] lists the extension modules a session runs (the *.py of
//     <home>/modules, then of <cwd>/.evalhost/modules, a later place's
//     overriding an earlier one's of its name) and judges each place and file
//     with package trustdir, as git judges a repository another user owns:
//     every directory from the place's base down (.evalhost, modules), and
//     where a link among them points, must be the user's or root's and
//     writable by no one else, each file too; no link on the way may be
//     another user's, nor a directory above another user's (or writable by
//     everyone without the sticky bit). A place's Safe (the user's safe
//     directories, for the project's place) may let another user own it,
//     as trustdir says. What it refuses is a
//     [*ModuleRefusedError] that names it, says what is wrong where and what
//     to do (for another user's, beside taking it over, the safe directory
//     that would let it be theirs; the path as trustdir.Shown prints it,
//     quoted when it holds a control character), for the caller to show; a refused dir's
//     files are not run, and a refused file does not hide an earlier
//     place's module of its name.
//   - runner.py opens each file EVALHOST_MODULES names once and runs its code
//     only when fstat shows the open file is the one judged (dev, ino) and
//     still a regular file that no one else may write, of the user's (or
//     root's), or of the owner it had when judged (one a safe directory let
//     own it), so nothing can be swapped in between the judgement and the run;
//     one that is not is a warning frame without id before ready that names
//     it (as trustdir.Shown would: modules.py's shown) and says why, and
//     the other modules still load. [Module.Source] is
//     the same read in Go, for backends that run the code elsewhere.
//   - Cells are named "<cell N>", N the execution count; the count grows by
//     one per execute request that reaches the compiler (syntax errors
//     included, bad requests not). A request with "filename" (a script's
//     cell) is compiled under that name instead, its lines numbered from
//     "line" (newlines before it, after the magic rewrite, which keeps
//     lines), and its source is not kept: linecache reads the file, as for
//     python3 FILE (an entry it kept is dropped as the cell starts, so an
//     edited file shows its new lines). "<string>" is python3 -c's code
//     (evalhost run -c): compiled with the newline python3 -c adds to it,
//     and its source kept for linecache on 3.13+ only, as python3 -c's:
//     by its code objects where linecache keys them so (3.14.10's, 3.15's:
//     tracebacks and inspect find it, a warning's line does not), else by
//     its name (3.13.0's).
//     Tracebacks start at the first frame
//     of a cell or of such a file, which is never taken for the runner's.
//     The last expression's value, when not None and the source does not
//     end in ';', is the result and is stored as _ in the user namespace.
//     A request with "script": true (python3 FILE's cell) is compiled
//     whole, as python3 compiles a file: no result, no _ or Out, no
//     sys.displayhook call, a first docstring as __doc__, no top-level
//     await (python3's SyntaxError "'await' outside function"; other cells
//     await on the session's loop, aio.py); figures it leaves
//     open are not sent, but its plt.show() under Agg sends the open ones
//     as display frames there and closes them (matplotlib.pyplot.show is
//     wrapped as pyplot loads; other cells' show() is matplotlib's own).
//     In IPython mode the shell's ast_node_interactivity is "none" for it
//     and its autoawait off (IPython compiles node by node, so what comes
//     before the await runs first, where `ipython FILE` runs nothing),
//     and matplotlib-inline's post_execute sends none of the figures it
//     drew (its plt.show() is matplotlib-inline's, which sends them).
//   - A cell's uncaught error is reported as python3 reports one that ends a
//     script when its request has "argv" or "inScript" (the cell is a
//     script's: evalhost run's always are; tracebacks.report_uncaught),
//     and as Jupyter's kernel does otherwise (a notebook's cells: no hook,
//     every frame), per request: a session's interpreter that ran a
//     script's cells reports a later notebook cell's error as a notebook's
//     (a script's own sys.excepthook stays set but is not called); not
//     with EVALHOST_IPYTHON=1, whose errors are
//     IPython's, nor for the host's interrupt. As python3: a
//     sys.excepthook the cells set is called with the script's frames
//     (the runner's off every traceback of the chain, a cause's too),
//     interruptible as the cell was, and "Error in sys.excepthook:" and
//     both tracebacks go to sys.stderr when it raises (a SystemExit it
//     raises is the cell's; one the cells put in sys.__excepthook__ too is
//     theirs, called as any other); with the default hook the traceback goes to
//     a sys.stderr the cells replaced, one write() a piece as python3's
//     printer makes them (3.8-3.12 it is that printer, the interpreter's
//     own, run on the error without the runner's frames; 3.13+ each
//     chunk of the traceback and print()'s end ""), that stream flushed
//     first as python3's flush_io does; sys.tracebacklimit keeps the
//     innermost frames. The error frame is sent either way, marked
//     "reported" when the hook or a replaced stderr took it (frames doc);
//     not when a replaced stderr failed the write (no write, closed,
//     binary), where python3 says "lost sys.stderr" on fd 2. A deleted
//     sys.stderr gets python3's report of it: the interpreter's own hook
//     runs with none, dumping the object and saying "lost sys.stderr" on
//     fd 2 (marked reported). A deleted sys.stdout or sys.stderr is
//     passed over by the runner's flushes, as None is, and as python3's
//     exit passes it over: a script ends silently without them. On 3.13+,
//     where the host shows fd 2 on a terminal (EVALHOST_TTY, or the
//     request's "terminal" for its cell), python3
//     colours its reports (_colorize.can_colorize): stdio makes
//     _colorize's os take the terminal's pipes for one (so a thread's
//     exception, printed by the interpreter's own hook, is coloured as
//     python3's, and so is what a cell's doctest or pdb colours), and
//     a script's error with the default hook and the runner's sys.stderr,
//     the host's interrupt and a compile error too, is written there in
//     colour as python3's printer writes it (tracebacks.on_terminal), its
//     frame marked reported, its traceback plain; never where the host
//     shows none, whatever FORCE_COLOR says.
//   - An error's traceback (a script's report, a notebook cell's error
//     frame, not IPython mode's) ends with the suggestion python3's report
//     adds: "NameError: name 'prnt' is not defined. Did you mean:
//     'print'?", an AttributeError's, and from 3.12 a from-import's
//     ImportError's and "Did you forget to import 'sys'?". 3.10-3.12 work it
//     out in the printer's C code, for exactly those types (not a
//     subclass), which the runner runs on a stand-in of each exception the
//     traceback shows (hints.py; ~5-45 us each); 3.13+'s is the traceback
//     module's. The cell's code that works it out (an object's __dir__,
//     3.12's getattr of a NameError's self) runs once per report, as in
//     python3 (what it writes to sys.stderr comes before the traceback,
//     where python3 3.10-3.12 shows it inside the last line), and not at
//     all when the script's own sys.excepthook reported the error. The
//     frame's evalue stays str(exc), as Jupyter's kernel gives it, but
//     not called again: the text the traceback took (python3's printer
//     calls it once); IPython mode's traceback shows none of the runner's
//     frames (input()'s refusal in stdio.py), as the runner's own mode; IPython
//     mode's traceback is IPython's (IPython 8 and 9 show no suggestion on
//     3.11).
//   - SystemExit(0/None) in a cell ends the cell with status ok, and its
//     done frame says "exit" (a batch run stops there, as python3 would);
//     any other SystemExit is an error; the runner keeps serving either way.
//     With EVALHOST_IPYTHON=1 a cell's SystemExit is IPython's (an error
//     output, the cell fails), but exit() and quit(), which IPython only
//     asks (ipykernel stops its kernel after the cell), end the cell so
//     once the rest of it ran without error; exit(keep_kernel=True) ends
//     nothing, as in ipykernel. What a terminal or kernel shell adds to
//     InteractiveShell, full mode does as ipykernel does, or, where that
//     needs a frontend, as the runner's own mode. Figures are
//     matplotlib-inline's: unless the user set MPLBACKEND, matplotlib's
//     default backend is its backend, as ipykernel's MPLBACKEND makes it, but
//     in the runner's process only (set as matplotlib is imported): child
//     processes inherit MPLBACKEND=Agg, as in the runner's own mode, since
//     ipykernel's value made `import matplotlib` fail in a Python without
//     matplotlib-inline. A figure is a display when plt.show() or fig.show() is called or
//     after the cell, in the formats %config
//     InlineBackend.figure_format(s) or set_matplotlib_formats choose (png;
//     retina, a PNG at twice the dpi with its width and height in the
//     metadata; jpeg; svg; pdf). %matplotlib (and %pylab) with a GUI
//     toolkit or a backend that needs a frontend of its own (qt, tk,
//     widget, notebook) says so on stderr and goes inline; under another
//     non-GUI backend (MPLBACKEND=Agg, %matplotlib agg) the runner sends
//     its own PNGs after each cell. %gui with a toolkit and %edit are
//     refused with why, and %load and %recall show the code they would put
//     in the next cell.
//   - A bad request (code not a string, bad env, missing cwd) gets started,
//     an error frame with ename "RequestError", the sync marks and done.
//   - Ordering: everything a cell printed before a display, result, error or
//     input frame is written to the fd 1/2 pipes before that frame is
//     written to fd 3. Pipes are read separately, so a host that needs exact
//     text-versus-display order must drain fd 1/2 before delivering a frame;
//     all output of a cell precedes its sync marks, which precede done. A
//     pipe nothing wrote to since its last mark gets none (the frame says
//     "unmarked"; frames doc, "Order").
//   - stdout is block-buffered and flushed: every 50 ms while a cell runs,
//     when stderr is written, before os.write to fd 1/2, os.system,
//     subprocess/posix_spawn, exec and fork, before any frame, at cell end.
//   - stderr is line-buffered, as CPython's: a partial line goes out with
//     its newline, a flush, the cell's next frame or its end.
//   - Their codecs (stdio.codecs_for): a script's cell (its request has
//     argv or inScript: every cell of evalhost run and run --session)
//     writes with the encoding and errors python3 gave its own
//     sys.stdout and sys.stderr as this interpreter started (its locale,
//     PYTHONIOENCODING, PYTHONUTF8, -X utf8, -E): a lone surrogate is
//     python3's UnicodeEncodeError under a UTF-8 locale, its byte under
//     C/POSIX (surrogateescape), stderr backslashreplaces. Every other
//     cell (serve's and MCP's without argv, notebooks') writes UTF-8 with
//     backslashreplace: no cell's text is lost to an encoding error. The
//     codecs stay until a cell of the other kind (a script's exit and its
//     threads write with python3's), and a stream a cell reconfigured
//     itself keeps what the cell gave it. A script's uncaught error that
//     the runner's stderr shows (its error frame's traceback, which a
//     renderer prints) has python3's stderr's backslashreplace: a lone
//     surrogate is "\ud800", not U+FFFD.
//   - Text the runner's stdout or stderr could not write at a cell's end
//     (the cell closed fd 1 or 2) is not dropped in silence: a warning
//     frame before done names the stream and the error, in each cell whose
//     text cannot go out (it stays buffered, and goes out once the fd works
//     again); a stdout that cannot be written fails no write to stderr.
//     Not a script's last cell (the request's "last" with argv or
//     inScript, as a one-shot run's): its exit says it as python3's does.
//     After its atexit handlers it flushes sys.stdout and sys.stderr as
//     python3's exit flushes them, and one that fails (closed fd 1, text
//     still buffered) makes it exit 120, stdout's error reported through
//     sys.unraisablehook ("Exception ignored in: <_io.TextIOWrapper
//     name='<stdout>' ...>", no traceback), stderr's silently, unless an
//     uncaught KeyboardInterrupt ended the script, which python3 dies of.
//   - python3's options before runner.py (host.Options.Args) act on the
//     cells as on python3's script. -u (or PYTHONUNBUFFERED without -E,
//     as python3 reads them: the interpreter's own stdout writes through;
//     the host passes that variable on only when asked, evalhost run's own
//     or --env's) makes stdout and stderr write through, unbuffered,
//     as python3 -u's: each write reaches its fd as it is made (a
//     KeyboardInterrupt in a blocked write loses its rest, as there), and
//     the 50 ms flush has nothing to do. -I, and -P or PYTHONSAFEPATH on
//     3.11+, put neither the cwd, "" nor a script's directory on sys.path
//     (argv.safe_path). -O and -OO reach the cells' code, compiled at the
//     interpreter's level; the runner's own is always compiled at level 0,
//     so its docstrings stay and its one bytecode cache serves every start.
//     -W filters apply to the runner's own start too, which raises none.
//     At the exit, a warning raised where no frame of the cells' is (an
//     unclosed file's, as the namespace is cleared: -X dev, -W default) is
//     shown as python3's teardown shows it, where no frame is left: at
//     sys:1 (3.13: <sys>:0), without the tracemalloc hint. -X importtime
//     lists the runner's own start-up imports (_json and gc, built in)
//     after the interpreter's, and a cell's later import of them not at
//     all; -X faulthandler's dump (-X dev's too) shows the runner's frames
//     below the cell's and its two threads (the flusher, the warm-up).
//   - The runner's two threads are born with every signal but a fault's
//     blocked, so a signal sent to the process goes to the cell's (main)
//     thread, as in python3, and waits while that thread blocks it
//     (pthread_sigmask); taken by another thread, its handler ran at once,
//     inside the block.
//   - Each byte a cell prints goes out once: a KeyboardInterrupt that lands
//     in a flush leaves what write(2) took written and the rest buffered,
//     as CPython's own streams do (no Python code runs between write(2) and
//     the buffer's count of it; the interrupt is raised after the count).
//   - started goes out with the cell's next frame, its first text or the
//     flusher's next tick; a result with its done: a quick cell is one write.
//   - After ready, a thread imports what the first error needs (traceback,
//     linecache, tokenize, ast: ~3 ms) and the FIONREAD ioctl, so the first
//     error costs what later ones do.
//   - The runner's own imports (traceback at an error, json, subprocess,
//     IPython's start and its formatting of an error in full mode, shown
//     and, in IPython 9, kept for its history, where IPython 9 imports
//     stack_data at the first one, ...: core's _own,
//     imports.py) and what those modules import while the runner uses them (formatting a
//     traceback imports ast, unicodedata, 3.13's linecache its tokenize) are
//     found only where the interpreter found modules as it started: built-in
//     and frozen modules, its start-up meta-path finders, and sys.path at the
//     runner's start minus "", the cwd and the runner's directory (the
//     stdlib, site-packages, PYTHONPATH). Never in a cell's cwd, "" or a
//     directory a cell added, where another user could have left a
//     traceback.py; a name found nowhere else is a ModuleNotFoundError,
//     but for a probe (importlib.util.find_spec: IPython 9 asks for
//     argcomplete) of a name no finder finds anywhere, which is None. A
//     module already imported (by anyone) is used as it is, but for a cell's
//     module of a name those places have too (an html.py in the cwd, a
//     top-level module imported from outside them, and its submodules):
//     while the runner's own imports run it is out of sys.modules and the
//     runner's own of that name in (imported then, kept for next time), so
//     IPython 9's first traceback, importing stack_data (`from html import
//     escape`), gets the stdlib's; the cell's is put back after, and a
//     thread of the cell's importing it meanwhile gets the runner's (threads in
//     the runner's own imports at once share one lending). The warm-up's
//     thread, which runs beside cells, never lends: where its next import
//     would, it ends (imports.py's never_lend), so a runner whose cells
//     hold such a module has no warm-up, and a cell never runs with its
//     modules out of sys.modules but while its own error is formatted or
//     its own threads import as the runner. Cells import as
//     python3 and IPython do, the cwd and "" first, except code of the
//     cell's that runs while a traceback is formatted (an exception's
//     __str__): its first import of a module only those places have fails.
//     The rule is per thread: the cell's threads import as usual meanwhile.
//     3.15's lazy imports (`lazy import _colorize` in its traceback,
//     tokenize, difflib...) would be made where the name is first used, in
//     any thread (the runner's diff() ran the cwd's _colorize.py): while
//     threads are in the runner's own imports, a lazy imports filter makes
//     theirs eager, a cell's as the cell's own filter says, and the cell's
//     filter (None) is back when the last leaves.
//     It holds for the errors the interpreter reports itself too (3.13's
//     threading.excepthook and sys.excepthook import traceback, and
//     unicodedata for a line with wide characters; 3.14's
//     sys.unraisablehook too): the defaults of those three hooks, set up
//     before the prelude runs, are the runner's, which run Python's own in
//     the reporting thread under this rule; sys.__excepthook__,
//     sys.__unraisablehook__ and threading.__excepthook__ name them too.
//     Showing a warning, the interpreter imports in the thread that warned,
//     where its imports cannot be told from a cell's: warnings (3.13 for
//     any warning, every version for a coroutine never awaited), linecache
//     and tracemalloc (warnings' formatting), tokenize (3.13's linecache, a
//     file on disk) and traceback (a coroutine's origin). So the first
//     import of one of those five, a cell's too, is found as the runner's
//     own, and so are its code's imports (stdio's StdlibHook, which takes
//     a frozen one first, as the interpreter does: 3.15's linecache):
//     IPython has all but tracemalloc imported as it starts. The runner's
//     modules have a spec and a loader as imported ones do (3.15's
//     linecache warns of a frame's module without, as a traceback is
//     formatted: a cell's warnings.simplefilter('error') made that error
//     the runner's report of the cell's).
//   - SIGINT raises KeyboardInterrupt from the moment the cell starts (its
//     started frame may still be held) until
//     the cell's outcome is known; while idle it is ignored. Once the exit
//     request (or EOF) is read, SIGINT ends the wait for non-daemon threads
//     and interrupts an atexit handler, as Ctrl-C does at python3's exit; one
//     that comes before the exit takes it is kept for the threads' wait.
//   - The request's "run" value is exposed to the cell as EVALHOST_RUN in
//     os.environ (unset when absent).
//   - IPython compatibility without importing IPython: a cell whose lines may
//     hold a magic (a cheap check for '%' or '!' at a line start or after
//     '=') is rewritten with Python's tokenizer, one line for one line, so
//     '%' and '!' in strings, f-strings, modulo and '!=' are untouched and
//     error line numbers hold. A magic, shell escape or x = !cmd / %magic
//     that ends in a backslash takes the next line too, as IPython's
//     assemble_continued_line joins them (each backslash and newline a
//     space), the lines it took left blank. Line magics: pip, cd, pwd, env, set_env, time,
//     timeit, who, who_ls, whos, reset -f, run, load (shows the file, cannot
//     replace the cell), matplotlib (Agg kept), config (InlineBackend.
//     figure_format(s) alone, its value evaluated in the cells' namespace
//     as IPython's %config does, or chosen by matplotlib-inline's
//     set_matplotlib_formats (its **kwargs go to savefig, as there;
//     set_matplotlib_close(False) is a note that figures are closed anyway):
//     figures left open go out as png, retina, jpeg,
//     svg or pdf, as matplotlib-inline makes them (needs_background in the
//     metadata of a transparent figure whose tick labels are all light or
//     all dark), jpeg only with Pillow, a
//     format that fails a figure, or is over the frame line limit, a
//     warning, the others still sent; Completer and IPCompleter
//     settings are ignored with a note), load_ext/unload_ext/
//     reload_ext, autoreload, aimport, sx, system; cell magics (first
//     line): bash, sh, capture (figures too; as IPython's run_cell, an
//     error in its body is shown, not captured, and the cell stays ok with
//     its name set, unless the body ends in ';', which sets no name and
//     removes an older one), time, timeit, writefile [-a], html,
//     markdown, svg, latex, javascript (js), python, python3. !cmd,
//     x = !cmd (an SList), !!cmd and x = %magic; {expr} and $name expand as
//     in IPython. Shell escapes run /bin/sh in the runner's
//     process group (the host's SIGINT reaches them; the runner reaps the
//     child before the KeyboardInterrupt goes on) and set _exit_code. An
//     unknown magic is a UsageError naming the supported ones.
//   - get_ipython() (a builtin) returns a small shell: run_line_magic,
//     run_cell_magic, system, getoutput, user_ns, display_pub.publish (with
//     transient display_id, update), clear_output, events, kernel None.
//   - import IPython / IPython.display: when IPython is installed its display,
//     clear_output, publish_display_data and get_ipython are patched as their
//     modules load (while no real InteractiveShell runs) to send display,
//     update_display and clear_output frames (and matplotlib_inline.
//     backend_inline's set_matplotlib_formats and set_matplotlib_close as
//     above, which made an InteractiveShell); when it is not, a shim package
//     (IPython, IPython.display, IPython.core.display[_functions],
//     IPython.core.getipython, IPython.utils.capture) is served. Nothing is
//     imported before user code imports it.
//   - History as IPython: In (sources, In[N]), Out (non-None results), _, __,
//     ___, _N, _i (previous input), _ii, _iii, _iN.
//   - Warnings as IPython: the user namespace's __warningregistry__ is
//     emptied before each cell and each get_ipython().run_cell, so a warning
//     shows once per place per cell, not once per line number for the
//     session (the registry's key has no file name).
//   - EVALHOST_IPYTHON=1 in the runner's environment: every cell runs through
//     IPython's InteractiveShell (all of IPython's magics), its displayhook,
//     display publisher and tracebacks (uncoloured) sending the same frames;
//     without IPython every cell fails with ename IPythonUnavailable. The
//     prelude's and modules' names are in user_ns_hidden (out of %who,
//     %whos and %who_ls), %reset -f puts them back as IPython puts back its
//     own (In, Out, exit) (input() raises IPython's StdinNotImplementedError,
//     so %reset without -f goes ahead, as in ipykernel), and %pylab's "clobbered" warning names only the
//     user's variables: a helper it replaced (numpy's diff for evalhost's)
//     gets a note on stderr. History is IPython's HistoryManager on an
//     in-memory database (hist_file ":memory:"): %history, %notebook, _i
//     (as typed), _ih and In (as run), Out and _N as in ipykernel, and
//     IPython 9's record of each cell's outputs (prints, displays, results,
//     errors), which it keeps in memory for the session's life: the last 32
//     MiB of them are kept, older ones keep a text/plain of up to 4 KiB or
//     a note (2,000 cells of a 50 KB figure grew the runner by 257 MiB, a
//     printed log stayed whole); none of it is written to disk (IPython still makes the empty directories of
//     ~/.ipython/profile_default as it starts, as ipykernel does).
//   - The runner's own descriptors are out of the cells' way (wire.take_fds),
//     so a script that closes or replaces what it did not open runs on as under
//     python3: at start-up, before any thread, the frames pipe (fd 3) and its
//     copy of the requests pipe (fd 0's) move to the highest free descriptors
//     below 64 (the kernel's first fd table holds 64; growing it once the
//     flusher's thread runs waits for an RCU grace period, ~30 ms here, and
//     every fork copies a larger one), close-on-exec, and marks go to copies of
//     the stdout and stderr pipes made there, not to fd 1 and 2, which a cell
//     may point at a file (os.dup2 of a log: python3's file gets no marks). A
//     cell's first os.open is fd 3, as python3's. os.closerange closes around
//     them (os.closerange(3, 1024), to the soft limit or beyond; posix's
//     functions are os's, and guarded too); os.close of one, os.fdopen of one
//     and os.dup2 from one fail with EBADF, as python3's of a descriptor it
//     never opened; os.dup2 onto one first moves the runner's elsewhere (under
//     the send lock, or, in a signal handler that cut into the runner's own
//     send, without it: that send writes at the new number, again after a write
//     that failed; above 64, within the soft limit, when the cell took every
//     one below), so the cell gets the descriptor it named. A fork() child of a
//     cell closes them at once and is guarded no more (a daemon holds none of
//     the host's pipes). Not guarded: C code calling close(2) or dup2(2) itself
//     (a C extension's, a library's), which can still cut the runner off as
//     before, a file object a cell makes on one of them by number otherwise
//     (open(fd), socket.socket(fileno=fd)) and closes, other calls on their
//     numbers (os.set_blocking, fcntl, os.write), and a signal handler that
//     takes the frames pipe's number as its own file while a frame write it
//     interrupted waits to retry (the retry writes there);
//     os.listdir("/proc/self/fd") lists them, the one way a script can tell
//     them, by number. subprocess's close_fds needs nothing: they are close-on-
//     exec.
//   - A signal handler a cell set (signal.signal) that raises between cells,
//     where the signal landed in the runner's own code (as it ends a cell,
//     or waits for the next request), does not end the runner: between a
//     cell's run and the next one's, the handler is the runner's stand-in,
//     which calls it at once and keeps what it raised; the next cell raises
//     that at its first statement, as python3 raises it at the statement
//     the signal lands in (the traceback: that line, then the handler's
//     frames; a SystemExit: the cell's exit), and when the exit comes first,
//     the exit reports it as python3 reports an uncaught exception at its
//     end (a SystemExit's message, or the traceback through sys.excepthook)
//     and exits with python3's status for it. While a cell runs the handler
//     is the script's own function; signal.getsignal and what signal.signal
//     returns are always that. SIGINT's is not taken (core's own handler
//     takes SIGINT between cells). handlers.py says more.
//   - The runner exits 0 on {"type":"exit"} or EOF on fd 0 (a handler's
//     exception held for a cell that never came: see above; 120 after a
//     script's last cell whose streams could not be flushed: see above),
//     and exits 1 when the frames pipe breaks.
package runner
