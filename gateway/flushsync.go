package gateway

// flushSyncSource defines sync_flushes, which the start snippet applies to
// the kernel's stdout and stderr so that what a cell flushed survives the
// kernel's SIGKILL (an OOM kill, os.kill) right after, as it does with the
// runner backend, whose flush is a write(2).
//
// ipykernel's flush (7.4 here) returns too early for that. It has the
// IOPub thread build the stream message and waits for that, but the thread
// hands the message to zmq one event later (session.send schedules the send
// on the same thread), and libzmq's I/O thread writes it to the gateway's
// connection later still. A SIGKILL meanwhile loses it. Of
// print('x', flush=True); os.kill(os.getpid(), 9), with jupyter_client and
// no gateway in between, 16 of 70 were lost over TCP (6 of 30 without
// PYTHONUNBUFFERED in the kernel's environment, 10 of 40 with it: the
// stream is ipykernel's, not a buffered file), 9 of 30 over unix sockets
// (transport ipc, the shared gateway's), and 1 of 60 when two more flushes
// had waited for zmq's send.
//
// The wrapped flush has the IOPub thread flush the stream and then send a
// numbered probe on a PUSH socket of the iopub socket's context, connected
// to a PULL socket of the same context, and waits for the probe to arrive
// there: one hop to the IOPub thread, as ipykernel's flush takes. The two
// meet on a unix socket in a directory of mode 0700, both removed once
// they are connected: no other user can reach it, and the kernel listens
// on no more than ipykernel's own channels (not loopback TCP, which any
// local user may connect to). The zmq send of the stream message comes before the probe's
// on that thread, each wakes the context's one I/O thread (ipykernel's
// context has the default one) with a command, the I/O thread runs its
// commands in order, and each command has the connection's engine write
// what it was given to its socket. So once the probe is back, the message
// is in the socket's buffers (TCP's send buffer, or a unix socket's receive
// queue at the gateway's end), which a SIGKILL does not discard: 0 of 50
// lost over TCP, 0 of 40 over unix sockets. Only a message the connection
// could not take at once (a gateway that stopped reading) may still wait
// in zmq.
//
// A flush from a forked child, from the IOPub thread itself, on a closed
// stream, or after a probe took 10 s (ipykernel's flush timeout) is
// ipykernel's own. One from a signal handler that ran while its thread
// waited for a probe waits for its own, and the interrupted wait ends with
// it (with a plain lock it waited forever for the lock its thread held).
// The sockets are closed at exit, before ipykernel's own exit handler
// terminates the context, which waits for every socket of it.
// An ipykernel without the IOPubThread and OutStream._flush this relies on
// is left as it is, and sync_flushes returns why, which the start snippet
// prints as a warning line, as it does what sync_flushes raised. It adds
// little to ipykernel's flush, which already waits for the IOPub thread:
// 0.03-0.05 ms to a print(i, flush=True) of 0.17-0.25 ms (medians, flushes
// with and without alternating in one kernel). Without the exit handler a
// shutdown_request took 2.6 s, the kernel manager's kill, instead of 0.4 s.
var flushSyncSource = `    def sync_flushes(streams):
        import atexit, itertools, tempfile, threading, time
        import zmq
        pub = getattr(streams[0], "pub_thread", None)
        sock = getattr(pub, "socket", None)
        if not (isinstance(sock, zmq.Socket) and hasattr(pub, "schedule") and hasattr(pub, "thread")
                and all(getattr(s, "pub_thread", None) is pub and hasattr(s, "_flush") for s in streams)):
            return "its streams are not ipykernel's OutStreams on an IOPubThread as evalhost knows them"
        if not zmq.has("ipc"):
            return "this zmq has no unix sockets (ipc)"
        pull = sock.context.socket(zmq.PULL)
        push = sock.context.socket(zmq.PUSH)
        d = tempfile.mkdtemp(prefix="evalhost-flush-")
        path = os.path.join(d, "probe")
        try:
            pull.linger = push.linger = 0
            pull.bind("ipc://" + path)
            push.connect("ipc://" + path)
            push.send(b"0")
            if not pull.poll(10000):
                raise TimeoutError("the flush probe's socket did not connect")
            pull.recv()
        except BaseException:
            pull.close()
            push.close()
            raise
        finally:
            # connected: the path has served, and a kill leaves nothing behind
            for remove, name in ((os.unlink, path), (os.rmdir, d)):
                try:
                    remove(name)
                except OSError:
                    pass
        master = os.getpid()
        # pull, seen and live: one thread waits at a time; reentrant, as a
        # signal handler that flushes may run while its thread waits here
        lock = threading.RLock()
        send_lock = threading.Lock()  # push: the IOPub thread sends, exit closes
        live = [True]
        seq = itertools.count(1)
        seen = [0]  # the highest probe back: probes come back in order
        def probe(n):
            with send_lock:
                if live[0]:
                    try:
                        push.send(n, zmq.NOBLOCK)
                    except zmq.ZMQError:
                        pass
        def synced(stream, flush):
            def flush_synced():
                if (os.getpid() != master or stream.pub_thread is not pub or not pub.thread.is_alive()
                        or threading.current_thread() is pub.thread):
                    return flush()
                with lock:
                    if not live[0]:
                        return flush()
                    n = next(seq)
                    def flush_then_probe():
                        try:
                            stream._flush()
                        finally:
                            pub.schedule(lambda: probe(b"%d" % n))
                    pub.schedule(flush_then_probe)
                    # a flush nested in this wait (a signal handler's) may
                    # take this probe, even the one polled for: seen, short
                    # polls and a recv that does not block see to that
                    deadline = time.monotonic() + 10
                    while seen[0] < n and live[0]:
                        if not pull.poll(100):
                            if time.monotonic() > deadline:
                                live[0] = False  # a stalled IOPub thread: ipykernel's flush from now on
                                return
                            continue
                        try:
                            seen[0] = max(seen[0], int(pull.recv(zmq.NOBLOCK)))
                        except zmq.Again:
                            pass
            return flush_synced
        def close():
            if os.getpid() != master:
                return
            with lock, send_lock:
                live[0] = False
                pull.close()
                push.close()
        atexit.register(close)
        for stream in streams:
            try:
                stream.flush = synced(stream, stream.flush)
            except (AttributeError, TypeError):
                pass
`

// flushSyncWarning starts the start warning of a kernel whose flush could
// not be made to wait for the socket; the reason follows.
const flushSyncWarning = "what a cell prints just before its kernel is killed may be lost: " +
	"evalhost could not make the kernel's flush wait until the output is on its way to the gateway: "
