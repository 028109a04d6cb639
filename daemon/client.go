package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/tidwall/gjson"

	"github.com/evalhost/evalhost/serve"
)

// DialConfig says where the background process is and how to start one.
type DialConfig struct {
	Paths   Paths
	Version string // this client's; a process of another version is replaced
	// Command makes the command that runs a background process (evalhost
	// daemon serve); Connect adds its session, stdio and ready pipe.
	Command func() *exec.Cmd
	// StartTimeout bounds a new process's start; default 15 s.
	StartTimeout time.Duration
	// Accept, when set, judges the process a connection reached (its
	// hello and settings) before ConnectSend sends to it: its error ends
	// ConnectSend, which closes the connection having sent nothing.
	Accept func(*Client) error
}

// helloTimeout bounds the wait for a process's first line.
const helloTimeout = 10 * time.Second

// lockWait bounds the wait for a process that is ending: its sessions'
// cells get an interrupt's grace and then are killed.
const lockWait = 30 * time.Second

// Client is one connection to the background process.
type Client struct {
	sendMu sync.Mutex
	conn   *net.UnixConn
	live   *liveReader // conn, read with a bound once the hello came
	r      *bufio.Reader
	max    int // the longest line Send writes and Next reads: MaxLine, less in tests
	Hello  serve.Hello
	// Settings are those the process reports it started with
	// (Config.Settings); nil when it reports none.
	Settings map[string]string
	// Notices are what the user must be told about this connection: a
	// process that died and took its sessions' state, or one replaced for
	// its version.
	Notices []string
	ending  string // the Why of the stopping line the process sent as it ended
	answers int    // lines Next returned since the hello (Answers)
	// last is the TypeBytes line Next returned last, with its bytes;
	// head and data hold them.
	last       Bytes
	head, data []byte
}

// Connect attaches to the live background process, starting one when
// there is none (two clients racing start one: the start lock orders them),
// replacing one that died (its sessions' state is lost, and a notice says
// so) or that runs another version. It refuses a directory or socket that
// is not the user's own, or a process of another user.
func Connect(ctx context.Context, cfg DialConfig) (*Client, error) {
	if err := ensureDir(cfg.Paths.Dir); err != nil {
		return nil, err
	}
	c, err := dial(cfg.Paths)
	if err == nil && c.Hello.Version == cfg.Version {
		return c, nil
	}
	var unsafe *UnsafeError
	var hung *HungError
	if errors.As(err, &unsafe) || errors.As(err, &hung) || errors.Is(err, errSocketPath) {
		return nil, err
	}
	if err == nil {
		c.Close() // another build's: start replaces it, under the start lock
	}
	// A socket path this process cannot name is one the new process
	// could not bind either: say so here, not through its log.
	_, release, err := socketAddr(cfg.Paths.Socket)
	if err != nil {
		return nil, err
	}
	release()
	c, notices, err := start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	c.Notices = notices
	return c, nil
}

// replace stops c's process, one of another build, unless it runs a cell
// or a job (*BusyVersionError), and returns the notice that says so. The
// notice does not name the sessions whose state went: the process keeps
// them in lost.json as it ends, and each one's next cell says so, once, to
// whoever relies on it.
func (c *Client) replace(paths Paths) (string, error) {
	if err := c.replaceable(); err != nil {
		c.Close()
		return "", err
	}
	notice := fmt.Sprintf("replaced the background process of evalhost %s (pid %d) with this version", c.Hello.Version, c.Hello.PID)
	return notice, c.stopAndWait(paths, true)
}

// ConnectSend is Connect, then Send of v, the client's first line. A
// process that stopped reading before the line came (it was being
// stopped, or replaced by a command of another build, between its hello
// and the line) took none of it, so nothing of it ran: ConnectSend
// connects again, once, and sends it there, with both connections'
// notices.
func ConnectSend(ctx context.Context, cfg DialConfig, v any) (*Client, error) {
	c, err := connectAccepted(ctx, cfg)
	if err != nil {
		return nil, err
	}
	err = c.Send(v)
	if err != nil && notRead(err) {
		notices := c.Notices
		c.Close()
		if c, err = connectAccepted(ctx, cfg); err != nil {
			return nil, err
		}
		c.Notices = append(notices, c.Notices...)
		err = c.Send(v)
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("cannot send the request to the background process (pid %d): %w", c.Hello.PID, err)
	}
	return c, nil
}

