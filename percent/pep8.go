package percent

import "strings"

// This file ports jupytext/pep8.py: how many blank lines PEP 8 wants
// between two cells of a script, which jupytext compares with the lines
// it finds to record lines_to_next_cell in a cell's metadata.

// pep8LinesBetweenCells is pep8_lines_between_cells for .py.
func pep8LinesBetweenCells(prev, next []string) int {
	switch {
	case len(next) == 0:
		return 1
	case len(prev) == 0:
		return 0
	case cellEndsWithFunctionOrClass(prev):
		if cellHasCode(next) {
			return 2
		}
		return 1
	case cellEndsWithCode(prev) && nextInstructionIsFunctionOrClass(next):
		return 2
	}
	return 1
}

func startsDef(line string) bool {
	return strings.HasPrefix(line, "def ") || strings.HasPrefix(line, "async ") || strings.HasPrefix(line, "class ")
}

// nextInstructionIsFunctionOrClass: is the first line of code (not
// blank, not a comment, decorator or continuation) a def or a class?
func nextInstructionIsFunctionOrClass(lines []string) bool {
	var parser stringParser
	for i, line := range lines {
		if parser.quoted() {
			parser.read(line)
			continue
		}
		parser.read(line)
		if pyStrip(line) == "" {
			if i > 0 && pyStrip(lines[i-1]) == "" {
				return false
			}
			continue
		}
		if startsDef(line) {
			return true
		}
		if strings.HasPrefix(line, "#") || strings.HasPrefix(line, "@") || strings.HasPrefix(line, " ") || strings.HasPrefix(line, ")") {
			continue
		}
		return false
	}
	return false
}

// cellEndsWithFunctionOrClass: does the cell's last unindented line,
// outside strings, start a def or a class?
func cellEndsWithFunctionOrClass(lines []string) bool {
	var parser stringParser
	var open []string
	for _, line := range lines {
		if !parser.quoted() {
			open = append(open, line)
		}
		parser.read(line)
	}
	for i := len(open) - 1; i >= 0; i-- {
		line := open[i]
		if pyStrip(line) == "" {
			if i < len(open)-1 && pyStrip(open[i+1]) == "" {
				return false
			}
			continue
		}
		if strings.HasPrefix(line, "#") || strings.HasPrefix(line, " ") || strings.HasPrefix(line, ")") {
			continue
		}
		return startsDef(line)
	}
	return false
}

// cellEndsWithCode: is the last line code?
func cellEndsWithCode(lines []string) bool {
	if len(lines) == 0 {
		return false
	}
	last := lines[len(lines)-1]
	return pyStrip(last) != "" && !strings.HasPrefix(last, "#")
}

// cellHasCode: is there code before the first two blank lines?
func cellHasCode(lines []string) bool {
	for i, line := range lines {
		s := pyStrip(line)
		if strings.HasPrefix(s, "#") {
			continue
		}
		if s == "" {
			if i > 0 && pyStrip(lines[i-1]) == "" {
				return false
			}
			continue
		}
		return true
	}
	return false
}
