package shared

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/evalhost/evalhost/internal/trustdir"
)

// A gateway's kernels talk ZMQ to it over unix sockets (transport ipc) in
// a directory only this user may enter, not over TCP on 127.0.0.1, where
// any local user can connect to a kernel's ports or take one that
// jupyter_client chose by binding and closing it. The directory is the
// gateway's Jupyter runtime directory: jupyter_client names each kernel's
// connection file <dir>/kernel-<id>.json and, for ipc, its sockets
// <dir>/kernel-<id>-ipc-<n>.

// kernelSocketName is the longest name a kernel's socket gets in the
// directory: "/kernel-", a 36-character uuid, "-ipc-" and a channel number
// (1 to 5; two digits allowed).
const kernelSocketName = len("/kernel-") + 36 + len("-ipc-") + 2

// tempKernelDir prefixes the directories made in a temporary directory
// when the state directory's path is too long for a socket path.
const tempKernelDir = "evalhost-gw-"

// maxSocketPath is the longest path a unix socket may have: sun_path less
// its terminating NUL (108 bytes on Linux, 104 on macOS and the BSDs).
func maxSocketPath() int {
	if runtime.GOOS == "linux" {
		return 107
	}
	return 103
}

func fitsSocketPath(dir string) bool { return len(dir)+kernelSocketName <= maxSocketPath() }

// kernelDir makes the directory a new gateway's kernels keep their
// connection files and sockets in: <state>/run when its sockets' paths fit
// in sun_path, else a new directory of mode 0700 in the temporary
// directory (or /tmp), which mkdir creates or fails, so nothing another
// user planted there is used. Each base is judged first (package trustdir):
// owned by this user or root, and writable by others only with the sticky
// bit, so no one else can rename the directory and put theirs in its place.
func kernelDir(state string) (string, error) {
	found, err := trustdir.WriteDir(state)
	if err != nil {
		return "", fmt.Errorf("gateway kernel directory: %w", err)
	}
	if d := filepath.Join(found.Real, "run"); fitsSocketPath(d) {
		if err := privateDir(d); err != nil {
			return "", err
		}
		return d, nil
	}
	var why []string
	for _, base := range []string{os.TempDir(), "/tmp"} {
		found, err := trustdir.WriteDir(base)
		switch {
		case err != nil:
			why = append(why, err.Error())
		case !filepath.IsAbs(found.Real):
			why = append(why, base+" is not an absolute path")
		case !fitsSocketPath(filepath.Join(found.Real, tempKernelDir+"4294967295")):
			why = append(why, base+" is too long a path for the sockets")
		default:
			d, err := os.MkdirTemp(found.Real, tempKernelDir)
			if err != nil {
				return "", fmt.Errorf("gateway kernel directory: %w", err)
			}
			return d, nil
		}
	}
	return "", fmt.Errorf("no directory for the gateway's kernel sockets: %s is too long a path for them (a socket path has at most %d bytes), and %s",
		state, maxSocketPath(), strings.Join(why, "; "))
}

// privateDir makes dir, mode 0700, unless it exists, and makes sure it is
// a directory of this user's (not a link) that no one else may enter.
func privateDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("gateway kernel directory: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("gateway kernel directory: %w", err)
	}
	if err := checkPrivate(dir, fi); err != nil {
		if !fi.IsDir() || !isMine(fi) {
			return err
		}
		// This user's, opened by hand: close it.
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("gateway kernel directory: %w", err)
		}
	}
	return nil
}

// kernelsPrivate reports why a recorded gateway's kernels may be open to
// other users: it was started by an evalhost that left them on TCP (no
// directory recorded), or its directory is gone (a cleaner of /tmp) or no
// longer private.
func kernelsPrivate(info Info) error {
	if info.KernelDir == "" {
		return errors.New("its kernels listen on TCP ports of 127.0.0.1 (it was started by an older evalhost)")
	}
	fi, err := os.Lstat(info.KernelDir)
	if err != nil {
		return fmt.Errorf("its kernel directory: %w", err)
	}
	return checkPrivate(info.KernelDir, fi)
}

func checkPrivate(dir string, fi fs.FileInfo) error {
	switch {
	case !fi.IsDir():
		return fmt.Errorf("kernel directory %s is not a directory (%v)", dir, fi.Mode().Type())
	case !isMine(fi):
		return fmt.Errorf("kernel directory %s is not this user's", dir)
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("kernel directory %s is open to others (mode %04o)", dir, fi.Mode().Perm())
	}
	return nil
}

func isMine(fi fs.FileInfo) bool {
	owner, ok := trustdir.Owner(fi)
	return !ok || owner == os.Geteuid()
}

// removeKernelDir removes the kernel directory of a gateway that ended,
// when it is one made in the temporary directory; <state>/run stays, for
// the gateways after it.
func removeKernelDir(info Info) {
	d := info.KernelDir
	if !strings.HasPrefix(filepath.Base(d), tempKernelDir) {
		return
	}
	if fi, err := os.Lstat(d); err == nil && fi.IsDir() && isMine(fi) {
		_ = os.RemoveAll(d)
	}
}
