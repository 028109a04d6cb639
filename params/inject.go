package params

import (
	"fmt"
	"slices"

	"github.com/evalhost/evalhost/notebook"
	"github.com/evalhost/evalhost/percent"
	"github.com/evalhost/evalhost/sessions"
)

// Tags papermill reads and writes.
const (
	ParametersTag = "parameters"
	InjectedTag   = "injected-parameters"
)

// InjectNotebook puts p's cell into nb where papermill puts it and
// returns its index: in place of the first cell tagged
// injected-parameters, else right after the first tagged parameters, else
// at the top.
func InjectNotebook(nb *notebook.Notebook, p *Params) (int, error) {
	at := 0
	injected, param := TaggedCell(nb, InjectedTag), TaggedCell(nb, ParametersTag)
	switch {
	case injected >= 0:
		if _, err := nb.Delete(injected); err != nil {
			return -1, err
		}
		at = injected
	case param >= 0:
		at = param + 1
	}
	if err := nb.Insert(at, notebook.Code, p.Source()); err != nil {
		return -1, fmt.Errorf("inject parameters: %w", err)
	}
	if err := nb.SetTags(at, []string{InjectedTag}); err != nil {
		return -1, fmt.Errorf("inject parameters: %w", err)
	}
	return at, nil
}

// TaggedCell is the index of nb's first cell tagged tag, or -1.
func TaggedCell(nb *notebook.Notebook, tag string) int {
	for i := range nb.Len() {
		if slices.Contains(nb.Tags(i), tag) {
			return i
		}
	}
	return -1
}

// InjectCells is InjectNotebook for a percent script's code cells.
func InjectCells(cells []percent.Cell, p *Params) []percent.Cell {
	cell := percent.Cell{Cell: sessions.Cell{Language: sessions.LangPython, Code: p.Source(),
		Tags: []string{InjectedTag}}}
	at := 0
	injected, param := taggedIn(cells, InjectedTag), taggedIn(cells, ParametersTag)
	switch {
	case injected >= 0:
		cells = slices.Delete(slices.Clone(cells), injected, injected+1)
		at = injected
	case param >= 0:
		at = param + 1
	}
	return slices.Insert(slices.Clone(cells), at, cell)
}

func taggedIn(cells []percent.Cell, tag string) int {
	return slices.IndexFunc(cells, func(c percent.Cell) bool { return slices.Contains(c.Tags, tag) })
}