// connectAccepted is Connect, then cfg.Accept's judgement of the process.
func connectAccepted(ctx context.Context, cfg DialConfig) (*Client, error) {
	c, err := Connect(ctx, cfg)
	if err != nil || cfg.Accept == nil {
		return c, err
	}
	if err := cfg.Accept(c); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// notRead says that a write failed because the process had stopped
// reading the connection (or closed it): none of it was read.
func notRead(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)
}

// Dial attaches to the live background process without starting one; it
// returns ErrNotRunning when there is none.
func Dial(paths Paths) (*Client, error) {
	c, err := dial(paths)
	var unsafe *UnsafeError
	var hung *HungError
	if err != nil && !errors.As(err, &unsafe) && !errors.As(err, &hung) && !errors.Is(err, errSocketPath) {
		return nil, fmt.Errorf("%w (%v)", ErrNotRunning, err)
	}
	return c, err
}

// dial connects, checks the socket and the peer, and reads hello.
func dial(paths Paths) (*Client, error) {
	if err := checkSocket(paths.Socket); err != nil {
		return nil, err
	}
	addr, release, err := socketAddr(paths.Socket)
	if err != nil {
		return nil, err
	}
	nc, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: addr, Net: "unix"})
	release()
	var oe *net.OpError
	if err != nil && addr != paths.Socket && errors.As(err, &oe) {
		oe.Addr = &net.UnixAddr{Name: paths.Socket, Net: "unix"} // name the file, not its /proc alias
	}
	if err != nil {
		return nil, err
	}
	if uid, err := peerUID(nc); err != nil || (uid >= 0 && uid != os.Getuid()) {
		nc.Close()
		if err != nil {
			return nil, err
		}
		return nil, &UnsafeError{Path: paths.Socket, Reason: fmt.Sprintf("is served by a process of uid %d, not yours (uid %d)", uid, os.Getuid())}
	}
	c := &Client{conn: nc, max: MaxLine}
	c.live = &liveReader{c: c, probeAfter: probeAfter, answerWait: answerWait}
	c.r = bufio.NewReaderSize(c.live, 64<<10)
	nc.SetReadDeadline(time.Now().Add(helloTimeout)) // a hung process must not hang every command
	line, err := c.Next()
	if err != nil {
		nc.Close()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			// Accepted but silent: a stopped (SIGSTOP), hung or swapped-out
			// process holds the socket and the lock; starting another
			// would only wait for that lock.
			st, _ := readState(paths.State)
			return nil, &HungError{PID: st.PID, Wait: helloTimeout}
		}
		return nil, fmt.Errorf("no hello from the background process: %w", err)
	}
	var h hello
	if err := json.Unmarshal(line, &h); err != nil || h.Type != serve.TypeHello {
		nc.Close()
		return nil, fmt.Errorf("the background process's first line is not a hello: %.200s", line)
	}
	c.Hello, c.Settings = h.Hello, h.Settings
	c.live.watch = true // from now on a silent process is asked whether it lives
	return c, nil
}

// start starts a process under the start lock, unless another client did
// while this one waited for the lock. One of another build found there
// (this client's first dial found it, or a client of that build started it
// meanwhile) is replaced first: clients replace one at a time, and one
// waits for no process that answers.
func start(ctx context.Context, cfg DialConfig) (*Client, []string, error) {
	lk, err := lockFile(cfg.Paths.Start, true)
	if err != nil {
		return nil, nil, err
	}
	defer lk.Close()
	var notices []string
	if c, err := dial(cfg.Paths); err == nil {
		if c.Hello.Version == cfg.Version {
			return c, nil, nil
		}
		notice, err := c.replace(cfg.Paths)
		if err != nil {
			return nil, nil, err
		}
		notices = append(notices, notice)
	}
	more, err := reclaim(cfg.Paths, nil)
	if err != nil {
		return nil, nil, err
	}
	notices = append(notices, more...)
	if err := spawn(ctx, cfg); err != nil {
		return nil, nil, err
	}
	c, err := dial(cfg.Paths)
	if err != nil {
		return nil, nil, fmt.Errorf("the background process started but cannot be reached: %w", err)
	}
	return c, notices, nil
}

