package mcp

import (
	"fmt"
	"path"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evalhost/evalhost/internal/plural"
	"github.com/evalhost/evalhost/sessions"
	"github.com/evalhost/evalhost/streamsink"
)

// ImageOutput describes an image a cell displayed.
type ImageOutput struct {
	Artifact string `json:"artifact,omitempty" jsonschema:"artifact:// URI of the full-size image"`
	MIME     string `json:"mime"`
	Bytes    int64  `json:"bytes" jsonschema:"size of the full image"`
	Shown    bool   `json:"shown" jsonschema:"an image content block of the result shows it"`
	Note     string `json:"note,omitempty" jsonschema:"how it was fitted to the budget, or why it is not shown"`
}

// renderEval turns a request's result into content blocks, one text block
// per cell followed by its images, and the structured summary.
func (s *Server) renderEval(res sessions.Result, col *collector) (*sdk.CallToolResult, EvalOutput, error) {
	out := EvalOutput{Status: res.Status, FailedCell: res.FailedCell, Cells: make([]CellOutput, 0, len(res.Cells))}
	// A detached cell is not an error: it runs on as a job.
	result := &sdk.CallToolResult{IsError: res.Status != sessions.StatusOK && res.Status != sessions.StatusDetached}
	shown := 0
	for _, c := range res.Cells {
		co := CellOutput{Cell: c.Index, Title: c.Title, Language: c.Language, Status: c.Status,
			ExecutionCount: c.ExecutionCount, DurationMs: c.DurationMs, StateLost: c.StateLost,
			Retried: c.Retried, Truncated: c.Output.Truncated, Message: c.Message, Job: c.Job, JobOffset: c.JobOffset}
		if c.Output.ArtifactID != "" {
			co.Artifact = streamsink.Scheme + c.Output.ArtifactID
		}
		var text strings.Builder
		text.WriteString(statusLine(c, len(res.Cells), res.FailedCell))
		images := col.cellImages(c.Index)
		if body := withoutPayloadLines(strings.TrimRight(c.Output.String(), "\n"), images); body != "" {
			text.WriteString("\n")
			text.WriteString(body)
		}
		for _, w := range col.cellWarnings(c.Index) {
			text.WriteString("\n[warning: " + w + "]")
		}
		var blocks []sdk.Content
		for _, ref := range images {
			summary, imgBlocks, line := s.renderImage(ref, &shown)
			co.Images = append(co.Images, summary)
			blocks = append(blocks, imgBlocks...)
			text.WriteString("\n" + line)
		}
		result.Content = append(result.Content, &sdk.TextContent{Text: text.String()})
		result.Content = append(result.Content, blocks...)
		out.Cells = append(out.Cells, co)
	}
	return result, out, nil
}

