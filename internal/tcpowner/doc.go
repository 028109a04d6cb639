// Package tcpowner tells whose a TCP socket on this machine is, for a
// client that must not send a secret to a loopback port another user has
// taken: the listening sockets a process holds ([Listening]) and the other
// end of a loopback connection ([Peer]), each with the uid that owns it.
//
// On Linux it reads this network namespace's TCP tables (through
// /proc/self/net, which a /proc mounted with subset=pid keeps) and the
// process's /proc/PID/fd. In a user namespace, an unmapped user's socket
// shows [OverflowUID]; a caller running as that uid cannot tell whose a
// socket is. A socket's uid there is
// that of the process that made it: a listener's creator, an accepted
// connection's acceptor, and a connection not accepted yet (inode 0)
// carries its listener's uid, so [Peer] answers as soon as a connect
// returns, before the server has read anything. TIME_WAIT entries, which
// the kernel shows with uid 0, are never an answer. Each answer is a
// snapshot: a socket may close right after.
//
// Elsewhere every lookup returns an error matching [ErrUnsupported];
// [Parse], the parser of the /proc tables, is portable.
package tcpowner
