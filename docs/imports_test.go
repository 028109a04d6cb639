// Package docs holds tests that keep the pages under docs/ true to the code.
package docs

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// importGOOS are the systems whose builds the table must describe: a
// platform file's import (bridge's of internal/proctree is Linux's) counts
// as the package's. The architectures scripts/platforms.sh vets add no
// import of their own here.
var importGOOS = []string{"linux", "darwin", "freebsd", "openbsd", "netbsd"}

// importRow is one row of architecture.md's "Who may import whom" table.
type importRow struct {
	line     int      // in architecture.md, for messages
	text     string   // the row as written
	pkgs     []string // module-relative paths the row is about
	allowed  []string // what they may import of the module
	any      bool     // "any": every import allowed
	noImport bool     // "nothing imports it"
}

func (r importRow) String() string {
	return fmt.Sprintf("architecture.md:%d: %s", r.line, r.text)
}

var (
	parenthetical = regexp.MustCompile(`\([^)]*\)`)
	backticked    = regexp.MustCompile("`([^`]+)`")
)

// parseImportTable parses the table after the "Who may import whom" line:
// the first column's backticked paths (a parenthetical is a remark), the
// second's comma-separated paths, "none", or "any; nothing imports it".
func parseImportTable(r io.Reader) ([]importRow, error) {
	var rows []importRow
	found, inTable := false, false
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case !found:
			found = strings.HasPrefix(line, "Who may import whom")
			continue
		case !strings.HasPrefix(line, "|"):
			if inTable {
				return rows, nil
			}
			continue
		}
		inTable = true
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 2 {
			return nil, fmt.Errorf("architecture.md:%d: an import table row has two columns: %s", n, line)
		}
		first := strings.TrimSpace(cells[0])
		if first == "package" || strings.Trim(first, "-") == "" {
			continue // the header and its rule
		}
		row := importRow{line: n, text: line}
		for _, m := range backticked.FindAllStringSubmatch(parenthetical.ReplaceAllString(first, ""), -1) {
			row.pkgs = append(row.pkgs, m[1])
		}
		if len(row.pkgs) == 0 {
			return nil, fmt.Errorf("%s: names no package in backticks", row)
		}
		for i, part := range strings.Split(parenthetical.ReplaceAllString(cells[1], ""), ";") {
			part = strings.TrimSpace(part)
			switch {
			case i == 0 && part == "none":
			case i == 0 && part == "any":
				row.any = true
			case i > 0 && part == "nothing imports it":
				row.noImport = true
			case i == 0:
				for _, p := range strings.Split(part, ",") {
					row.allowed = append(row.allowed, strings.TrimSpace(p))
				}
			default:
				return nil, fmt.Errorf("%s: %q is not a rule this test knows", row, part)
			}
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf(`architecture.md has no "Who may import whom" table`)
	}
	return rows, nil
}

// listed is what `go list` says of one package on one system.
type listed struct {
	ImportPath string
	GoFiles    []string
	CgoFiles   []string
	Imports    []string
}

// moduleImports returns, for each package of the module with non-test Go
// files on some system, the module's packages it imports on any system,
// module-relative. Test files are left out: tests may use any helper.
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	mod, err := exec.Command("go", "list", "-m").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	prefix := strings.TrimSpace(string(mod)) + "/"
	rel := func(p string) (string, bool) { return strings.CutPrefix(p, prefix) }

	outs := make([][]byte, len(importGOOS))
	errs := make([]error, len(importGOOS))
	var wg sync.WaitGroup
	for i, goos := range importGOOS {
		wg.Go(func() {
			cmd := exec.Command("go", "list", "-e", "-json=ImportPath,GoFiles,CgoFiles,Imports", "../...")
			cmd.Env = append(os.Environ(), "GOOS="+goos)
			cmd.Stderr = os.Stderr
			outs[i], errs[i] = cmd.Output()
		})
	}
	wg.Wait()
	imports := map[string][]string{}
	for i, goos := range importGOOS {
		if errs[i] != nil {
			t.Fatalf("GOOS=%s go list: %v", goos, errs[i])
		}
		dec := json.NewDecoder(strings.NewReader(string(outs[i])))
		for dec.More() {
			var p listed
			if err := dec.Decode(&p); err != nil {
				t.Fatalf("GOOS=%s go list: %v", goos, err)
			}
			name, ok := rel(p.ImportPath)
			if !ok || len(p.GoFiles)+len(p.CgoFiles) == 0 {
				continue
			}
			if _, seen := imports[name]; !seen {
				imports[name] = []string{}
			}
			for _, imp := range p.Imports {
				if r, ok := rel(imp); ok && !slices.Contains(imports[name], r) {
					imports[name] = append(imports[name], r)
				}
			}
		}
	}
	return imports
}