// replaceable asks a process of another build for its sessions: one that
// runs a cell or a job in any is not replaced (*BusyVersionError). A
// process that does not answer the question is replaced, as before it was
// asked.
func (c *Client) replaceable() error {
	if c.Send(map[string]string{"op": "sessions", "id": "replace"}) != nil {
		return nil
	}
	for { // a process that stopped answering ends the loop with a HungError
		line, err := c.Next()
		if err != nil {
			return nil
		}
		if gjson.GetBytes(line, "type").String() != serve.TypeSessions {
			continue
		}
		var list serve.Sessions
		if json.Unmarshal(line, &list) != nil {
			return nil
		}
		var busy []string
		for _, s := range list.Sessions {
			if s.Busy || s.Job != "" {
				busy = append(busy, s.Session)
			}
		}
		if len(busy) > 0 {
			return &BusyVersionError{PID: c.Hello.PID, Version: c.Hello.Version, Sessions: busy}
		}
		return nil
	}
}

// stopAndWait asks the process to stop and waits until it has (its lock
// is free). One that stopped answering (*HungError) is not waited for: it
// is stopped or hung and will not end by itself. With ifIdle (a
// replacement) the process refuses when another command's request is in
// it or a job runs (*BusyVersionError): the question replaceable asked
// may have had its answer changed since (a build that knows no ifIdle
// stops all the same).
func (c *Client) stopAndWait(paths Paths, ifIdle bool) error {
	err := c.Send(map[string]any{"op": OpStop, "ifIdle": ifIdle})
	for err == nil {
		var line []byte
		line, err = c.Next() // its lines until it closes the connection
		if err == nil && gjson.GetBytes(line, "type").String() == serve.TypeRequestError && gjson.GetBytes(line, "op").String() == OpStop {
			c.Close()
			return &BusyVersionError{PID: c.Hello.PID, Version: c.Hello.Version, Busy: gjson.GetBytes(line, "error").String()}
		}
	}
	c.Close()
	if hung := (*HungError)(nil); errors.As(err, &hung) {
		return err
	}
	lk, err := awaitLock(paths.Lock, lockWait)
	if errors.Is(err, errLocked) {
		return fmt.Errorf("the background process (pid %d) was asked to stop but still runs after %s; if it is stopped, resume it (kill -CONT %d), else end it (kill %d)",
			c.Hello.PID, lockWait, c.Hello.PID, c.Hello.PID)
	}
	if err != nil {
		return err
	}
	return lk.Close()
}

// Stop ends the live background process and waits for it; ErrNotRunning
// when there is none.
func Stop(paths Paths) (pid int, err error) {
	c, err := Dial(paths)
	if err != nil {
		return 0, err
	}
	return c.Hello.PID, c.stopAndWait(paths, false)
}

// Send writes v as one JSON line; safe from many goroutines. A process
// that takes none of it for a while is hung (*HungError). A line longer
// than the process reads (MaxLine) is a *LineTooLongError, and nothing of
// it is written.
func (c *Client) Send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if len(b)+1 > c.max {
		return &LineTooLongError{Size: len(b) + 1, Max: c.max}
	}
	return c.write(append(b, '\n'))
}

// write sends line, which ends with its newline.
func (c *Client) write(line []byte) error {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	c.conn.SetWriteDeadline(time.Now().Add(c.live.answerWait))
	_, err := c.conn.Write(line)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return c.hung(c.live.answerWait)
	}
	return err
}

// Next returns the next line the process wrote, without its newline; the
// slice is valid until the next call. A process that stopped answering
// ends it with a *HungError (see liveReader); the answers to its pings are
// not returned, nor the stopping lines (Ending keeps what they say). Once
// the hello came, a connection the process closed is an *EndedError.
// A TypeBytes line's bytes, which follow it, are read with it: Bytes
// returns them.
func (c *Client) Next() ([]byte, error) {
	for {
		line, err := c.next()
		if errors.Is(err, ErrBadLine) {
			return nil, err
		}
		if err != nil {
			return line, c.readError(err)
		}
		if bytes.Equal(line, pongLine) {
			continue
		}
		switch gjson.GetBytes(line, "type").String() {
		case TypeStopping:
			if why := gjson.GetBytes(line, "why").String(); why != "" {
				c.ending = why
			}
			continue
		case TypeBytes:
			c.answered()
			return c.readBytes(line)
		}
		c.answered()
		return line, nil
	}
}

