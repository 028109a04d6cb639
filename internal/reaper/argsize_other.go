//go:build !linux

package reaper

// Elsewhere the limits are not checked before execve (macOS has no limit
// on one string and a fixed ARG_MAX of its own): an E2BIG of it is said
// with the sizes alone (sizeError).
const maxStringBytes = 0

const minArgLimit = 1 << 62

func argLimit() int { return 0 }
