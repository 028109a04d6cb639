// Package termrelay gives a child process a terminal of its own in place of
// the user's, for `evalhost run --tty`: a pseudo-terminal whose slave
// becomes the child's stdin and controlling terminal
// (host.Options.StdinTerminal), fed with what the user types on the real
// terminal, and whose output (its line discipline's echo, what the child
// writes to /dev/tty: getpass's prompt, a child's password prompt) goes
// back to the real one. The child, in a session of its own as every
// interpreter evalhost starts, cannot take the user's terminal itself: a
// terminal belongs to one session, the shell's.
//
// The pseudo-terminal starts with the real terminal's settings (its erase
// and end-of-file characters, its flags) and size, and does what a
// terminal does for input(): canonical lines, echo, getpass's echo off.
// The real terminal, while Start's relay runs, passes keys through one by
// one without echoing them (no ICANON, no ECHO, no input CR/NL mapping) but
// keeps ISIG and output post-processing: a typed Ctrl-C, Ctrl-Z or Ctrl-\
// still signals the caller's process group, which decides what reaches the
// child (evalhost run forwards them as it does without a terminal), and
// the caller's own writes to the terminal keep their line ends.
//
// A Relay reads the real terminal through a descriptor of its own (a new
// open file description of the same device, non-blocking), so that Close
// ends its reader at once and the shell's descriptor keeps its flags. The
// caller must call Close, also on every error path after Start: it
// restores the terminal's settings, and returns when both relaying
// goroutines are done; it is safe to call twice. Before the caller stops
// itself (job control) it calls Suspend, which gives the shell its
// terminal settings back, and Resume once continued; started or continued
// in the background (&, bg, kill %1) the relay is suspended, touching the terminal
// neither to set its modes nor to read it (either would stop the caller
// again: SIGTTOU, SIGTTIN) nor at Close, until a key typed with the caller
// in the foreground again resumes it. What the user types
// while the child does not read goes into the pseudo-terminal, and what
// the child never read Close gives back to the real terminal's input
// (TIOCSTI), for the shell, as a terminal keeps type-ahead after python3
// exits; where the kernel refuses that (dev.tty.legacy_tiocsti=0), or has
// no TIOCSTI (OpenBSD), it is lost, as under ssh -t.
//
// Start is an error ([ErrUnsupported]) where the terminal cannot be opened
// again by name: outside Linux (its /proc/self/fd names it), or a terminal
// of another user's (after su). Closing Slave's file is Close's, not the
// caller's; calling Resize, Suspend or Resume after Close is wrong, and
// Resize and Resume then return an error.
package termrelay
