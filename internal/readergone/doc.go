// Package readergone tells a writer that the reader of its output is gone:
// the client of serve's or mcp's stdout closed its end (it stopped
// reading, or died), so nothing written there will be read. serve and mcp
// (cmd/evalhost) end their work then, and mcp's RunStdio stops waiting at
// the end of its input for answers nobody can read.
//
// Contract:
//   - [Watch] watches w when w reaches a pipe or a socket through a
//     syscall.Conn: an *os.File, a *net.UnixConn or *net.TCPConn, or a
//     wrapper that passes one's SyscallConn on. [Watcher.Gone] is closed
//     once the system reports the reader gone, without a write (a cell may
//     run for hours with nothing to say). A pipe: its read end closed (its
//     error condition). A Unix socket: its peer closed (its hang-up); a
//     peer that only shut down its writing, the end of its requests, is
//     still a reader. A TCP socket: the connection was reset (the peer
//     closed with bytes of ours unread, or a write of ours reached its
//     closed socket) or closed both ways; a peer's plain close (a FIN) is
//     not seen before a write draws its reset, as a FIN may mean only the
//     end of its requests.
//   - Anything else is not watched, and Gone stays open: a tty (its
//     hang-up comes as SIGHUP), a regular file and /dev/null (their reader
//     never goes), a writer without a descriptor (net.Pipe, a buffer; the
//     HTTP transport's responses, whose client's leaving ends its
//     request's context instead), a closed file.
//   - [Watcher.NoteWrite] closes Gone when a write failed with EPIPE: the
//     portable sign, which also covers what the watch cannot see.
//   - On Linux an epoll instance of the watch's own holds a duplicate of
//     w's descriptor, asking for no event (the error and hang-up
//     conditions are reported unasked; a pipe's room for writing never
//     wakes it), and waits in Go's poller: nothing wakes until the reader
//     goes or Stop. Elsewhere (macOS) only a pipe is watched: a goroutine
//     waits in poll(2) on the duplicate and on a pipe of its own that Stop
//     writes to, a thread held and no periodic wake-up. A socket is not:
//     macOS's poll, built on kqueue, reports a hang-up when the peer only
//     shut down its writing. Linux runs this package's tests on both
//     waits; macOS builds and vets it only. Neither changes the flags of
//     w's open file.
//   - The duplicate is another end of w's kind: the reader sees no end of
//     file from w's owner until Stop has closed it.
//   - [Watcher.Stop] ends the watch and returns once its goroutine has
//     ended and its descriptors are closed. It is safe to call twice (at
//     once, too), and on a Watcher that watches nothing. It does not close
//     Gone.
//
// readergone.go is the portable part; watch_linux.go the epoll wait,
// watch_other.go the fallback, which calls poll.go's poll(2) wait (built on
// every Unix, so that Linux tests it too). It imports no other evalhost
// package.
package readergone
