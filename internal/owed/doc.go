// Package owed counts the answers a server owes its client, so that once
// the reader of its output is gone it can tell a client that had every
// answer (it ends as at the end of its input: exit 0) from one whose
// requests were cut short (exit 141). serve's Serve and mcp's RunStdio
// both judge their end by it; what a request is, and mcp's ids and
// cancellation, stay theirs.
//
// An answer is the last line about a request. Its life in [Answers]:
//
//   - Accept: a request taken whose answer will be written (elsewhere,
//     later). An answer written at once, never accepted, is noted by
//     Replied instead, which counts only its write's failure.
//   - Waive (optional): the client wants no answer to one accepted
//     request any more (MCP's notifications/cancelled): a reader gone
//     before it is answered loses nothing, nor does its answer's failed
//     write. Wait still waits for its answer while the reader is there.
//   - Answering (AnsweringWaived for one waived): the answer is about to
//     be written. It stops being owed before the write, as the client may
//     send its next request (or reuse its id) once it read it, but is
//     waited for until written: the client may have read it whole and
//     left before the writer noted its write done. The func returned is
//     called once with the write's error (an answer not written at all is
//     an error too).
//
// Wait(ctx, gone) is the verdict. While gone is open it returns nil once
// no answer is owed or being written (the end of input waits for every
// answer). Once gone is closed (before the call or during it) it waits
// only for the writes under way, and returns [ErrLost] if an answer not
// waived is owed, or an answer's write failed, else nil; that verdict,
// once given, closes the count: Accept then returns false and counts
// nothing, so that a request read after the verdict is dropped, never
// run, and "nothing was lost" stays true. ctx's end returns ctx's error.
// More than one Wait may run at once; each wakes when a write ends or an
// answer is waived. CutShort says, without waiting, whether an answer
// not waived is owed (serve ends its work at once then).
//
// All methods are safe for concurrent use; the zero Answers is ready,
// and must not be copied after first use. Nothing here starts a
// goroutine. Wrong calls panic, as sync.WaitGroup's misuse does, since a
// count gone wrong would give a wrong exit later, far from the mistake:
// Answering or Waive with no answer owed that is not waived,
// AnsweringWaived with none waived, and a written func called twice. A
// caller that may see an answer for a request it never accepted (mcp's
// ids) checks that itself. Accept after the count closed is not wrong:
// its false is the caller's to act on (a caller that stops accepting
// before it waits for the verdict may ignore it).
package owed
