package mcp

import (
	"context"
	"errors"
	"io/fs"
	"mime"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evalhost/evalhost/streamsink"
)

// artifactTemplate is the one resource template: every artifact the sink or
// an image wrote is readable, none is listed one by one.
const artifactTemplate = streamsink.Scheme + "{id}"

func (s *Server) addResources() {
	if s.cfg.Store == nil {
		return
	}
	s.sdk.AddResourceTemplate(&sdk.ResourceTemplate{
		Name:        "artifact",
		Title:       "Cell output artifact",
		URITemplate: artifactTemplate,
		Description: "The full output of a cell whose shown output was truncated (\"N.eval.log\"), or a " +
			"full-size image or display payload a cell produced (\"N.png\"). Eval results name them; " +
			"artifacts are kept for a few days.",
	}, s.readArtifact)
}

func (s *Server) readArtifact(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	path, err := s.cfg.Store.Path(uri)
	if err != nil {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, err
	}
	rc := &sdk.ResourceContents{URI: uri, MIMEType: artifactMIME(path)}
	if strings.HasPrefix(rc.MIMEType, "text/") || rc.MIMEType == "application/json" {
		if utf8.Valid(data) {
			rc.Text = string(data)
		} else {
			// Raw output may hold bytes that are not UTF-8; JSON text cannot.
			rc.Text = strings.ToValidUTF8(string(data), "\uFFFD")
		}
	} else {
		rc.Blob = data
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{rc}}, nil
}

func artifactMIME(path string) string {
	if strings.HasSuffix(path, ".log") {
		return "text/plain; charset=utf-8"
	}
	if t := mime.TypeByExtension(filepath.Ext(path)); t != "" {
		return t
	}
	return "application/octet-stream"
}
