package main

import (
	"os/exec"
	"strings"
	"testing"
)

// sizeSet reads a value as python3's int() does, and counts it as a size
// when above 0; each row's want is checked against python3's own answer.
func TestSizeSet(t *testing.T) {
	values := []string{"80", " 80\t", "+80", "-80", "0", "00", "000_1", "1_0", "1__0", "_10", "10_", "", " ", "abc",
		"8o", "80.0", "+-80", "--80", "- 80", "\u0661\u0662", "\u0660", "\U0001D7CE\U0001D7D8", "\U0001D7D8", "\u00a080\u2003", "\x1c5\x1f", "\u00855", "\xff"}
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	code := "import sys\nfor v in sys.argv[1:]:\n    try: print(int(v) > 0)\n    except ValueError: print(False)"
	out, err := exec.Command(python, append([]string{"-c", code}, values...)...).Output()
	if err != nil {
		t.Fatal(err)
	}
	wants := strings.Fields(string(out))
	for i, v := range values {
		t.Run(v, func(t *testing.T) {
			if got := sizeSet(v); got != (wants[i] == "True") {
				t.Errorf("sizeSet(%q) = %v, python3's int() says %s", v, got, wants[i])
			}
		})
	}
}
