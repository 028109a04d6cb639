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
//   - ReadSent makes Read return what is there now (bytes already read
//     into the kernel's buffer of the pipe or socket, which the client
//     wrote before it left), then io.EOF, without waiting: a Read blocked
//     for more is woken (a read deadline in the past) and goes on so. It
//     reports false, changing nothing, when the input cannot: it takes no
//     deadline (a tty, a regular file, a blocking descriptor, a reader
//     without one), so its Read would wait for ever.
//   - Read is the reader's goroutine's alone, as for any io.Reader; only
//     ReadSent may be called from another, at any time, more than once.
//   - What is there "now" is what a read without waiting takes, from one
//     call to the next, until one finds nothing: a client that goes on
//     writing after it closed stdout may be read a little further.
package sentinput
