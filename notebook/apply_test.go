package notebook

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"
)

// cellChunk is cell i as it appears inside the file: its lines at depth 2.
func cellChunk(nb *Notebook, i int) string {
	e := encoder{indent: nb.layout.indent, newline: nb.layout.newline}
	e.value(nb.cells[i], 2)
	return string(e.buf)
}

var cellIDPattern = regexp.MustCompile(`^[0-9a-f]{8}$`)

func TestApplyText(t *testing.T) {
	type check func(t *testing.T, before, after *Notebook)
	// onlyCellChanged: the file differs only inside cell i's lines.
	onlyCellChanged := func(i int) check {
		return func(t *testing.T, before, after *Notebook) {
			want := strings.Replace(string(before.Bytes()), cellChunk(before, i), cellChunk(after, i), 1)
			if got := string(after.Bytes()); got != want {
				t.Errorf("lines outside cell %d changed:\n got: %s\nwant: %s", i, got, want)
			}
		}
	}
	field := func(i int, name string, want string) check {
		return func(t *testing.T, _, after *Notebook) {
			got := "<absent>"
			if v := after.cells[i].get(name); v != nil {
				e := encoder{indent: "", newline: "\n"}
				e.value(v, 0)
				got = strings.ReplaceAll(string(e.buf), "\n", "")
			}
			if got != want {
				t.Errorf("cell %d %s = %s, want %s", i, name, got, want)
			}
		}
	}
	newID := func(i int) check {
		return func(t *testing.T, _, after *Notebook) {
			if id := after.Cell(i).ID; !cellIDPattern.MatchString(id) {
				t.Errorf("cell %d id %q, want 8 hex digits like nbformat", i, id)
			}
		}
	}
	cells := func(want ...string) check {
		return func(t *testing.T, _, after *Notebook) {
			var got []string
			for _, c := range after.Cells() {
				got = append(got, string(c.Type)+":"+c.Source)
			}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("cells = %q, want %q", got, want)
			}
		}
	}
	tests := []struct {
		name   string
		file   string
		edit   func(string) string
		checks []check
	}{
		{"edit code source keeps outputs id metadata", "basic", repl("print(x)\n", "print(x + 1)\n"),
			[]check{onlyCellChanged(2), field(2, "id", `"f658f7a7"`), field(2, "execution_count", "2"),
				field(2, "metadata", `{"collapsed": false,"tags": ["keep"]}`)}},
		{"code to markdown drops outputs and count", "basic", repl("# %% [code] cell:2", "# %% [markdown] cell:2"),
			[]check{onlyCellChanged(2), field(2, "outputs", "<absent>"), field(2, "execution_count", "<absent>"), field(2, "cell_type", `"markdown"`)}},
		{"markdown to code gets count and outputs, loses attachments", "attachments", repl("# %% [markdown] cell:0", "# %% [code] cell:0"),
			[]check{onlyCellChanged(0), field(0, "outputs", "[]"), field(0, "execution_count", "null"), field(0, "attachments", "<absent>")}},
		{"raw source without final newline", "basic", repl("no newline\n", "no newline\nmore\n"),
			[]check{onlyCellChanged(3), field(3, "source", `["raw text\n","no newline\n","more"]`)}},
		{"append new code cell gets nbformat id", "basic", func(s string) string { return s + "# %% [code]\nnew = 2\n" },
			[]check{newID(5), field(5, "outputs", "[]"), field(5, "execution_count", "null"), field(5, "metadata", "{}")}},
		{"bare marker is a new code cell", "empty", func(string) string { return "# %%\nx\n# %% [raw]\n" },
			[]check{cells("code:x", "raw:"), newID(0), newID(1)}},
		{"new cell in 4.4 notebook has no id", "v4.4", func(s string) string { return s + "# %% [markdown]\nnote\n" },
			[]check{field(5, "id", "<absent>"), cells("markdown:# Title\n\nSome *text*.", "code:import math\nx = 1\n", "code:print(x)\nx", "raw:raw text\nno newline", "code:", "markdown:note")}},
		{"reorder keeps cells", "basic", reorder, []check{cells("code:", "raw:raw text\nno newline", "code:print(x)\nx", "code:import math\nx = 1\n", "markdown:# Title\n\nSome *text*."),
			field(2, "id", `"f658f7a7"`)}},
		{"delete by dropping a section", "basic", func(s string) string { return s[:strings.Index(s, "# %% [code] cell:1")] },
			[]check{cells("markdown:# Title\n\nSome *text*.")}},
		{"empty text empties notebook", "basic", func(string) string { return "" }, []check{cells()}},
		{"copy without index is a new cell", "basic", func(s string) string { return s + "# %% [code]\nprint(x)\nx\n" },
			[]check{newID(5), field(5, "outputs", "[]")}},
		{"foreign layout keeps key order and indent", "foreign_indent2", repl("x = 1", "x = 2"),
			[]check{onlyCellChanged(0), field(0, "metadata", `{"x-extra": {"keep": true}}`)}},
		{"non-ascii edit", "nonascii", repl("# 日本語コメント", "# 中文 ✓"), []check{onlyCellChanged(1)}},
		{"crlf marker tolerated", "basic", repl("# %% [raw] cell:3\n", "# %% [raw] cell:3\r\n"), []check{onlyCellChanged(3)}},
		{"text saved by a crlf editor is unchanged", "basic", func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") },
			[]check{func(t *testing.T, before, after *Notebook) {
				if !bytes.Equal(after.Bytes(), before.Bytes()) {
					t.Errorf("CRLF line ends changed the cells: %q", after.Text())
				}
			}}},
	}
	var written [][]byte
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := mustParse(t, readFile(t, "testdata/"+tt.file+".ipynb"))
			text := tt.edit(before.Text())
			after, err := before.ApplyText(text)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range tt.checks {
				c(t, before, after)
			}
			if again, err := after.ApplyText(after.Text()); err != nil || !bytes.Equal(again.Bytes(), after.Bytes()) {
				t.Errorf("applied notebook does not round trip: %v", err)
			}
			written = append(written, after.Bytes())
		})
	}
	t.Run("nbformat validates all", func(t *testing.T) { validateWithNbformat(t, written...) })
}

