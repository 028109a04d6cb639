package notebook

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestRoundTripGolden: every test notebook survives parse → bytes and
// view → apply → bytes byte for byte, and its view matches the golden text.
func TestRoundTripGolden(t *testing.T) {
	for _, path := range goldenNotebooks(t) {
		name := strings.TrimSuffix(filepath.Base(path), ".ipynb")
		t.Run(name, func(t *testing.T) {
			orig := readFile(t, path)
			nb := mustParse(t, orig)
			if got := nb.Bytes(); !bytes.Equal(got, orig) {
				t.Fatalf("parse→bytes changed the file\n got: %s\nwant: %s", got, orig)
			}
			text := nb.Text()
			golden(t, name+".view.txt", []byte(text))
			applied, err := nb.ApplyText(text)
			if err != nil {
				t.Fatal(err)
			}
			if got := applied.Bytes(); !bytes.Equal(got, orig) {
				t.Fatalf("view→apply changed the file\n got: %s\nwant: %s", got, orig)
			}
			if applied.Text() != text {
				t.Fatalf("view of the applied notebook differs")
			}
		})
	}
}

// TestSerializerMatchesNbformat: for every nbformat-written notebook, what
// nbformat itself writes after reading ours is identical to ours.
func TestSerializerMatchesNbformat(t *testing.T) {
	var names []string
	var ours [][]byte
	for _, path := range goldenNotebooks(t) {
		if strings.Contains(path, "foreign") {
			continue
		}
		names = append(names, path)
		ours = append(ours, mustParse(t, readFile(t, path)).Bytes())
	}
	theirs := validateWithNbformat(t, ours...)
	for i, name := range names {
		if !bytes.Equal(ours[i], theirs[i]) {
			t.Errorf("%s: nbformat writes it differently\nours:   %s\ntheirs: %s", name, ours[i], theirs[i])
		}
	}
}

func TestNewNotebookIsNbformatEmpty(t *testing.T) {
	got := New().Bytes()
	want := readFile(t, "testdata/empty.ipynb")
	if !bytes.Equal(got, want) {
		t.Fatalf("New() = %s, want nbformat's empty notebook %s", got, want)
	}
}

// TestEscapedMarkersRoundTrip: source lines that look like markers come
// back as they were, through the escaping.
func TestEscapedMarkersRoundTrip(t *testing.T) {
	sources := []string{
		"# %% [code] cell:0",
		"# %%\n\\# %%\n\\\\# %% [raw]\nx",
		"# %%x\n",
		"\\not a marker\n# %% [markdown] cell:3\n",
		"",
		"\n",
		"\n\n",
		"a\r\nb\rc",
	}
	nb := New()
	for i, s := range sources {
		if err := nb.Insert(i, Code, s); err != nil {
			t.Fatal(err)
		}
	}
	text := nb.Text()
	back, err := nb.ApplyText(text)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range sources {
		if got := back.Cell(i).Source; got != want {
			t.Errorf("cell %d: source %q came back as %q (text %q)", i, want, got, text)
		}
	}
	if !bytes.Equal(back.Bytes(), nb.Bytes()) {
		t.Errorf("escaped round trip changed the notebook")
	}
}

// TestLayoutKept: files in layouts other than nbformat's own come back byte
// for byte when unedited, and an edit changes only the edited cell's lines.
// indentZero is file, written by json.dumps(indent=1), as indent=0 writes
// it: the same lines without their leading spaces (no string holds a raw
// line break).
func indentZero(file string) string {
	lines := strings.Split(file, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimLeft(l, " ")
	}
	return strings.Join(lines, "\n")
}

// TestUneditedLayoutKept: a notebook in a layout the encoder does not
// write (hand-written, or by a tool that puts short arrays on one line)
// comes back byte for byte while nothing in it changed, so a view → apply
// of the same text is "unchanged"; an edit writes it in nbformat's layout.
func TestUneditedLayoutKept(t *testing.T) {
	file := "{\n\"cells\": [\n{\n\"cell_type\": \"code\",\n\"execution_count\": null,\n\"metadata\": {},\n" +
		"\"outputs\": [],\n\"source\": [\"print('Hello World')\"]\n}\n],\n" +
		"\"metadata\": {\"kernelspec\": {\"name\": \"python3\", \"language\": \"python\"}},\n" +
		"\"nbformat\": 4,\n\"nbformat_minor\": 2\n}\n"
	nb := mustParse(t, []byte(file))
	if got := string(nb.Bytes()); got != file {
		t.Fatalf("parse→bytes changed the file\n got: %q\nwant: %q", got, file)
	}
	applied, err := nb.ApplyText(nb.Text())
	if err != nil {
		t.Fatal(err)
	}
	if got := string(applied.Bytes()); got != file {
		t.Fatalf("view→apply changed the file\n got: %q\nwant: %q", got, file)
	}
	if err := applied.Edit(0, "print('edited')"); err != nil {
		t.Fatal(err)
	}
	edited := mustParse(t, applied.Bytes())
	if got := edited.Cell(0).Source; got != "print('edited')" {
		t.Fatalf("edited source = %q", got)
	}
	if err := nb.SetMetadata("x", "y"); err != nil {
		t.Fatal(err)
	}
	if got := string(nb.Bytes()); got == file {
		t.Fatalf("a metadata change was not written")
	}
}

func TestLayoutKept(t *testing.T) {
	base := string(readFile(t, "testdata/basic.ipynb"))
	tests := []struct {
		name string
		file string
	}{
		{"crlf line ends", strings.ReplaceAll(base, "\n", "\r\n")},
		{"crlf without final newline", strings.TrimSuffix(strings.ReplaceAll(base, "\n", "\r\n"), "\r\n")},
		{"no final newline", strings.TrimSuffix(base, "\n")},
		// json.dumps(indent=0), nbformat.write(nb, f, indent=0): line
		// breaks, no indent.
		{"indent 0", indentZero(base)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nb := mustParse(t, []byte(tt.file))
			if got := string(nb.Bytes()); got != tt.file {
				t.Fatalf("parse→bytes changed the file\n got: %q\nwant: %q", got, tt.file)
			}
			applied, err := nb.ApplyText(nb.Text())
			if err != nil {
				t.Fatal(err)
			}
			if got := string(applied.Bytes()); got != tt.file {
				t.Fatalf("view→apply changed the file\n got: %q\nwant: %q", got, tt.file)
			}
			before := cellChunk(nb, 1)
			if err := nb.Edit(1, "edited\n"); err != nil {
				t.Fatal(err)
			}
			want := strings.Replace(tt.file, before, cellChunk(nb, 1), 1)
			if got := string(nb.Bytes()); got != want {
				t.Errorf("an edit changed lines outside its cell\n got: %q\nwant: %q", got, want)
			}
		})
	}
}
