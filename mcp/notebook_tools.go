package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evalhost/evalhost/internal/plural"
	"github.com/evalhost/evalhost/internal/trustdir"
	"github.com/evalhost/evalhost/notebook"
)

// maxViewBytes bounds notebook_view's text when no lines are asked for,
// maxViewLinesBytes when they are: the result is one message, and "1-" of a
// notebook of 200 MB would pass the 16 MiB at which clients drop the
// connection.
const (
	maxViewBytes      = 64 << 10
	maxViewLinesBytes = 1 << 20
)

// NotebookInput is the arguments of the notebook tools; each uses the
// fields its schema names.
type NotebookInput struct {
	Path   string  `json:"path"`
	Cell   *int    `json:"cell,omitempty"`
	Source *string `json:"source,omitempty"`
	Type   string  `json:"type,omitempty"`
	Text   *string `json:"text,omitempty"`
	Lines  string  `json:"lines,omitempty"`
}

// NotebookOutput is the notebook tools' structured details, as the
// reference notebook tool reports them.
type NotebookOutput struct {
	Action     string `json:"action"`
	Path       string `json:"path"`
	CellIndex  *int   `json:"cellIndex,omitempty"`
	CellType   string `json:"cellType,omitempty"`
	CellID     string `json:"cellId,omitempty"`
	TotalCells int    `json:"totalCells"`
	CellSource string `json:"cellSource,omitempty" jsonschema:"the cell's source after the edit (the removed source for delete)"`
	Created    bool   `json:"created,omitempty"`
	Changed    bool   `json:"changed,omitempty"`
}

func (s *Server) addNotebookTools() {
	readOnly := &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)}
	edits := &sdk.ToolAnnotations{DestructiveHint: ptr(true), OpenWorldHint: ptr(false)}
	s.addNotebookTool("notebook_view", "View a notebook as text",
		"Show a .ipynb notebook as cell-marked text: each cell starts with a line \"# %% [code|markdown|raw] cell:N\" "+
			"(N is the 0-based index the other notebook tools take); outputs are not shown. Edit the text and "+
			"give it to notebook_apply. Without lines, text over 64 KiB is cut; ask for lines then.",
		nbCellSchema([]string{"path"}, map[string]*jsonschema.Schema{
			"lines": bounded(maxLinesChars, str("Only these 1-based lines of the text, e.g. \"10-20,40-45\" or \"30-\"; each is prefixed with its number.")),
		}), readOnly, s.nbView)
	source := str("The cell's new source.")
	s.addNotebookTool("notebook_edit", "Edit a notebook cell",
		"Replace the source of cell `cell`, keeping its type, outputs, metadata and id. Fails if the file is "+
			"missing or not a valid notebook, or the index is out of range (the error gives the valid range).",
		nbCellSchema([]string{"path", "cell", "source"}, map[string]*jsonschema.Schema{"source": source}), edits, s.nbEdit)
	s.addNotebookTool("notebook_insert", "Insert a notebook cell",
		"Insert a new cell before index `cell` (0..number of cells; the count appends). A missing file "+
			"starts as an empty notebook. Code cells start with no outputs.",
		nbCellSchema([]string{"path", "cell", "source"}, map[string]*jsonschema.Schema{"source": source,
			"type": str("Cell type (default code).", "code", "markdown", "raw")}), edits, s.nbInsert)
	s.addNotebookTool("notebook_delete", "Delete a notebook cell",
		"Delete cell `cell`; the result shows the removed source.",
		nbCellSchema([]string{"path", "cell"}, nil), edits, s.nbDelete)
	s.addNotebookTool("notebook_apply", "Replace a notebook's cells with edited text",
		"Replace the notebook's cells with cell-marked text (as notebook_view shows it). A \"cell:N\" marker "+
			"keeps cell N's outputs, metadata and id; a marker without it makes a new cell. A missing file is "+
			"created. The file is written atomically: on any error it is left as it was.",
		object([]string{"path", "text"}, map[string]*jsonschema.Schema{"path": bounded(maxIDChars, str(nbPathDesc)),
			"text": str("The whole notebook as cell-marked text.")}), edits, s.nbApply)
	s.addNotebookRunTool()
}

func (s *Server) addNotebookTool(name, title, desc string, schema *jsonschema.Schema, ann *sdk.ToolAnnotations,
	h handlerFor[NotebookInput, NotebookOutput]) {
	ann.Title = title
	addTool(s, &sdk.Tool{Name: name, Title: title, Description: desc, InputSchema: schema, Annotations: ann}, h)
}

// nbPath resolves a notebook path against the server's working directory.
func (s *Server) nbPath(p string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", errors.New(`"path" must name a .ipynb file`)
	}
	if strings.ContainsRune(p, 0) {
		return "", errors.New(`"path" must not contain a NUL character`) // no file name can
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.cfg.WorkDir, p)
	}
	return filepath.Clean(p), nil
}