func (c *Client) answered() {
	if c.live.watch {
		c.answers++
	}
}

// Answers counts the lines Next returned since the hello: the process's
// answers to what this client sent (not its stopping line, nor the pongs
// of the liveness pings). A process reads a connection's lines in order
// and answers every eval, job wait and job stop it reads (a refusal at
// least, before it closes the connection): when it ended with a stop
// (Ending) and the count did not grow after one was sent, it never read
// it. Nothing of such an eval ran, and the process did not count its
// session as told of the end (lost.json keeps it for the next process's
// cell): the client sends it to the next process, as a [NotRunError].
func (c *Client) Answers() int { return c.answers }

// readError is err, a failed read, as Next returns it: once the hello
// came, a connection that ended is an *EndedError.
func (c *Client) readError(err error) error {
	if hung := (*HungError)(nil); c.live.watch && !errors.As(err, &hung) {
		return &EndedError{PID: c.Hello.PID, Why: c.ending, Err: err}
	}
	return err
}

// readBytes reads the bytes that follow a TypeBytes line; the line is
// copied first, as reading them reuses the reader's buffer.
func (c *Client) readBytes(line []byte) ([]byte, error) {
	b, err := ParseBytes(line)
	if err != nil {
		return nil, fmt.Errorf("%w (pid %d): %w", ErrBadLine, c.Hello.PID, err)
	}
	c.head = append(c.head[:0], line...)
	data, err := readClaimed(c.r, c.data[:0], b.Size)
	c.data = data
	if err != nil {
		return nil, c.readError(err)
	}
	b.Data = data
	c.last = b
	return c.head, nil
}

// readClaimed appends n bytes from r to buf, growing it as they come: n
// is the line's claim (up to maxBytesSize), which a process that ends
// part way never pays in memory. A short read is io.ErrUnexpectedEOF.
func readClaimed(r io.Reader, buf []byte, n int) ([]byte, error) {
	const step = 1 << 20
	for len(buf) < n {
		want := min(n-len(buf), max(step, len(buf))) // at most doubling
		buf = slices.Grow(buf, want)
		k, err := io.ReadFull(r, buf[len(buf):len(buf)+want])
		buf = buf[:len(buf)+k]
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// Bytes is the TypeBytes line Next returned last, with the bytes that
// came after it; valid until the next call of Next.
func (c *Client) Bytes() Bytes { return c.last }

// Ending says why the process is ending, after "the background process
// (pid N) " (as "was stopped (evalhost daemon stop, ...) at ..."), once
// Next has read the line it sends every client as it ends; "" before,
// and for a process that ended without a word (killed, crashed).
func (c *Client) Ending() string { return c.ending }

// next reads a line, held as it comes up to c.max bytes (the longest the
// protocol has): one longer is ErrBadLine, as soon as it is, so a runaway
// writer costs the client no more than that.
func (c *Client) next() ([]byte, error) {
	line, err := c.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		buf := append([]byte(nil), line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = c.r.ReadSlice('\n')
			buf = append(buf, line...)
			if len(buf) > c.max+1 { // +1: its newline
				return nil, fmt.Errorf("%w (pid %d): a line longer than %d MiB, more than evalhost sends; "+
					"stop it (evalhost daemon stop) and run the command again", ErrBadLine, c.Hello.PID, c.max>>20)
			}
		}
		line = buf
	}
	if err != nil {
		return nil, err
	}
	return line[:len(line)-1], nil
}

// Close closes the connection; the process cancels what this client left
// running. Safe to call twice.
func (c *Client) Close() error {
	err := c.conn.Close()
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// CloseWrite tells the process this client sends nothing more.
func (c *Client) CloseWrite() error { return c.conn.CloseWrite() }
