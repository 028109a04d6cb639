package notebook

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// idOf is the id an idNotebook spec gives its cell, "" for none.
func idOf(spec string) string {
	if spec == "-" || strings.HasSuffix(spec, ":-") {
		return ""
	}
	if _, id, ok := strings.Cut(spec, ":"); ok {
		return id
	}
	return spec
}

// idNotebook is a notebook of the given version whose cells carry the given
// ids; "-" is a cell without one, "chart:ID" a cell of an unknown type.
func idNotebook(minor int, ids ...string) []byte {
	var cells []string
	for i, id := range ids {
		typ, field := "markdown", ""
		if t, _, ok := strings.Cut(id, ":"); ok {
			typ = t
		}
		if id != "-" && !strings.HasSuffix(id, ":-") {
			field = fmt.Sprintf(`"id": %q, `, idOf(id))
		}
		cells = append(cells, fmt.Sprintf(`{"cell_type": %q, %s"metadata": {}, "source": ["cell %d"]}`, typ, field, i))
	}
	return []byte(fmt.Sprintf(`{"cells": [%s], "metadata": {}, "nbformat": 4, "nbformat_minor": %d}`, strings.Join(cells, ", "), minor))
}

// Save gives a cell of an nbformat 4.5+ notebook that lacks a valid, unique
// id a new one, as nbformat's writer repairs them, keeping every good id;
// 4.4 and older, whose schema has no ids, are written as they are, and so
// are cells of unknown types.
func TestSaveRepairsCellIDs(t *testing.T) {
	tests := []struct {
		name  string
		minor int
		ids   []string
		keep  []bool // which cells keep their id (or lack of one)
	}{
		{"valid ids", 5, []string{"a", "B-9_x"}, []bool{true, true}},
		{"missing ids", 5, []string{"-", "a", "-"}, []bool{false, true, false}},
		{"a duplicate keeps its first", 5, []string{"a", "b", "a", "a"}, []bool{true, true, false, false}},
		{"invalid ids", 5, []string{"has space", "", strings.Repeat("x", 65), "é", "ok"}, []bool{false, false, false, false, true}},
		{"4.4 has no ids", 4, []string{"-", "-"}, []bool{true, true}},
		{"unknown types are read-only", 5, []string{"chart:-", "a", "chart:a"}, []bool{true, false, true}},
	}
	var written [][]byte
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig := idNotebook(tt.minor, tt.ids...)
			path := filepath.Join(t.TempDir(), "nb.ipynb")
			nb := mustParse(t, orig)
			if err := nb.Save(path); err != nil {
				t.Fatal(err)
			}
			data := readFile(t, path)
			saved := mustParse(t, data)
			seen := map[string]bool{}
			for i, c := range saved.Cells() {
				was := idOf(tt.ids[i])
				if kept := c.ID == was; kept != tt.keep[i] {
					t.Errorf("cell %d: id %q (was %q), want kept = %v", i, c.ID, was, tt.keep[i])
				}
				if !tt.keep[i] && (!validCellID(c.ID) || seen[c.ID]) {
					t.Errorf("cell %d: new id %q is not valid and unique", i, c.ID)
				}
				seen[c.ID] = true
			}
			if nb.Cells()[len(tt.ids)-1].ID != saved.Cells()[len(tt.ids)-1].ID {
				t.Error("the notebook in memory does not hold the ids it was saved with")
			}
			unchanged := !slices.Contains(tt.keep, false)
			if unchanged && !bytes.Equal(data, nb.Bytes()) || unchanged && !bytes.Equal(data, mustParse(t, orig).Bytes()) {
				t.Errorf("a notebook with nothing to repair was rewritten:\n%s", data)
			}
			if tt.minor == 5 && !strings.Contains(tt.name, "unknown") {
				written = append(written, data)
			}
		})
	}
	t.Run("nbformat validates them without repairing", func(t *testing.T) { validateWithNbformat(t, written...) })
}

// TestRepairLooksOnlyAtChangedCells: nb run saves after every cell, and
// the id repair of such a save allocates nothing beyond the change itself
// (a check of every id built a set of all of them each time).
func TestRepairLooksOnlyAtChangedCells(t *testing.T) {
	nb := mustParse(t, bigNotebook(t, 1000))
	if n := nb.repairCellIDs(); n != 0 {
		t.Fatalf("repaired %d ids of a valid notebook", n)
	}
	k := 0
	change := func() {
		k++
		if err := nb.SetCellMetadata(k%nb.Len(), "n", k); err != nil {
			t.Fatal(err)
		}
	}
	alone := testing.AllocsPerRun(20, change)
	withRepair := testing.AllocsPerRun(20, func() { change(); nb.repairCellIDs() })
	if withRepair > alone {
		t.Errorf("a change and a repair allocate %v times, the change alone %v: the repair checked unchanged cells", withRepair, alone)
	}
}
