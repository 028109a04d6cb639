// Package sentinput lets a server whose output's reader is gone (the
// client closed its end of stdout, or died) read what the client had sent
// it by then, and no more, so that it can tell a client that sent a
// request it never answered from one that had every answer: serve and mcp
// (cmd/evalhost) learn of the reader's leaving from internal/readergone at
// about the time their reader wakes for the last request, and exited 0 or
// 141 by which came first.
//
// Contract:
//   - [New] wraps a reader; its Read is the reader's until [Input.ReadSent].
//   - ReadSent makes Read return what the input held then (bytes in the
//     kernel's buffer of the pipe or socket, which the client wrote before
//     it left: FIONREAD counts them), then io.EOF, without waiting: a Read
//     blocked for more is woken (a read deadline in the past) and goes on
//     so. A client that goes on writing is not read for ever: what it
//     writes after is left, but for what a Read under way took (up to its
//     buffer). Where the count cannot be asked, Read takes what is there
//     until a read finds nothing.
//   - It reports false, changing nothing, when the input cannot be read
//     so: not a pipe or socket in Go's poller in non-blocking mode (a tty,
//     a regular file, a blocking descriptor, a reader without one), whose
//     Read would wait for ever; and on systems other than Unix.
//   - Read is the reader's goroutine's alone, as for any io.Reader; only
//     ReadSent may be called from another, at any time, more than once.
package sentinput
