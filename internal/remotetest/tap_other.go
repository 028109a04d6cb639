//go:build !linux

package remotetest

import (
	"errors"
	"fmt"
	"os"
)

// openTAP: TAP devices through /dev/net/tun are Linux's; a Host is too.
func openTAP(name string) (*os.File, error) {
	return nil, fmt.Errorf("TAP device %s: %w", name, errors.ErrUnsupported)
}