func repl(old, new string) func(string) string {
	return func(s string) string {
		if !strings.Contains(s, old) {
			panic("test edit: text lacks " + old)
		}
		return strings.Replace(s, old, new, 1)
	}
}

// reorder reverses the cell sections of a view.
func reorder(s string) string {
	parts := regexp.MustCompile(`(?m)^# %%`).Split(s, -1)[1:]
	var b strings.Builder
	for i := len(parts) - 1; i >= 0; i-- {
		b.WriteString("# %%" + parts[i])
	}
	return b.String()
}

func TestApplyTextErrors(t *testing.T) {
	base := mustParse(t, readFile(t, "testdata/basic.ipynb"))
	tests := []struct {
		name, text, want string
		line             int
	}{
		{"blank line before first marker", "\n# %% [code] cell:0\n", "text before the first cell marker", 1},
		{"text before first marker", "x = 1\n# %% [code]\n", "text before the first cell marker", 1},
		{"unknown cell type", "# %% [python]\n", `unknown cell type "python"`, 1},
		{"bad index", "# %% [code] cell:x\n", `cell index "x" is not a non-negative integer`, 1},
		{"negative index", "# %% [code] cell:-1\n", "not a non-negative integer", 1},
		{"title after marker", "# %% my title\n", `no [cell type]`, 1},
		{"junk after type", "# %% [code] tags=[]\n", `unexpected " tags=[]"`, 1},
		{"unclosed bracket", "# %% [code\n", "unclosed '['", 1},
		{"latin-1 byte", "# %% [code] cell:0\nx = 'caf\xe9'\n", "byte 0xe9 at column 9 is not UTF-8", 2},
		{"latin-1 byte after non-ascii", "# %% [code]\n\u00e9\xe9\n", "byte 0xe9 at column 2 is not UTF-8", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := string(base.Bytes())
			_, err := base.ApplyText(tt.text)
			var te *TextError
			if !errors.As(err, &te) || !errors.Is(err, ErrBadText) {
				t.Fatalf("err = %v, want a *TextError", err)
			}
			if te.Line != tt.line || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %q (line %d), want line %d and %q", err, te.Line, tt.line, tt.want)
			}
			if string(base.Bytes()) != before {
				t.Errorf("a failed apply changed the notebook")
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, data, want string
		cell             int // -2: syntax error
	}{
		{"not json", "{", "invalid notebook JSON at line 1, column 2", -2},
		{"trailing garbage", "{} x", `unexpected 'x' after the top-level value`, -2},
		{"bad escape", `{"a":"\q"}`, `bad escape`, -2},
		{"raw newline in string", "{\"a\":\"x\ny\"}", "control character", -2},
		{"invalid utf8", "{\"a\":\"\xff\"}", "invalid UTF-8", -2},
		{"line and column", "{\n \"cells\": [\n  }\n", "line 3, column 3", -2},
		{"top level array", "[]", "top level is a JSON array, want an object", -1},
		{"missing cells", `{"metadata":{}}`, `notebook: field "cells": missing "cells" array`, -1},
		{"worksheets without a version", `{"worksheets":[]}`, `no "nbformat": 3`, -1},
		{"nbformat 3 without metadata", `{"nbformat":3,"worksheets":[]}`, "missing in this nbformat 3 notebook", -1},
		{"nbformat 3 heading level past 6", `{"nbformat":3,"metadata":{},"worksheets":[{"cells":[{"cell_type":"heading","level":1000000000,"source":"t"}]}]}`,
			`cell 0: field "level": is 1000000000, want a heading level from 1 to 6`, 0},
		{"nbformat 3 worksheet without cells", `{"nbformat":3,"metadata":{},"worksheets":[{}]}`, "worksheet 0 has no cells array", -1},
		{"nbformat 2", `{"nbformat":2,"worksheets":[]}`, "this is an nbformat 2 notebook", -1},
		{"cells not array", `{"cells":{}}`, `field "cells": is a object, want an array`, -1},
		{"cell not object", `{"cells":[1]}`, "cell 0: is a JSON number, want an object", 0},
		{"missing cell type", `{"cells":[{"cell_type":"code"},{"source":""}]}`, `cell 1: field "cell_type": missing`, 1},
		{"cell type not string", `{"cells":[{"cell_type":3}]}`, `is a number, want the string`, 0},
		{"source number", `{"cells":[{"cell_type":"code","source":5}]}`, `cell 0: field "source": want a string or an array of strings`, 0},
		{"source array of non-strings", `{"cells":[{"cell_type":"code","source":["a",1]}]}`, `field "source"`, 0},
		{"metadata not object", `{"cells":[{"cell_type":"raw","metadata":[]}]}`, `field "metadata": is a array`, 0},
		{"outputs not array", `{"cells":[{"cell_type":"code","outputs":{}}]}`, `field "outputs"`, 0},
		{"lower-case nan", `{"cells":[],"metadata":{"a":nan}}`, "unexpected 'n', want a value", -2},
		{"-NaN, which Python refuses too", `{"cells":[],"metadata":{"a":-NaN}}`, "bad number, want a digit", -2},
		{"+Infinity", `{"cells":[],"metadata":{"a":+Infinity}}`, "unexpected '+', want a value", -2},
		{"nbformat NaN", `{"cells":[],"nbformat":NaN,"nbformat_minor":5}`, `field "nbformat": is NaN, want a whole number`, -1},
		{"nbformat_minor not whole", `{"cells":[],"nbformat":4,"nbformat_minor":5.0}`, `field "nbformat_minor": is 5.0, want a whole number`, -1},
		{"too deep", strings.Repeat("[", 600) + strings.Repeat("]", 600), "nesting deeper than 512", -2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.data))
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %q, want it to contain %q", err, tt.want)
			}
			var se *StructureError
			switch {
			case tt.cell == -2 && errors.As(err, &se):
				t.Errorf("want a syntax error, got %T", err)
			case tt.cell >= -1 && (!errors.As(err, &se) || se.Cell != tt.cell):
				t.Errorf("want a *StructureError for cell %d, got %#v", tt.cell, err)
			}
		})
	}
}

