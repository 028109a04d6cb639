// Package flock takes and releases flock(2) locks: the one place evalhost
// calls flock, so that every lock treats an interrupted call, a lock held
// elsewhere and a file system without locks alike.
//
// Contract:
//   - A lock is exclusive and belongs to the open file (its open file
//     description): two opens of one file exclude each other, in one
//     process or two; closing the file, or the holder's death, releases it.
//     Not so on NFS, where Linux makes flock an fcntl lock: the lock is
//     then the process's (two opens in one process do not exclude each
//     other, and closing any of them releases it), and a file open only
//     for reading cannot be locked (EBADF, returned wrapped, matching
//     neither sentinel).
//   - [Lock] waits while another holder has the lock; [TryLock] does not
//     wait and returns [ErrLocked] instead.
//   - EINTR is retried, so a signal never fails a lock.
//   - Where no lock is to be had (ENOLCK, as NFS without a lock manager
//     answers; ENOSYS; EOPNOTSUPP or ENOTSUP, a file system that has no
//     flock; any platform without flock) the error matches
//     [ErrUnsupported], and the errno where there is one. What that means
//     is the caller's to decide: go on unlocked, or refuse.
//   - Any other error (EBADF, a closed file: os.ErrClosed) is returned
//     wrapped, as "flock: ...".
//   - [Unlock] releases the lock early; it is safe to call twice, on a file
//     never locked, on a file without locks and after the file was closed.
//
// flock_unix.go calls flock(2) on the systems that have it; flock_other.go
// is the portable fallback, where every lock is [ErrUnsupported].
//
// It imports no other evalhost package.
package flock
