package notebook

import "testing"

// A message that counts cells or lines says "1 cell", "1 line": "%d
// cells" said "1 cells".
func TestCountsInMessages(t *testing.T) {
	one := New()
	if err := one.Insert(0, Code, "x"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		err  func() error
		want string
	}{
		{"edit past the end of one cell", func() error { return one.Edit(1, "y") },
			"edit: cell 1 is out of range: the notebook has 1 cell, the only valid index is 0"},
		{"insert past the end of none", func() error { return New().Insert(1, Code, "y") },
			"insert: cell 1 is out of range: the notebook has 0 cells, the only valid index is 0"},
		{"insert past the end of one cell", func() error { return one.Insert(2, Code, "y") },
			"insert: cell 2 is out of range: the notebook has 1 cell, valid indexes are 0-1"},
		{"lines past the end of one line", func() error {
			_, err := SelectLines("only\n", []Range{{Start: 2}})
			return err
		}, "bad line selector: line 2 is past the end: the text has 1 line"},
		{"lines past the end of two lines", func() error {
			_, err := SelectLines("a\nb\n", []Range{{Start: 3}})
			return err
		}, "bad line selector: line 3 is past the end: the text has 2 lines"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			if err == nil || err.Error() != tc.want {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}
