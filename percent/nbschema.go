package percent

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrBadCell: a cell marker whose options jupytext fails on.
var ErrBadCell = errors.New("a cell jupytext cannot read")

// checkCellOptions refuses the options of a marker jupytext fails on:
// nbformat's schema refuses the cell it would make (tags that are not a
// list of distinct strings without commas, a name that is no string, a
// code cell's collapsed, scrolled or execution of the wrong type, a raw
// cell's format), or jupytext's is_active fails on them (run_control no
// mapping, active no string).
func checkCellOptions(c NotebookCell) error {
	md := c.Metadata
	failAs := func(why, format string, a ...any) error {
		return fmt.Errorf("%w: the %s cell at line %d: "+format+" (jupytext fails reading it: %s)",
			append([]any{ErrBadCell, c.Type, c.Line}, append(a, why)...)...)
	}
	fail := func(format string, a ...any) error { return failAs("nbformat's schema refuses it", format, a...) }
	if v, ok := md["run_control"]; ok {
		if _, ok := v.(map[string]any); !ok {
			return failAs("is_active reads run_control.frozen", "run_control is %s, no mapping", shownValue(v))
		}
	}
	if v, ok := md["tags"]; ok {
		list, ok := v.([]any)
		if !ok {
			return fail("tags is %s, no list", shownValue(v))
		}
		var seen []string
		for _, t := range list {
			s, ok := t.(string)
			if !ok || s == "" || strings.Contains(s, ",") || slices.Contains(seen, s) {
				return fail("tags holds %s, where tags are distinct strings without commas", shownValue(t))
			}
			seen = append(seen, s)
		}
	}
	if v, ok := md["active"]; ok && !activeByTagOrFrozen(md) {
		if _, ok := v.(string); !ok {
			return failAs("is_active splits it at commas", "active is %s, no string", shownValue(v))
		}
	}
	if v, ok := md["name"]; ok {
		if s, ok := v.(string); !ok || s == "" || strings.Contains(s, "\n") {
			return fail("name is %s, where a name is a string", shownValue(v))
		}
	}
	if v, ok := md["jupyter"]; ok {
		if _, ok := v.(map[string]any); !ok {
			return fail("jupyter is %s, no mapping", shownValue(v))
		}
	}
	switch c.Type {
	case "code":
		if v, ok := md["collapsed"]; ok {
			if _, ok := v.(bool); !ok {
				return fail("collapsed is %s, no boolean", shownValue(v))
			}
		}
		if v, ok := md["scrolled"]; ok {
			if _, ok := v.(bool); !ok && v != "auto" {
				return fail("scrolled is %s, where it is true, false or \"auto\"", shownValue(v))
			}
		}
		if v, ok := md["execution"]; ok {
			m, ok := v.(map[string]any)
			for _, x := range m {
				if _, isText := x.(string); !isText {
					ok = false
				}
			}
			if !ok {
				return fail("execution is %s, where it maps names to strings", shownValue(v))
			}
		}
	case "raw":
		if v, ok := md["format"]; ok {
			if _, ok := v.(string); !ok {
				return fail("format is %s, no string", shownValue(v))
			}
		}
	}
	return nil
}

// activeByTagOrFrozen says whether is_active answers before it reads
// the active option: a frozen cell, or an "active-" tag.
func activeByTagOrFrozen(md map[string]any) bool {
	if rc, ok := md["run_control"].(map[string]any); ok && rc["frozen"] == true {
		return true
	}
	return slices.ContainsFunc(tagsOf(md), func(t string) bool { return strings.HasPrefix(t, "active-") })
}

// shownValue is a metadata value in a message.
func shownValue(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("%q", v)
	case nil:
		return "None"
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	}
	return fmt.Sprint(v)
}
