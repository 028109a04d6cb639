package main

import (
	"fmt"

	"github.com/evalhost/evalhost/notebook"
)

// papermillMode is --papermill-metadata: whether nb run writes papermill's
// execution metadata. Auto writes it for a papermill-style run (parameters
// given) or a notebook that already has it, where something reads it
// (scrapbook, dashboards, papermill's own checks); any other run writes
// only what nbconvert --execute writes, so a notebook kept in git gains no
// timestamps or paths.
type papermillMode string

const (
	papermillAuto papermillMode = "auto"
	papermillOn   papermillMode = "on"
	papermillOff  papermillMode = "off"
)

func (m *papermillMode) String() string { return string(*m) }
func (m *papermillMode) Type() string   { return "auto|on|off" }

func (m *papermillMode) Set(s string) error {
	switch papermillMode(s) {
	case papermillAuto, papermillOn, papermillOff:
		*m = papermillMode(s)
		return nil
	case "true", "yes", "1":
		*m = papermillOn
		return nil
	case "false", "no", "0":
		*m = papermillOff
		return nil
	}
	return fmt.Errorf("want auto, on or off")
}

// wants says whether a run of nb writes the metadata; withParams is
// whether parameters were given.
func (m papermillMode) wants(nb *notebook.Notebook, withParams bool) bool {
	switch m {
	case papermillOn:
		return true
	case papermillOff:
		return false
	}
	return withParams || nb.Metadata("papermill") != nil
}
