package main

import (
	"fmt"

	"github.com/evalhost/evalhost/nbrun"
	"github.com/evalhost/evalhost/notebook"
)

// papermillMode is --papermill-metadata: whether nb run writes papermill's
// execution metadata. Auto writes it for a papermill-style run (parameters
// given) or a notebook that already has it, where something reads it
// (scrapbook, dashboards, papermill's own checks), and says so in the
// second case; any other run writes only what nbconvert --execute writes,
// so a notebook kept in git gains no timestamps or paths. Off removes it.
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

// apply decides for a run of nb (withParams: parameters were given)
// whether it writes the metadata, and prepares nb: off removes what an
// earlier run left, which would describe another run than the outputs
// this one writes. note is what to tell the user, if anything.
func (m papermillMode) apply(nb *notebook.Notebook, withParams bool) (write bool, note string, err error) {
	switch {
	case m == papermillOn || (m == papermillAuto && withParams):
		return true, "", nil
	case m == papermillOff:
		return false, "", nbrun.RemovePapermill(nb)
	case nbrun.HasPapermill(nb):
		return true, "writing papermill's execution metadata (times, statuses), which the notebook has from an earlier run; --papermill-metadata off removes it", nil
	}
	return false, "", nil
}
