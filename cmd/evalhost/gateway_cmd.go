package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/evalhost/evalhost/config"
	"github.com/evalhost/evalhost/gateway/shared"
)

func init() { extraCommands["gateway"] = gatewayMain }

const gatewayUsage = `Usage: evalhost gateway status|stop [--json]

The shared local Jupyter kernel gateways (the gateway backend starts one per
interpreter under <home>/python-gateway, and every evalhost process on this
machine shares them).
  status   whether each is running and healthy (--json: one object per line)
  stop     terminate them and clear their files (their kernels end with them)
`

func gatewayMain(args []string, _ io.Reader, stdout, stderr io.Writer, _ *slog.Logger) int {
	if len(args) == 1 && (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
		fmt.Fprint(stdout, gatewayUsage)
		return exitOK
	}
	asJSON := len(args) == 2 && args[1] == "--json"
	switch {
	case len(args) == 0:
		fmt.Fprint(stderr, gatewayUsage)
		return exitUsage
	case args[0] != "status" && args[0] != "stop":
		// Say what was wrong, as daemon and nb do, before the usage.
		fmt.Fprintf(stderr, "evalhost gateway: unknown command %q\n\n%s", args[0], gatewayUsage)
		return exitUsage
	case len(args) > 1 && !asJSON:
		fmt.Fprintf(stderr, "evalhost gateway %s: unexpected argument %q\n\n%s", args[0], args[1], gatewayUsage)
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
		sts, err := shared.Status(ctx, home)
		if err != nil {
			fmt.Fprintf(stderr, "evalhost gateway status: %v\n", err)
			return exitFailed
		}
		if len(sts) == 0 && asJSON {
			fmt.Fprintln(stdout, `{"recorded":false}`)
		} else if len(sts) == 0 {
			fmt.Fprintln(stdout, "no shared gateway is recorded (the gateway backend starts one on first use)")
		}
		code := exitOK
		for _, st := range sts {
			if asJSON {
				printGatewayJSON(stdout, st)
			} else {
				printGatewayStatus(stdout, st)
			}
			if !st.Healthy {
				code = exitFailed
			}
		}
		if len(sts) == 0 {
			code = exitFailed
		}
		return code
	case "stop":
		stopped, err := shared.Stop(ctx, home)
		if err != nil {
			fmt.Fprintf(stderr, "evalhost gateway stop: %v\n", err)
			return exitFailed
		}
		// None running is no failure, as daemon stop says it: the state
		// asked for holds.
		fmt.Fprintln(stdout, stoppedGateways(stopped))
		return exitOK
	default:
		fmt.Fprint(stderr, gatewayUsage)
		return exitUsage
	}
}

// stoppedGateways says what gateway stop ended, by pid.
func stoppedGateways(pids []int) string {
	switch len(pids) {
	case 0:
		return "no shared gateway is running"
	case 1:
		return fmt.Sprintf("stopped the shared gateway (pid %d)", pids[0])
	}
	list := make([]string, len(pids))
	for i, pid := range pids {
		list[i] = strconv.Itoa(pid)
	}
	return fmt.Sprintf("stopped %d shared gateways (pids %s)", len(pids), strings.Join(list, ", "))
}

func printGatewayJSON(w io.Writer, st shared.GatewayStatus) {
	reason := ""
	if st.Err != nil {
		reason = st.Err.Error()
	}
	b, _ := json.Marshal(map[string]any{"recorded": true, "running": st.Running, "healthy": st.Healthy,
		"url": st.Info.URL, "pid": st.Info.PID, "startedAt": st.Info.StartedAt, "python": st.Info.PythonPath, "error": reason})
	fmt.Fprintln(w, string(b))
}

func printGatewayStatus(w io.Writer, st shared.GatewayStatus) {
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
