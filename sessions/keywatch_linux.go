package sessions

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unsafe"
)

// keyWatch tells the key cache, with raw system calls that cannot block
// (no file system is asked anything), whether what an entry was resolved
// from may have changed: inotify watches on each directory a cached path's
// resolution looks a name up in (symbolic links followed), for that name,
// and on the cwd itself, for the names resolution looks up there
// (cwdEntries), the home for its managed venv (python-env), and both
// directories for their own removal or move; and the mount table's poll
// event, since a mount over a directory on the way changes where a path
// leads without an inotify event. A relative cwd's entry also holds only
// while getcwd(2) says what it said when the entry was made.
//
// The check is one ppoll(2) of both descriptors (and a getcwd for a
// relative cwd); inotify events are read only when there are some. Any
// event that concerns a cached path drops every entry and every watch;
// events about other names in a directory on the way are read and
// forgotten. keyWatch is used under keyCache.mu.
type keyWatch struct {
	opened   bool   // mfd is open (or failed is set)
	failed   bool   // no watching: the cache checks with stats
	ifd, mfd int    // inotify, /proc/self/mountinfo; -1 when not open
	gen      uint64 // counts resets: an entry holds only under the watches it was made with
	filters  map[int32]*watchFilter
	buf      [8192]byte
}

// watchFilter is what one watched directory's events matter for: the
// directory itself, and these entries.
type watchFilter struct {
	names map[string]struct{} // entries a path's resolution looks up
}

// No event that can happen to a directory's children (IN_ATTRIB, IN_MODIFY,
// IN_OPEN, IN_ACCESS, IN_CLOSE_*): with one in the mask the kernel marks
// every cached entry of the directory, negative ones included, when the
// watch is added, 57 ms for this machine's /tmp, paid again at each
// re-watch after a change. A directory's own attributes are not what a
// resolution reads (the stat check compares identity and mtime, and the
// mtime moves with the entries, which are watched).
const (
	watchEntries = syscall.IN_CREATE | syscall.IN_DELETE | syscall.IN_MOVED_FROM | syscall.IN_MOVED_TO
	watchSelf    = syscall.IN_DELETE_SELF | syscall.IN_MOVE_SELF
	watchMask    = watchEntries | watchSelf | syscall.IN_ONLYDIR | syscall.IN_MASK_ADD
	maxLinks     = 40 // as the kernel's path walk
)

// open starts the watch; false (also later) when it cannot, and the cache
// checks with stats instead.
func (w *keyWatch) open() bool {
	if w.failed {
		return false
	}
	if !w.opened {
		w.opened, w.ifd, w.mfd = true, -1, -1
		fd, err := syscall.Open("/proc/self/mountinfo", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			w.failed = true
			return false
		}
		w.mfd = fd
	}
	if w.ifd < 0 {
		fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
		if err != nil {
			w.failed = true
			return false
		}
		w.ifd, w.filters = fd, map[int32]*watchFilter{}
	}
	return true
}

// reset drops every watch: the entries made under them no longer hold. The
// instance stays open: closing one that had watches waits for an RCU grace
// period (8-22 ms measured), removing its watches does not. What they had
// queued, their IN_IGNORED included, is read and dropped.
func (w *keyWatch) reset() {
	if w.opened && w.ifd >= 0 {
		for wd := range w.filters {
			_, _, _ = syscall.RawSyscall(syscall.SYS_INOTIFY_RM_WATCH, uintptr(w.ifd), uintptr(wd), 0)
		}
		w.filters = map[int32]*watchFilter{}
		w.readEvents()
	}
	w.gen++
}

// close ends the watch for good; closing the instance may wait for the
// kernel (see reset), so a registry pays it once, at its Close.
func (w *keyWatch) close() {
	w.reset()
	if w.opened && w.ifd >= 0 {
		syscall.Close(w.ifd)
		w.ifd, w.filters = -1, nil
	}
	if w.opened && w.mfd >= 0 {
		syscall.Close(w.mfd)
	}
	w.opened, w.failed, w.mfd = true, true, -1
}

