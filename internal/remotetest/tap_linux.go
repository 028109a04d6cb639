package remotetest

import (
	"fmt"
	"os"
	"syscall"
	"unsafe"
)

// openTAP makes a TAP device named name and returns its file: a read is one
// Ethernet frame the kernel sent out of the device, a write is one frame
// arriving at it. The device is not persistent: it goes when the file
// closes, so the death of the process holding it takes it away too.
func openTAP(name string) (*os.File, error) {
	if len(name) >= syscall.IFNAMSIZ {
		return nil, fmt.Errorf("TAP device name %q is longer than %d bytes", name, syscall.IFNAMSIZ-1)
	}
	// Non-blocking before os.NewFile, so reads go through the poller and
	// Close ends a read that is waiting.
	fd, err := syscall.Open("/dev/net/tun", syscall.O_RDWR|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("opening /dev/net/tun for a TAP device: %w", err)
	}
	var req struct { // struct ifreq, as TUNSETIFF reads it
		name  [syscall.IFNAMSIZ]byte
		flags uint16
		_     [22]byte
	}
	copy(req.name[:], name)
	req.flags = syscall.IFF_TAP | syscall.IFF_NO_PI
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.TUNSETIFF, uintptr(unsafe.Pointer(&req))); errno != 0 {
		syscall.Close(fd)
		return nil, fmt.Errorf("making TAP device %s: %w", name, errno)
	}
	return os.NewFile(uintptr(fd), "tap "+name), nil
}
