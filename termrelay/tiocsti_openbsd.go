package termrelay

import "fmt"

// pushInput: OpenBSD removed TIOCSTI (6.0), and has no other way to put
// bytes into a terminal's input.
func pushInput(int, []byte) error {
	return fmt.Errorf("termrelay: giving typed keys back to the terminal: %w (OpenBSD has no TIOCSTI)", ErrUnsupported)
}
