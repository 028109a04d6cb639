// Package tcpowner tells whose a TCP socket on this machine is, for a
// client that must not send a secret to a loopback port another user has
// taken: the listening sockets a process holds ([Listening]) and the other
// end of a loopback connection ([Peer]), each with the uid that owns it.
//
// On Linux it asks the kernel through netlink sock_diag (INET_DIAG): [Peer]
// looks up the one socket by its addresses and ports, a hash lookup that
// costs the same however many sockets the machine has, and [Listening]
// lists the listening sockets and keeps those among /proc/PID/fd. Where
// sock_diag does not tell, it reads this network namespace's TCP tables
// (through /proc/self/net, which a /proc mounted with subset=pid keeps),
// which cost a read and parse of every socket: where the sock_diag socket
// cannot be opened or the request is refused (a seccomp filter, an LSM, a
// kernel without inet_diag), for a connection the server has not completed
// (a request socket, which sock_diag shows with uid 0 and the tables with
// its listener's uid), and before [Peer] answers [ErrNoPeer] (an exact
// lookup misses a socket bound to a device). The answers are the same.
//
// In a user namespace, an unmapped user's socket shows [OverflowUID]; a
// caller running as that uid cannot tell whose a socket is. A socket's uid
// is that of the process that made it: a listener's creator, an accepted
// connection's acceptor, and a connection not accepted yet (inode 0)
// carries its listener's uid, so [Peer] answers as soon as a connect
// returns, before the server has read anything. TIME_WAIT sockets, which
// the kernel shows with uid 0, are never an answer, nor is the listener
// the kernel offers when a lookup misses. Each answer is a snapshot: a
// socket may close right after.
//
// Elsewhere every lookup returns an error matching [ErrUnsupported];
// [Parse], the parser of the /proc tables, is portable.
package tcpowner
