package notebook

import (
	"errors"
	"strings"
	"testing"
)

// A notebook of a newer major nbformat than 4 is refused, as nbformat.read
// refuses it ("Unsupported nbformat version 5"), saying what it is: read as
// 4 and written back it would be a file claiming a format whose rules it was
// not written by. A newer minor version of 4 is read, as nbformat reads it.
func TestParseRefusesANewerMajorFormat(t *testing.T) {
	cell := `{"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": "1"}`
	cases := []struct {
		name    string
		version string
		refused bool
	}{
		{"nbformat 5", `"nbformat": 5, "nbformat_minor": 0`, true},
		{"nbformat 40", `"nbformat": 40, "nbformat_minor": 0`, true},
		{"nbformat 4.99", `"nbformat": 4, "nbformat_minor": 99`, false},
		{"nbformat 4.0", `"nbformat": 4, "nbformat_minor": 0`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(`{"cells": [` + cell + `], "metadata": {}, ` + c.version + `}`))
			switch {
			case c.refused && (!errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "newer")):
				t.Fatalf("Parse = %v, want ErrInvalid saying the format is newer", err)
			case !c.refused && err != nil:
				t.Fatalf("Parse = %v, want it read", err)
			}
		})
	}
}