func (s *Server) nbView(_ context.Context, _ *sdk.CallToolRequest, in NotebookInput) (*sdk.CallToolResult, NotebookOutput, error) {
	path, err := s.nbPath(in.Path)
	if err != nil {
		return nil, NotebookOutput{}, err
	}
	nb, err := notebook.Load(path)
	if err != nil {
		return nil, NotebookOutput{}, s.nbFileError(err, in.Path, false)
	}
	out := NotebookOutput{Action: "view", Path: path, TotalCells: nb.Len()}
	text := nb.Text()
	if in.Lines == "" {
		if len(text) > maxViewBytes {
			cut := maxViewBytes
			for cut > 0 && !utf8.RuneStart(text[cut]) {
				cut--
			}
			total := len(notebook.SplitText(text))
			text = text[:cut] + fmt.Sprintf("\n[text cut at 64 KiB of %s; %s in all: ask for lines, e.g. \"%d-\"]",
				humanSize(int64(len(text))), plural.Of(total, "line"), strings.Count(text[:cut], "\n")+1)
		}
		return textResult(text), out, nil
	}
	ranges, err := notebook.ParseRanges(in.Lines)
	if err != nil {
		return nil, out, fmt.Errorf(`"lines": %w`, err)
	}
	lines, err := notebook.SelectLines(text, ranges)
	if err != nil {
		return nil, out, fmt.Errorf(`"lines": %w`, err)
	}
	var b strings.Builder
	for _, l := range lines {
		if b.Len()+len(l.Text) > maxViewLinesBytes {
			fmt.Fprintf(&b, "[cut at 1 MiB: ask for lines from %d on, e.g. \"%d-\"]\n", l.N, l.N)
			break
		}
		fmt.Fprintf(&b, "%d\t%s\n", l.N, l.Text)
	}
	return textResult(b.String()), out, nil
}

// clipSource bounds a cell's source in a result, which is one message: a
// 100 MB cell deleted came back whole, twice (text and structured), past
// what clients read.
func clipSource(src string) string {
	if len(src) <= maxViewBytes {
		return src
	}
	cut := maxViewBytes
	for cut > 0 && !utf8.RuneStart(src[cut]) {
		cut--
	}
	return src[:cut] + fmt.Sprintf("\n[source cut at 64 KiB of %s]", humanSize(int64(len(src))))
}

// textResult is text content that is never empty, so a client shows it.
func textResult(s string) *sdk.CallToolResult {
	if s == "" {
		s = "(empty)"
	}
	return text(s)
}

func needCell(in NotebookInput) (int, error) {
	if in.Cell == nil {
		return 0, errors.New(`"cell" (a 0-based cell index) is required`)
	}
	return *in.Cell, nil
}

func (s *Server) nbEdit(ctx context.Context, _ *sdk.CallToolRequest, in NotebookInput) (*sdk.CallToolResult, NotebookOutput, error) {
	return s.nbAction(ctx, "edit", in, func(nb *notebook.Notebook, i int) (notebook.Cell, error) {
		if in.Source == nil {
			return notebook.Cell{}, errors.New(`"source" (the cell's new source) is required`)
		}
		if err := nb.Edit(i, *in.Source); err != nil {
			return notebook.Cell{}, err
		}
		return nb.Cell(i), nil
	})
}

func (s *Server) nbInsert(ctx context.Context, _ *sdk.CallToolRequest, in NotebookInput) (*sdk.CallToolResult, NotebookOutput, error) {
	return s.nbAction(ctx, "insert", in, func(nb *notebook.Notebook, i int) (notebook.Cell, error) {
		if in.Source == nil {
			return notebook.Cell{}, errors.New(`"source" (the new cell's source) is required`)
		}
		kind := in.Type
		if kind == "" {
			kind = "code"
		}
		t, err := notebook.ParseCellType(kind)
		if err != nil {
			return notebook.Cell{}, fmt.Errorf(`"type": %w`, err)
		}
		if err := nb.Insert(i, t, *in.Source); err != nil {
			return notebook.Cell{}, err
		}
		return nb.Cell(i), nil
	})
}

func (s *Server) nbDelete(ctx context.Context, _ *sdk.CallToolRequest, in NotebookInput) (*sdk.CallToolResult, NotebookOutput, error) {
	return s.nbAction(ctx, "delete", in, func(nb *notebook.Notebook, i int) (notebook.Cell, error) {
		return nb.Delete(i)
	})
}

// lockWait bounds the wait for another edit of the same notebook: a lock
// held longer is a stuck process, and an error says so.
const lockWait = time.Minute

// lockNotebook takes the notebook's lock (notebook.Lock) from load to save,
// so edits of one notebook, parallel tool calls or other evalhost
// processes, happen one after another instead of failing as conflicts.
func lockNotebook(ctx context.Context, path string) (*notebook.FileLock, error) {
	ctx, cancel := context.WithTimeout(ctx, lockWait)
	defer cancel()
	return notebook.Lock(ctx, path)
}

