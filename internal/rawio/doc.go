// Package rawio reads and writes a file in non-blocking mode through Go's
// poller, as its own Read and Write do, with each read(2) and write(2) a
// raw system call: one that does not tell the runtime it entered the
// kernel. Such a call cannot block (the file is non-blocking; EAGAIN parks
// the goroutine in the poller as os.File does), so the runtime has nothing
// to take back, and it does not wake the runtime's monitor thread. That
// thread sleeps while every P is idle and was woken by the first ordinary
// system call after each idle spell: twice per warm serve round trip (the
// request, then the interpreter's frames), each wake a futex and a few of
// its 20 µs sleeps, about a sixth of serve's CPU per cell.
//
// [New] wraps an *os.File that is non-blocking and polled (os.Pipe's ends,
// a descriptor made non-blocking before os.NewFile) and refuses any other:
// a raw call on a blocking descriptor would hold the thread and its P for
// as long as it blocks. On other systems than Linux New refuses every
// file, and callers use the file itself.
//
// A File's Read and Write behave as the file's: deadlines, closing, EINTR,
// a short write continued, io.EOF at the end. Errors are the file's too
// (*os.PathError with the errno), except that an error ends the call
// without the file's extra steps, such as the SIGPIPE os.File raises for
// EPIPE on descriptors 1 and 2 (a File never wraps those: they are not
// non-blocking).
package rawio
