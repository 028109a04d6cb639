package mcp

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evalhost/evalhost/sessions"
	"github.com/evalhost/evalhost/streamsink"
)

// ErrNoRegistry is returned by New for a Config without a Registry.
var ErrNoRegistry = errors.New("mcp: Config.Registry is required")

// DefaultProgress is the interval of progress notifications for a call that
// asked for them.
const DefaultProgress = time.Second

// DefaultHTTPSessionTimeout is how long an MCP session of the HTTP
// transport lives with no request of its client open. A live client that
// listens on its GET stream (the TypeScript and Python SDKs' do) never
// reaches it.
const DefaultHTTPSessionTimeout = 30 * time.Minute

// Config sets up a Server. Zero values take the documented defaults.
type Config struct {
	Registry *sessions.Registry // required; the caller closes it
	// Store is where the registry's sink spills output; artifact:// resources
	// are read from it and images are saved to it. Nil: no resources, and
	// images are shown without a full-size link.
	Store *streamsink.Store
	// RunNotebook executes a notebook's code cells; nil makes notebook_run
	// answer that execution is not available.
	RunNotebook NotebookRunner
	Progress    time.Duration // between progress notifications; default 1 s; <0 off
	Images      ImageBudget
	Version     string // reported as the server's version
	Logger      *slog.Logger
	// WorkDir resolves relative notebook paths; default the process's cwd.
	WorkDir string
	// ToolNames are the bridge tools cells may call (tool.NAME); the eval
	// tool's description lists them.
	ToolNames []string
	// HTTPSessionTimeout ends an MCP session of the HTTP transport that had
	// no request of its client open (a POST, a GET stream) for this long
	// (httpidle.go); default [DefaultHTTPSessionTimeout]; <0 never.
	HTTPSessionTimeout time.Duration
}

// Server is evalhost's MCP server.
type Server struct {
	cfg Config
	sdk *sdk.Server
	// handlers are the tools' handlers as registered with the SDK, for the
	// stdio fast path (fastcall.go).
	handlers  map[string]sdk.ToolHandler
	impl      *sdk.Implementation
	fastCalls atomic.Int64 // calls the fast path took, for tests
	// httpCalls are the HTTP transport's calls in flight, by MCP session
	// (httpsessions.go).
	httpCalls *sessionCalls
	// httpExpired, when set (tests), is called with the id of each HTTP
	// session that ended idle, once it has ended.
	httpExpired func(id string)
}

// New builds the server and registers its tools and resources.
func New(cfg Config) (*Server, error) {
	if cfg.Registry == nil {
		return nil, ErrNoRegistry
	}
	if cfg.Progress == 0 {
		cfg.Progress = DefaultProgress
	}
	cfg.Images = cfg.Images.withDefaults()
	if cfg.WorkDir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		cfg.WorkDir = wd
	}
	if cfg.HTTPSessionTimeout == 0 {
		cfg.HTTPSessionTimeout = DefaultHTTPSessionTimeout
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	s := &Server{cfg: cfg, handlers: map[string]sdk.ToolHandler{}, httpCalls: newSessionCalls(),
		impl: &sdk.Implementation{Name: "evalhost", Title: "evalhost", Version: cfg.Version}}
	s.sdk = sdk.NewServer(s.impl, &sdk.ServerOptions{Instructions: instructions, Logger: cfg.Logger})
	s.sdk.AddReceivingMiddleware(s.httpCalls.middleware, guardProgressToken)
	s.addSessionTools()
	s.addJobTools()
	s.addNotebookTools()
	s.addResources()
	s.addLineGuard()
	return s, nil
}

// instructions tell the client's model what the server is for.
const instructions = `evalhost runs Python and shell cells in persistent sessions: variables, imports ` +
	`and the working directory last between eval calls of the same session. Output is bounded: a cell ` +
	`shows the tail of its output and, when more was produced, an artifact:// link to all of it, readable ` +
	`with resources/read. Plots come back as images. Notebooks (.ipynb) are edited as cell-marked text ` +
	`with the notebook_* tools. A cell that may run long sets onTimeout "detach": at its timeout it goes on ` +
	`as a job you read, wait for or stop with the job, wait and stop tools.`

// SDK returns the underlying SDK server, for transports this package does
// not wrap.
func (s *Server) SDK() *sdk.Server { return s.sdk }

// Run serves one client on t (e.g. &sdk.StdioTransport{}) until it
// disconnects or ctx ends.
func (s *Server) Run(ctx context.Context, t sdk.Transport) error {
	return s.sdk.Run(ctx, t)
}
