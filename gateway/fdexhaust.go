package gateway

import (
	"errors"
	"strings"
	"syscall"
)

// IsFDExhausted reports whether err comes from running out of file
// descriptors, here (EMFILE) or inside the gateway (its 500 answer names it).
func IsFDExhausted(err error) bool {
	return err != nil && (errors.Is(err, ErrFDExhausted) || errors.Is(err, syscall.EMFILE) ||
		mentionsEMFILE(err.Error()))
}

func mentionsEMFILE(s string) bool {
	return strings.Contains(s, "Too many open files") || strings.Contains(s, "EMFILE")
}
