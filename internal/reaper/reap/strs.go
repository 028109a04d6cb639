package reap

// What the reaper needs of package strings, here because importing strings
// makes the reaper's init wait for most of the standard library's: Go
// initialises a package once its imports are, taking the first in
// import-path order among those ready, and strings is ready (after unicode)
// at the same moment as bufio, compress, crypto, encoding/gob, encoding/json
// and flag, all of which sort before it and before this package
// (reaper's TestReaperInitComesEarly).

func hasPrefix(s, prefix string) bool { return len(s) >= len(prefix) && s[:len(prefix)] == prefix }

func hasSuffix(s, suffix string) bool {
	return len(s) >= len(suffix) && s[len(s)-len(suffix):] == suffix
}

func cutPrefix(s, prefix string) (string, bool) {
	if !hasPrefix(s, prefix) {
		return s, false
	}
	return s[len(prefix):], true
}

func cutSuffix(s, suffix string) (string, bool) {
	if !hasSuffix(s, suffix) {
		return s, false
	}
	return s[:len(s)-len(suffix)], true
}

// cutByte is strings.Cut for a one-byte separator.
func cutByte(s string, sep byte) (before, after string, found bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == sep {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// splitByte is strings.Split for a one-byte separator.
func splitByte(s string, sep byte) []string {
	var out []string
	for {
		before, after, found := cutByte(s, sep)
		out = append(out, before)
		if !found {
			return out
		}
		s = after
	}
}