func TestCellActions(t *testing.T) {
	nb := mustParse(t, readFile(t, "testdata/basic.ipynb"))
	if err := nb.Edit(1, "y = 2\n"); err != nil {
		t.Fatal(err)
	}
	if err := nb.Insert(0, Markdown, "top"); err != nil {
		t.Fatal(err)
	}
	if err := nb.Insert(nb.Len(), Code, "end()"); err != nil {
		t.Fatal(err)
	}
	removed, err := nb.Delete(3)
	if err != nil {
		t.Fatal(err)
	}
	if removed.Source != "print(x)\nx" || removed.Type != Code {
		t.Errorf("Delete returned %+v", removed)
	}
	var got []string
	for _, c := range nb.Cells() {
		got = append(got, string(c.Type)+":"+c.Source)
	}
	want := []string{"markdown:top", "markdown:# Title\n\nSome *text*.", "code:y = 2\n", "raw:raw text\nno newline", "code:", "code:end()"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("cells = %q\nwant   %q", got, want)
	}
	if !cellIDPattern.MatchString(nb.Cell(0).ID) || nb.Cell(0).ID == nb.Cell(5).ID {
		t.Errorf("inserted ids %q %q", nb.Cell(0).ID, nb.Cell(5).ID)
	}
	validateWithNbformat(t, nb.Bytes())

	errTests := []struct {
		name string
		do   func() error
		want string
	}{
		{"edit past end", func() error { return nb.Edit(6, "x") }, "edit: cell 6 is out of range: the notebook has 6 cells, valid indexes are 0-5"},
		{"edit negative", func() error { return nb.Edit(-1, "x") }, "cell -1 is out of range"},
		{"insert past end", func() error { return nb.Insert(7, Code, "x") }, "insert: cell 7 is out of range: the notebook has 6 cells, valid indexes are 0-6"},
		{"delete past end", func() error { _, err := nb.Delete(6); return err }, "delete: cell 6 is out of range"},
		{"delete from empty", func() error { _, err := New().Delete(0); return err }, "the notebook has no cells"},
		{"insert bad type", func() error { return nb.Insert(0, "heading", "x") }, `unknown cell type "heading"`},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) {
			before := nb.Bytes()
			err := tt.do()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if !bytes.Equal(before, nb.Bytes()) {
				t.Errorf("failed action changed the notebook")
			}
		})
	}
}

