package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// The tool bridge over the kernel's own channel. A gateway's kernel may run
// on another machine, which cannot reach the bridge on evalhost's loopback.
// So the kernel gets stand-ins for the bridge's URL and token, and the
// prelude's tool helper sends each call as a Jupyter comm message (target
// toolTarget) on iopub, which the gateway forwards on the websocket
// evalhost already holds. evalhost posts the call to the bridge with the
// real token, as the running cell (its run id, the kernel's session,
// whatever the kernel claimed), and answers on the control channel with a
// comm message: the shell channel is busy with the cell that waits, while
// ipykernel reads control in a thread of its own. A call that arrives when
// no cell of this kernel runs is refused. The bridge's own rule (only a run
// active in its session) then holds as for local interpreters.

// toolTarget is the comm target of the kernel-side tool helper.
const toolTarget = "evalhost.tool"

// Bridge variables, and the stand-ins the kernel sees instead of the URL
// and token (neither leaves evalhost's machine).
const (
	envBridgeURL       = "PI_TOOL_BRIDGE_URL"
	envBridgeToken     = "PI_TOOL_BRIDGE_TOKEN"
	envBridgeSession   = "PI_TOOL_BRIDGE_SESSION"
	kernelChannelURL   = "jupyter-comm:" + toolTarget
	kernelChannelToken = "held-by-evalhost"
)

// maxToolReply bounds a bridge reply evalhost relays to the kernel.
const maxToolReply = 64 << 20

// toolBridge relays one kernel's tool calls to the bridge.
type toolBridge struct {
	url, token, session string
	http                *http.Client

	mu     sync.Mutex
	comm   string // the kernel-side comm's id, from its comm_open
	run    string // the running cell's run id; "" between cells
	ctx    context.Context
	cancel context.CancelFunc
	calls  sync.WaitGroup // calls in flight
}

// takeBridge moves the bridge's URL and token out of a kernel's start
// environment, leaving stand-ins; nil when env names no bridge.
func takeBridge(env map[string]*string) (map[string]*string, *toolBridge) {
	url, token := env[envBridgeURL], env[envBridgeToken]
	if url == nil || token == nil || *url == "" || *token == "" {
		return env, nil
	}
	tb := &toolBridge{url: strings.TrimRight(*url, "/"), token: *token,
		http: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}}
	if s := env[envBridgeSession]; s != nil {
		tb.session = *s
	}
	out := make(map[string]*string, len(env))
	for k, v := range env {
		out[k] = v
	}
	u, t := kernelChannelURL, kernelChannelToken
	out[envBridgeURL], out[envBridgeToken] = &u, &t
	return out, tb
}

// begin accepts calls as the cell with run id run until end.
func (tb *toolBridge) begin(run string) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.run = run
	tb.ctx, tb.cancel = context.WithCancel(context.Background())
}

// end abandons the cell's calls in flight and waits for them.
func (tb *toolBridge) end() {
	tb.mu.Lock()
	tb.run = ""
	if tb.cancel != nil {
		tb.cancel()
	}
	tb.mu.Unlock()
	tb.calls.Wait()
}

// close abandons calls in flight and drops the bridge's kept-alive
// connections; the kernel is ending.
func (tb *toolBridge) close() {
	tb.end()
	tb.http.CloseIdleConnections()
}

// toolCallMsg is the data of a call's comm message, and of its answer.
type toolCallMsg struct {
	Call   string `json:"call"`
	Body   string `json:"body,omitempty"`   // the bridge request the helper built
	Status int    `json:"status,omitempty"` // the answer: the bridge's HTTP status…
	Reply  string `json:"reply,omitempty"`  // …and body
}

type commContent struct {
	CommID     string          `json:"comm_id"`
	TargetName string          `json:"target_name,omitempty"`
	Data       json.RawMessage `json:"data"`
}

// noteToolComm records the kernel-side comm when m opens it.
func (k *Kernel) noteToolComm(m *message) {
	if k.tools == nil || m.Header.MsgType != "comm_open" {
		return
	}
	var c commContent
	if json.Unmarshal(m.Content, &c) == nil && c.TargetName == toolTarget {
		k.tools.mu.Lock()
		k.tools.comm = c.CommID
		k.tools.mu.Unlock()
	}
}