// withoutPayloadLines drops the lines the sink put in a display's text for
// images it stored ("[image/png 486.1 KiB: artifact://4.png]"): each image
// gets a line of its own below, saying more, and two lines with two sizes
// for one image read as two images.
func withoutPayloadLines(body string, images []imageRef) string {
	if body == "" || len(images) == 0 {
		return body
	}
	lines := strings.Split(body, "\n")
	kept := lines[:0]
	for _, l := range lines {
		if !isPayloadLine(l, images) {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "\n")
}

func isPayloadLine(l string, images []imageRef) bool {
	for _, r := range images {
		if r.artifact != "" && strings.HasPrefix(l, "["+r.mime+" ") && strings.HasSuffix(l, ": "+r.artifact+"]") {
			return true
		}
	}
	return false
}

// statusLine is a cell's first line: what happened, in words a model acts on.
func statusLine(c sessions.CellResult, cells, failed int) string {
	name := fmt.Sprintf("cell %d/%d (%s", c.Index+1, cells, c.Language)
	if c.Title != "" {
		name += fmt.Sprintf(", %q", c.Title)
	}
	name += ")"
	var parts []string
	switch c.Status {
	case sessions.StatusSkipped:
		if c.Message != "" { // why, when it was not an earlier cell's failure (a batch's stop, a job)
			return fmt.Sprintf("[%s skipped: %s]", name, c.Message)
		}
		return fmt.Sprintf("[%s skipped: not run because cell %d was not ok]", name, failed+1)
	case sessions.StatusOK:
		parts = append(parts, "ok")
	case sessions.StatusError:
		parts = append(parts, "error")
	case sessions.StatusTimeout:
		parts = append(parts, "timeout: stopped at its time limit; output so far is below")
	case sessions.StatusCancelled:
		parts = append(parts, "cancelled")
	case sessions.StatusKilled:
		parts = append(parts, "killed: the interpreter died or was killed")
	case sessions.StatusDetached:
		parts = append(parts, fmt.Sprintf("detached: still running as job %s; its new output is at offset %d (job tool), "+
			"wait or stop it; its session is busy until it ends", c.Job, c.JobOffset))
	default:
		parts = append(parts, string(c.Status))
	}
	if c.ExecutionCount > 0 {
		parts = append(parts, fmt.Sprintf("execution %d", c.ExecutionCount))
	}
	parts = append(parts, (time.Duration(c.DurationMs * float64(time.Millisecond))).Round(time.Millisecond).String())
	if c.Retried {
		parts = append(parts, "retried: the interpreter died and the cell ran again in a fresh one")
	}
	if c.StateLost {
		parts = append(parts, "state lost: variables from before this cell are gone")
	}
	if c.Output.Truncated && c.Output.ArtifactID != "" {
		parts = append(parts, fmt.Sprintf("output truncated to its last %s; all %s: %s%s",
			plural.Of(c.Output.KeptLines, "line"), plural.Of(c.Output.TotalLines, "line"), streamsink.Scheme, c.Output.ArtifactID))
	}
	line := "[" + name + " " + strings.Join(parts, "; ") + "]"
	if c.Message != "" && !strings.Contains(c.Output.Text, c.Message) {
		line += "\n" + c.Message
	}
	return line
}

// renderImage fits one image into the budget. It returns its summary, the
// blocks to add (image content, resource link) and a line for the text.
func (s *Server) renderImage(ref imageRef, shown *int) (ImageOutput, []sdk.Content, string) {
	summary := ImageOutput{Artifact: ref.artifact, MIME: ref.mime, Bytes: ref.size}
	var blocks []sdk.Content
	where := ref.artifact
	if where == "" {
		where = "not saved"
		if ref.saveErr != nil {
			where = fmt.Sprintf("not saved: %v", ref.saveErr)
		}
	}
	if ref.artifact != "" {
		size := ref.size
		blocks = append(blocks, &sdk.ResourceLink{URI: ref.artifact, Name: path.Base(ref.path),
			Title: "full-size image", MIMEType: ref.mime, Size: &size})
	}
	switch {
	case !shownType(ref.mime):
		summary.Note = "not shown: MCP image content is PNG or JPEG, the link has the " + ref.mime
	case *shown >= s.cfg.Images.MaxCount:
		summary.Note = "not shown: this call already shows " + plural.Of(s.cfg.Images.MaxCount, "image")
	default:
		data, err := ref.bytes()
		var f fitted
		if err == nil {
			f, err = fitImage(data, ref.mime, s.cfg.Images)
		}
		if err != nil {
			summary.Note = "not shown: " + err.Error()
			break
		}
		*shown++
		summary.Shown, summary.Note = true, fmt.Sprintf("%dx%d, %s", f.width, f.height, f.note)
		blocks = append([]sdk.Content{&sdk.ImageContent{Data: f.data, MIMEType: f.mime}}, blocks...)
	}
	return summary, blocks, fmt.Sprintf("[%s %s: %s; full size: %s]", ref.mime, humanSize(ref.size), summary.Note, where)
}
