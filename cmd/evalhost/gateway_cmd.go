package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/evalhost/evalhost/config"
	"github.com/evalhost/evalhost/gateway"
)

func init() { extraCommands["gateway"] = gatewayMain }

const gatewayUsage = `Usage: evalhost gateway status|stop [--json]

The shared local Jupyter kernel gateway (the gateway backend starts it under
<home>/python-gateway and every evalhost process on this machine shares it).
  status   whether it is recorded, running and healthy
  stop     terminate it and clear its files (its kernels end with it)
`

func gatewayMain(args []string, _ io.Reader, stdout, stderr io.Writer, _ *slog.Logger) int {
	if len(args) == 1 && (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
		fmt.Fprint(stdout, gatewayUsage)
		return exitOK
	}
	asJSON := len(args) == 2 && args[1] == "--json"
	if len(args) == 0 || (len(args) > 1 && !asJSON) {
		fmt.Fprint(stderr, gatewayUsage)
		return exitUsage
	}
	home, err := config.Home()
	if err != nil {
		fmt.Fprintf(stderr, "evalhost gateway: %v\n", err)
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	switch args[0] {
	case "status":
		st, err := gateway.Status(ctx, home)
		if err != nil {
			fmt.Fprintf(stderr, "evalhost gateway status: %v\n", err)
			return exitFailed
		}
		if asJSON {
			reason := ""
			if st.Err != nil {
				reason = st.Err.Error()
			}
			b, _ := json.Marshal(map[string]any{"recorded": st.Recorded, "running": st.Running, "healthy": st.Healthy,
				"url": st.Info.URL, "pid": st.Info.PID, "startedAt": st.Info.StartedAt, "python": st.Info.PythonPath, "error": reason})
			fmt.Fprintln(stdout, string(b))
		} else {
			printGatewayStatus(stdout, st)
		}
		if !st.Healthy {
			return exitFailed
		}
		return exitOK
	case "stop":
		if err := gateway.Stop(ctx, home); err != nil {
			fmt.Fprintf(stderr, "evalhost gateway stop: %v\n", err)
			return exitFailed
		}
		fmt.Fprintln(stdout, "stopped")
		return exitOK
	default:
		fmt.Fprint(stderr, gatewayUsage)
		return exitUsage
	}
}

func printGatewayStatus(w io.Writer, st gateway.GatewayStatus) {
	if !st.Recorded {
		fmt.Fprintln(w, "no shared gateway is recorded (the gateway backend starts one on first use)")
		return
	}
	state := "healthy"
	switch {
	case !st.Running:
		state = "not running"
	case !st.Healthy:
		state = "running but not healthy"
	}
	fmt.Fprintf(w, "%s: %s pid %d, started %s, python %s\n", state, st.Info.URL, st.Info.PID,
		st.Info.StartedAt.Format(time.RFC3339), st.Info.PythonPath)
	if st.Err != nil {
		fmt.Fprintf(w, "  %v\n", st.Err)
	}
}
