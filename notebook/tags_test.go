package notebook

import (
	"errors"
	"strings"
	"testing"
)

func TestSetTags(t *testing.T) {
	nb, err := Parse([]byte(`{"cells": [{"cell_type": "code", "metadata": {"z": 1, "a": 2}, "source": "x", "outputs": [], "execution_count": null}], "metadata": {}, "nbformat": 4, "nbformat_minor": 4}`))
	if err != nil {
		t.Fatal(err)
	}
	if tags := nb.Tags(0); tags != nil {
		t.Fatalf("tags of an untagged cell: %q", tags)
	}
	if err := nb.SetTags(0, []string{"injected-parameters"}); err != nil {
		t.Fatal(err)
	}
	if tags := nb.Tags(0); len(tags) != 1 || tags[0] != "injected-parameters" {
		t.Fatalf("tags after SetTags: %q", tags)
	}
	out := string(nb.Bytes())
	z, a, tags := strings.Index(out, `"z": 1`), strings.Index(out, `"a": 2`), strings.Index(out, `"tags": [`)
	if z < 0 || !(z < a && a < tags) {
		t.Fatalf("metadata not kept in its order with tags added:\n%s", out)
	}
	if _, err := Parse(nb.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := nb.SetTags(3, nil); err == nil {
		t.Fatal("SetTags out of range: no error")
	}
}

// SaveUnsynced checks the file as Save does: a notebook changed on disk
// since it was read is not overwritten.
func TestSaveUnsyncedChecksTheFile(t *testing.T) {
	path := t.TempDir() + "/nb.ipynb"
	if err := New().Save(path); err != nil {
		t.Fatal(err)
	}
	nb, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	nb.Insert(0, Code, "1")
	if err := nb.SaveUnsynced(path); err != nil {
		t.Fatal(err)
	}
	other, _ := Load(path)
	other.Insert(0, Code, "2")
	if err := other.Save(path); err != nil {
		t.Fatal(err)
	}
	nb.Insert(0, Code, "3")
	if err := nb.SaveUnsynced(path); !errors.Is(err, ErrConflict) {
		t.Fatalf("save over another's change: %v, want ErrConflict", err)
	}
}