// nbAction is edit, insert and delete: lock, load, change, save atomically,
// and report as the reference notebook tool does.
func (s *Server) nbAction(ctx context.Context, action string, in NotebookInput, change func(*notebook.Notebook, int) (notebook.Cell, error)) (*sdk.CallToolResult, NotebookOutput, error) {
	path, err := s.nbPath(in.Path)
	if err != nil {
		return nil, NotebookOutput{}, err
	}
	i, err := needCell(in)
	if err != nil {
		return nil, NotebookOutput{}, err
	}
	lock, err := lockNotebook(ctx, path)
	if err != nil {
		return nil, NotebookOutput{}, err
	}
	defer lock.Unlock()
	load := notebook.Load
	if action == "insert" {
		load = notebook.LoadOrNew
	}
	nb, err := load(path)
	if err != nil {
		return nil, NotebookOutput{}, s.nbFileError(err, in.Path, action == "insert")
	}
	cell, err := change(nb, i)
	if err != nil {
		return nil, NotebookOutput{}, fmt.Errorf("%s: %w", path, err)
	}
	if err := nb.Save(path); err != nil {
		return nil, NotebookOutput{}, err
	}
	out := NotebookOutput{Action: action, Path: path, CellIndex: &i, CellType: string(cell.Type), CellID: cell.ID,
		TotalCells: nb.Len(), CellSource: clipSource(cell.Source)}
	past := map[string]string{"edit": "edited", "insert": "inserted", "delete": "deleted"}[action]
	msg := fmt.Sprintf("%s %s cell %d in %s (%s now)", past, cell.Type, i, path, plural.Of(nb.Len(), "cell"))
	if action == "delete" {
		msg += "; its source was:\n" + out.CellSource
	}
	return text(msg), out, nil
}

// loadWithBytes is notebook.LoadOrNew that also returns the file's bytes
// (nil when it is missing), read within notebook.MaxFileBytes: a path such
// as /dev/zero is an error, not a read that never ends.
func loadWithBytes(path string) ([]byte, *notebook.Notebook, error) {
	data, err := notebook.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		nb, err := notebook.LoadOrNew(path)
		return nil, nb, err
	}
	if err != nil {
		return nil, nil, err
	}
	nb, err := notebook.ParseFile(path, data)
	return data, nb, err
}

// nbFileError is err, a notebook tool's load of the file the agent named
// as given, with what to do when the file could not be opened or read
// (a *notebook.FileError, which says what was wrong with it, as the CLI
// says it); creates: the tool makes a missing notebook (insert, apply),
// so it does not point at itself. Other errors (an invalid notebook) say
// what to do already.
func (s *Server) nbFileError(err error, given string, creates bool) error {
	var fe *notebook.FileError
	if !errors.As(err, &fe) {
		return err
	}
	var hint string
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		hint = "check the path"
		if !filepath.IsAbs(given) {
			hint += " (a relative one is from the server's working directory, " + trustdir.Shown(s.cfg.WorkDir) + ")"
		}
		if !creates {
			hint += ", or create the notebook with notebook_insert or notebook_apply"
		}
	case errors.Is(err, fs.ErrPermission):
		hint = "the server's user may not read it: change its permissions, or give another path"
	default:
		return err
	}
	return fmt.Errorf("%w; %s", err, hint)
}

func (s *Server) nbApply(ctx context.Context, _ *sdk.CallToolRequest, in NotebookInput) (*sdk.CallToolResult, NotebookOutput, error) {
	path, err := s.nbPath(in.Path)
	if err != nil {
		return nil, NotebookOutput{}, err
	}
	if in.Text == nil {
		return nil, NotebookOutput{}, errors.New(`"text" (the notebook as cell-marked text) is required`)
	}
	lock, err := lockNotebook(ctx, path)
	if err != nil {
		return nil, NotebookOutput{}, err
	}
	defer lock.Unlock()
	orig, nb, err := loadWithBytes(path)
	if err != nil {
		return nil, NotebookOutput{}, s.nbFileError(err, in.Path, true)
	}
	created := orig == nil
	next, err := nb.ApplyText(*in.Text)
	if err != nil {
		return nil, NotebookOutput{}, fmt.Errorf("%s: %w", path, err)
	}
	changed := created || !bytes.Equal(next.Bytes(), orig)
	if changed {
		if err := next.Save(path); err != nil {
			return nil, NotebookOutput{}, err
		}
	}
	out := NotebookOutput{Action: "apply", Path: path, TotalCells: next.Len(), Created: created, Changed: changed}
	verb := "updated"
	switch {
	case created:
		verb = "created"
	case !changed:
		verb = "unchanged:"
	}
	return text(fmt.Sprintf("%s %s (%s)", verb, path, plural.Of(next.Len(), "cell"))), out, nil
}
