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

// A file that starts with a byte order mark is refused as Jupyter refuses
// it, saying what the mark is and what to do, not only that a character
// was unexpected.
func TestParseSaysWhatAByteOrderMarkIs(t *testing.T) {
	body := `{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}`
	cases := []struct {
		name, prefix, want string
	}{
		{"UTF-8 BOM", "\xef\xbb\xbf", "UTF-8 byte order mark"},
		{"UTF-16LE", "\xff\xfe", "UTF-16"},
		{"UTF-16BE", "\xfe\xff", "UTF-16"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.prefix + body))
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Parse = %v, want ErrInvalid naming the %s", err, c.want)
			}
		})
	}
}