// watchDir watches the directory path (a resolved one) for the entries
// names.
func (w *keyWatch) watchDir(path string, names ...string) bool {
	wd, err := syscall.InotifyAddWatch(w.ifd, path, watchMask)
	if err != nil {
		return false
	}
	f := w.filters[int32(wd)]
	if f == nil {
		f = &watchFilter{names: map[string]struct{}{}}
		w.filters[int32(wd)] = f
	}
	for _, name := range names {
		f.names[name] = struct{}{}
	}
	return true
}

// watchPath watches what the absolute, clean path p's resolution reads:
// each directory on the way for the next name, following symbolic links
// as the kernel does, and the directory p leads to for its entries
// entries.
func (w *keyWatch) watchPath(p string, entries ...string) bool {
	return w.walk("/", strings.Split(strings.TrimPrefix(p, "/"), "/"), entries, 0)
}

func (w *keyWatch) walk(dir string, rest []string, entries []string, links int) bool {
	for i, name := range rest {
		if name == "" || name == "." {
			continue
		}
		if name == ".." {
			dir = filepath.Dir(dir) // dir is resolved: its parent is its own
			continue
		}
		if !w.watchDir(dir, name) {
			return false
		}
		next := filepath.Join(dir, name)
		fi, err := os.Lstat(next)
		if err != nil {
			return false
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			dir = next
			continue
		}
		target, err := os.Readlink(next)
		if err != nil || links >= maxLinks {
			return false
		}
		from := dir
		if filepath.IsAbs(target) {
			from = "/"
		}
		parts := append(strings.Split(target, "/"), rest[i+1:]...)
		return w.walk(from, parts, entries, links+1)
	}
	return w.watchDir(dir, entries...)
}

// changed reports whether anything a watched path depends on may have
// changed since the last call, reading pending events. It makes no call
// that can block.
func (w *keyWatch) changed() bool {
	fds := [2]struct {
		fd             int32
		events, revent int16
	}{{int32(w.ifd), syscall.EPOLLIN, 0}, {int32(w.mfd), syscall.EPOLLPRI, 0}}
	var ts syscall.Timespec
	n, _, e := syscall.RawSyscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), 2, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
	switch {
	case e != 0:
		return true
	case n == 0:
		return false
	case fds[1].revent&(syscall.EPOLLPRI|syscall.EPOLLERR) != 0:
		return true
	case fds[0].revent&^syscall.EPOLLIN != 0:
		return true
	}
	return w.readEvents()
}

// readEvents reads the pending events and says whether one concerns a
// watched path.
func (w *keyWatch) readEvents() bool {
	hit := false
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(w.ifd), uintptr(unsafe.Pointer(&w.buf[0])), uintptr(len(w.buf)))
		switch {
		case e == syscall.EAGAIN:
			return hit
		case e == syscall.EINTR:
			continue
		case e != 0 || n == 0:
			return true
		}
		for b := w.buf[:n]; len(b) >= syscall.SizeofInotifyEvent; {
			ev := (*syscall.InotifyEvent)(unsafe.Pointer(&b[0]))
			end := syscall.SizeofInotifyEvent + int(ev.Len)
			if end > len(b) {
				return true
			}
			name := b[syscall.SizeofInotifyEvent:end]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			hit = hit || w.matters(ev.Wd, ev.Mask, name)
			b = b[end:]
		}
	}
}

// matters says whether an event changes a watched path's resolution or a
// watched directory's entries.
func (w *keyWatch) matters(wd int32, mask uint32, name []byte) bool {
	if mask&(syscall.IN_Q_OVERFLOW|syscall.IN_UNMOUNT) != 0 {
		return true
	}
	f := w.filters[wd]
	if mask&syscall.IN_IGNORED != 0 {
		return f != nil // the kernel dropped a live watch; a removed one's last word is not news
	}
	if f == nil {
		return true
	}
	if len(name) == 0 { // the directory itself
		return true
	}
	_, ok := f.names[string(name)]
	return ok && mask&watchEntries != 0
}

// getwd is the process's working directory as getcwd(2) says it, in
// w.buf; nil when it fails (a removed directory).
func (w *keyWatch) getwd() []byte {
	n, _, e := syscall.RawSyscall(syscall.SYS_GETCWD, uintptr(unsafe.Pointer(&w.buf[0])), uintptr(len(w.buf)), 0)
	if e != 0 || n < 1 || w.buf[0] != '/' {
		return nil
	}
	return w.buf[:n-1] // without the NUL
}