// The reference runtime (004_*.txt): "If cell:N points at an unused existing
// cell, that cell is cloned ... If no valid unused original index is present,
// a new cell is created." A duplicated marker (an agent splitting a cell) or
// an index past the end is a new cell, not an error.
func TestApplyTextUnknownOrReusedIndexIsNewCell(t *testing.T) {
	base := mustParse(t, readFile(t, "testdata/basic.ipynb"))
	out, err := base.ApplyText("# %% [code] cell:1\nx = 1\n# %% [code] cell:1\nx = 2\n# %% [code] cell:9\ny\n")
	if err != nil {
		t.Fatalf("ApplyText: %v", err)
	}
	if out.Len() != 3 {
		t.Fatalf("%d cells, want 3", out.Len())
	}
	orig := base.Cell(1).ID
	if got := out.Cell(0); got.ID != orig || got.Source != "x = 1" {
		t.Errorf("cell 0 = %+v, want original cell 1 (id %s) with the new source", got, orig)
	}
	for i, src := range []string{"x = 2", "y"} {
		c := out.Cell(i + 1)
		if c.ID == orig || !cellIDPattern.MatchString(c.ID) || c.Source != src || c.Type != "code" {
			t.Errorf("cell %d = %+v, want a new code cell with a fresh id and source %q", i+1, c, src)
		}
		if ec := out.cells[i+1].get("execution_count"); ec == nil {
			t.Errorf("new code cell %d has no execution_count", i+1)
		}
		if o := out.cells[i+1].get("outputs"); o == nil {
			t.Errorf("new code cell %d has no outputs", i+1)
		}
	}
	if base.Len() != 5 {
		t.Errorf("ApplyText changed the original notebook")
	}
}