// TestImportTable holds architecture.md's import table to the code: every
// package has one row, imports only what its row names, and its row names
// nothing that no package of the row imports.
func TestImportTable(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	f, err := os.Open("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := parseImportTable(f)
	if err != nil {
		t.Fatal(err)
	}
	imports := moduleImports(t)
	for _, p := range importProblems(rows, imports) {
		t.Error(p)
	}
}

// importProblems says where the table and the imports differ, each naming
// the import and the row.
func importProblems(rows []importRow, imports map[string][]string) []string {
	var problems []string
	errorf := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	rowOf := map[string]importRow{}
	for _, row := range rows {
		for _, p := range row.pkgs {
			if prev, dup := rowOf[p]; dup {
				errorf("%s: `%s` has a row already (%s)", row, p, prev)
			}
			if _, ok := imports[p]; !ok {
				errorf("%s: names `%s`, which is no package of the module with Go files: drop or correct it", row, p)
			}
			rowOf[p] = row
		}
		for _, a := range row.allowed {
			if _, ok := imports[a]; !ok {
				errorf("%s: allows %s, which is no package of the module: correct it", row, a)
			}
		}
	}
	for _, p := range sortedKeys(imports) {
		row, ok := rowOf[p]
		if !ok {
			errorf("`%s` has no row in architecture.md's import table: add one naming what it imports (%s)", p, listOrNone(imports[p]))
			continue
		}
		for _, imp := range imports[p] {
			if other, ok := rowOf[imp]; ok && other.noImport {
				errorf("`%s` imports %s, which its row says nothing imports (%s)", p, imp, other)
			}
			if !row.any && !slices.Contains(row.allowed, imp) {
				errorf("`%s` imports %s, which its row does not allow (%s): add it to the row, or drop the import", p, imp, row)
			}
		}
	}
	for _, row := range rows {
		for _, a := range row.allowed {
			used := false
			for _, p := range row.pkgs {
				used = used || slices.Contains(imports[p], a)
			}
			if !used {
				errorf("%s: allows %s, which no package of the row imports on %s: drop it from the row", row, a, strings.Join(importGOOS, ", "))
			}
		}
	}
	return problems
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	s := slices.Clone(l)
	slices.Sort(s)
	return strings.Join(s, ", ")
}

// TestImportProblems: each way the table can be wrong is named, with the
// import and the row.
func TestImportProblems(t *testing.T) {
	const table = "Who may import whom:\n\n| package | imports of evalhost |\n|---|---|\n"
	imports := map[string][]string{
		"frames": {"internal/jsonscan"}, "internal/jsonscan": {}, "cmd/evalhost": {"frames"},
	}
	fine := "| `internal/jsonscan` | none |\n| `frames` | internal/jsonscan (remark) |\n| `cmd/evalhost` | any; nothing imports it |\n"
	for _, tc := range []struct {
		name, rows string
		imports    map[string][]string
		want       []string // substrings, one problem each
	}{
		{"agrees", fine, imports, nil},
		{"import the row lacks",
			"| `internal/jsonscan` | none |\n| `frames` | none |\n| `cmd/evalhost` | any; nothing imports it |\n", imports,
			[]string{"`frames` imports internal/jsonscan, which its row does not allow (architecture.md:6: | `frames` | none |)"}},
		{"allowance nothing uses",
			"| `internal/jsonscan` | frames |\n| `frames` | internal/jsonscan |\n| `cmd/evalhost` | any; nothing imports it |\n", imports,
			[]string{"architecture.md:5: | `internal/jsonscan` | frames |: allows frames, which no package of the row imports"}},
		{"package without a row", "| `internal/jsonscan` | none |\n| `cmd/evalhost` | any; nothing imports it |\n", imports,
			[]string{"`frames` has no row in architecture.md's import table: add one naming what it imports (internal/jsonscan)"}},
		{"row of no package", fine + "| `gone` | none |\n", imports,
			[]string{"architecture.md:8: | `gone` | none |: names `gone`, which is no package"}},
		{"unknown allowance", "| `internal/jsonscan` | none |\n| `frames` | internal/jsonscan, fram |\n| `cmd/evalhost` | any; nothing imports it |\n", imports,
			[]string{"allows fram, which is no package of the module", "allows fram, which no package of the row imports"}},
		{"imports the unimportable", fine,
			map[string][]string{"frames": {"internal/jsonscan", "cmd/evalhost"}, "internal/jsonscan": {}, "cmd/evalhost": {}},
			[]string{"`frames` imports cmd/evalhost, which its row says nothing imports", "`frames` imports cmd/evalhost, which its row does not allow"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := parseImportTable(strings.NewReader(table + tc.rows))
			if err != nil {
				t.Fatal(err)
			}
			got := importProblems(rows, tc.imports)
			if len(got) != len(tc.want) {
				t.Fatalf("problems:\n%s\nwant %d", strings.Join(got, "\n"), len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d is %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
}