// toolCall reports whether m is a tool call, and if so relays it as the
// running cell's (or refuses it when none runs) without blocking the
// caller: the cell's output and its cancel go on meanwhile.
func (k *Kernel) toolCall(m *message) bool {
	if k.tools == nil || m == nil || m.Channel != "iopub" || m.Header.MsgType != "comm_msg" {
		return false
	}
	var c commContent
	var call toolCallMsg
	if json.Unmarshal(m.Content, &c) != nil || json.Unmarshal(c.Data, &call) != nil || call.Call == "" {
		return false
	}
	tb := k.tools
	tb.mu.Lock()
	ours, ctx, run := c.CommID == tb.comm, tb.ctx, tb.run
	if ours && run != "" {
		tb.calls.Add(1)
	}
	tb.mu.Unlock()
	switch {
	case !ours:
		return false
	case run == "":
		k.answerTool(c.CommID, call.Call, http.StatusConflict, refusal(
			"no cell of this kernel is running: tool calls are accepted only from the cell running now"))
		return true
	}
	go func() {
		defer tb.calls.Done()
		status, reply := tb.forward(ctx, run, call.Body)
		k.answerTool(c.CommID, call.Call, status, reply)
	}()
	return true
}

// forward posts the call to the bridge as run in the kernel's session.
func (tb *toolBridge) forward(ctx context.Context, run, body string) (int, string) {
	var req map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		return http.StatusBadRequest, refusal("tool call is not a JSON object: " + err.Error())
	}
	req["run"], _ = json.Marshal(run)
	req["session"], _ = json.Marshal(tb.session)
	raw, _ := json.Marshal(req)
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, tb.url+"/v1/tool", bytes.NewReader(raw))
	if err != nil {
		return http.StatusBadGateway, refusal("tool bridge: " + err.Error())
	}
	hreq.Header.Set("Authorization", "Bearer "+tb.token)
	hreq.Header.Set("Content-Type", "application/json")
	resp, err := tb.http.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return http.StatusConflict, refusal("the cell ended before the tool returned")
		}
		return http.StatusBadGateway, refusal("evalhost could not reach its tool bridge: " + err.Error())
	}
	defer resp.Body.Close()
	reply, err := io.ReadAll(io.LimitReader(resp.Body, maxToolReply+1))
	switch {
	case err != nil:
		return http.StatusBadGateway, refusal("reading the tool bridge's answer: " + err.Error())
	case len(reply) > maxToolReply:
		return http.StatusBadGateway, refusal(fmt.Sprintf("the tool's answer is over %d MiB, more than evalhost relays to a kernel", maxToolReply>>20))
	}
	return resp.StatusCode, string(reply)
}

// answerTool sends a call's answer on the control channel.
func (k *Kernel) answerTool(comm, call string, status int, reply string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	data, _ := json.Marshal(toolCallMsg{Call: call, Status: status, Reply: reply})
	_, _ = k.send(ctx, "control", "comm_msg", commContent{CommID: comm, Data: data})
}

// refusal is a bridge-shaped error reply.
func refusal(msg string) string {
	raw, _ := json.Marshal(map[string]any{"ok": false, "error": msg})
	return string(raw)
}

// toolCommCode replaces the prelude tool helper's HTTP transport with the
// kernel's comm; see the top of this file.
func toolCommCode() string {
	return `def __evh_tool_comm(target):
    import threading, itertools
    ip = get_ipython()
    kernel = getattr(ip, "kernel", None)
    helper = ip.user_ns.get("tool")
    if kernel is None or helper is None or not hasattr(helper, "_post") or not hasattr(kernel, "control_handlers"):
        return  # an old ipykernel: tool calls then fail saying the bridge is unavailable
    try:
        from comm import create_comm
    except ImportError:
        try:
            from ipykernel.comm import Comm as create_comm
        except ImportError:
            return
    pending, lock, ids = {}, threading.Lock(), itertools.count(1)
    channel = create_comm(target_name=target, data={})
    def on_answer(stream, ident, msg):
        content = msg.get("content") or {}
        data = content.get("data") or {}
        if content.get("comm_id") != channel.comm_id:
            return
        with lock:
            slot = pending.get(data.get("call"))
        if slot is not None:
            slot.append(data)
            slot[0].set()
    # Answers come on the control channel: the shell channel waits for the cell.
    kernel.control_handlers["comm_msg"] = on_answer
    def post(url, token, body):
        call = str(next(ids))
        slot = [threading.Event()]
        with lock:
            pending[call] = slot
        try:
            channel.send({"call": call, "body": body.decode("utf-8")})
            slot[0].wait()
        finally:
            with lock:
                pending.pop(call, None)
        data = slot[1]
        return int(data.get("status") or 502), (data.get("reply") or "").encode("utf-8")
    helper._post = post
__evh_tool_comm(` + pyString(toolTarget) + `)
del __evh_tool_comm
`
}