// A notebook is grown to at most MaxCells, by text or by Insert:
// 2,000,000 "# %%" lines (10 MB) took 5.8 GB and half a minute and wrote
// a 270 MB file Load refused.
func TestNotebookBounds(t *testing.T) {
	_, err := New().ApplyText(strings.Repeat("# %%\n", 2_000_000))
	if !errors.Is(err, ErrBadText) || !strings.Contains(err.Error(), "more than 20000 cells") {
		t.Fatalf("ApplyText of 2,000,000 cells = %v; want ErrBadText naming the limit", err)
	}
	nb, err := New().ApplyText(strings.Repeat("# %%\n", MaxCells))
	if err != nil || nb.Len() != MaxCells {
		t.Fatalf("ApplyText of MaxCells cells: %v", err)
	}
	if err := nb.Insert(0, Code, "x"); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Insert past MaxCells = %v; want ErrTooLarge", err)
	}

}

// TestApplyTextDropsByteOrderMark: text saved by an editor that starts a
// UTF-8 file with a byte order mark (Windows Notepad, with "\r\n" line ends)
// applies as the same text without it, as python3 reads such a source.
func TestApplyTextDropsByteOrderMark(t *testing.T) {
	orig := readFile(t, "testdata/basic.ipynb")
	nb := mustParse(t, orig)
	for name, text := range map[string]string{
		"bom":          "\ufeff" + nb.Text(),
		"bom and crlf": "\ufeff" + strings.ReplaceAll(nb.Text(), "\n", "\r\n"),
	} {
		t.Run(name, func(t *testing.T) {
			applied, err := nb.ApplyText(text)
			if err != nil {
				t.Fatal(err)
			}
			if got := applied.Bytes(); !bytes.Equal(got, orig) {
				t.Fatalf("the notebook changed:\n%s", got)
			}
		})
	}
}

// TestDuplicateKeysReadAsPython: an object with a key twice is read as
// Python's json (and so nbformat, Jupyter and papermill) reads it, the last
// value in the first one's place, so evalhost views and runs the notebook
// Jupyter shows, not code hidden from it; an edit writes the key once, as
// nbformat would.
func TestDuplicateKeysReadAsPython(t *testing.T) {
	file := `{"cells": [{"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [],` +
		` "source": "print('hidden')", "source": "print('shown')"}],` +
		` "cells": [{"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": "print('jupyter')"}],` +
		` "metadata": {}, "nbformat": 4, "nbformat_minor": 4}`
	nb := mustParse(t, []byte(file))
	if got := nb.Cell(0).Source; got != "print('jupyter')" {
		t.Fatalf("cell 0 is %q, want the last \"cells\" (Python's json: print('jupyter'))", got)
	}
	if got := string(nb.Bytes()); got != file {
		t.Fatalf("the unedited notebook is not its file:\n%s", got)
	}
	cell := mustParse(t, []byte(`{"cells": [{"cell_type": "code", "source": "a", "metadata": {}, "source": "b"}]}`))
	if got := cell.Cell(0).Source; got != "b" {
		t.Fatalf("a cell's duplicated source reads %q, want the last, b", got)
	}
	if err := cell.SetCellMetadata(0, "x", 1); err != nil {
		t.Fatal(err)
	}
	if got, want := string(cell.Bytes()), "{\n \"cells\": [\n  {\n   \"cell_type\": \"code\",\n   \"source\": \"b\",\n   \"metadata\": {\n    \"x\": 1\n   }\n  }\n ]\n}"; got != want {
		t.Fatalf("after an edit:\n%s\nwant\n%s", got, want)
	}
}
