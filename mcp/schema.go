package mcp

import (
	"fmt"

	"github.com/evalhost/evalhost/sessions"
	"github.com/google/jsonschema-go/jsonschema"
)

// The input schemas are written by hand, not derived from the Go types: a
// model reads them, so every field says what it does and what its limits are.

func object(required []string, props map[string]*jsonschema.Schema) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Properties: props, Required: required,
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}}
}

func str(desc string, enum ...string) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "string", Description: desc}
	for _, e := range enum {
		s.Enum = append(s.Enum, e)
	}
	return s
}

// Bounds of the strings a result or an error may echo: a result is one
// message, and clients drop the connection past 16 MiB (the Go SDK's).
const (
	maxIDChars    = 4096 // a session id (sessions.MaxSessionIDBytes), a path, a cwd
	maxTitleChars = 1024
	maxNameChars  = 256 // a language's name, a job id
	maxLinesChars = 64 << 10
)

// bounded sets s's maxLength, in characters as JSON Schema counts them.
func bounded(max int, s *jsonschema.Schema) *jsonschema.Schema {
	s.MaxLength = &max
	return s
}

func boolean(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "boolean", Description: desc}
}

func integer(desc string, minimum float64) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "integer", Description: desc, Minimum: &minimum}
}

func number(desc string, minimum, maximum float64) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "number", Description: desc, ExclusiveMinimum: &minimum, Maximum: &maximum}
}

func array(desc string, items *jsonschema.Schema, minItems int) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "array", Description: desc, Items: items, MinItems: &minItems}
}

const (
	sessionDesc = `Session id (default "default"). A session keeps one Python and one shell interpreter per ` +
		`(session, cwd): variables, imports and the shell's cd last between calls with the same id and cwd.`
	cwdDesc = `Working directory of a new session's interpreters (default: the server's). A different cwd ` +
		`is a different session.`
)

// MaxEvalCells bounds the cells of one eval call: its result is one
// message, and 300,000 empty cells made one of 70 MB, past what clients
// read (the Go SDK drops the connection at 16 MiB); 100 cells of the
// default output bound stay near 2 MB.
const MaxEvalCells = 100

func evalSchema() *jsonschema.Schema {
	cell := object([]string{"code"}, map[string]*jsonschema.Schema{
		"code": str("The code to run. Python cells show the value of a last expression, like Jupyter."),
		// No enum: names are taken in any case, as serve takes them
		// (sessions.ParseLanguage), which an enum cannot say.
		"language": bounded(maxNameChars, str("The cell's language: "+sessions.LanguageChoices()+`, in any case; "py" (Python) when absent.`)),
		"title":    bounded(maxTitleChars, str("A short label for the cell, shown in its status line.")),
		"reset":    boolean("Restart the session's interpreters before this cell: all earlier state is lost."),
		"timeout": number("Seconds the cell may run (default 30, at most 600; less than 1 counts as 1). On timeout it is interrupted, "+
			"then killed after a grace window; output so far is kept and ends with "+
			"\"Command timed out after N seconds\".", 0, 600),
		"onTimeout": str(`What the timeout does: "interrupt" (default) stops the cell; "detach" keeps it running `+
			`as a job (for a training run, a crawl, a build) and returns at the timeout with status "detached", `+
			`a job id and the output so far. Use the job, wait and stop tools on it.`, "interrupt", "detach"),
		"maxRuntime": number(`Seconds a detached cell may run in all, counted like the timeout (default 3600, `+
			`at most 86400, not less than the timeout); past it the job is stopped as a timeout stops a cell.`, 0, 86400),
	})
	cells := array(fmt.Sprintf("Cells to run in order in one session (at most %d). After a cell that is not ok the rest are skipped.",
		MaxEvalCells), cell, 1)
	cells.MaxItems = ptr(MaxEvalCells)
	return object([]string{"cells"}, map[string]*jsonschema.Schema{
		"cells":   cells,
		"session": bounded(maxIDChars, str(sessionDesc)),
		"cwd":     bounded(maxIDChars, str(cwdDesc)),
		"mode": str(`"session" (default): reuse the session's interpreters. "per-call": fresh interpreters `+
			`for this call only, shut down afterwards.`, "session", "per-call"),
	})
}

const nbPathDesc = `Path of the .ipynb file, relative to the server's working directory unless absolute.`

func nbCellSchema(required []string, extra map[string]*jsonschema.Schema) *jsonschema.Schema {
	props := map[string]*jsonschema.Schema{
		"path": bounded(maxIDChars, str(nbPathDesc)),
		"cell": integer("0-based cell index, as in the \"cell:N\" markers of notebook_view.", 0),
	}
	for k, v := range extra {
		props[k] = v
	}
	return object(required, props)
}
