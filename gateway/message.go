package gateway

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	segjson "github.com/segmentio/encoding/json"
)

// protocolVersion is the Jupyter messaging version evalhost speaks.
const protocolVersion = "5.3"

// header is a Jupyter message header.
type header struct {
	MsgID    string `json:"msg_id"`
	Username string `json:"username"`
	Session  string `json:"session"`
	Date     string `json:"date"`
	MsgType  string `json:"msg_type"`
	Version  string `json:"version"`
}

// message is one Jupyter message as the gateway's websocket carries it
// (the JSON form with a "channel" field).
type message struct {
	Header       header          `json:"header"`
	ParentHeader parentHeader    `json:"parent_header"`
	Metadata     json.RawMessage `json:"metadata"`
	Content      json.RawMessage `json:"content"`
	Channel      string          `json:"channel"`
	Buffers      []any           `json:"buffers"`

	// stream is a stream message's content, its text decoded in place by
	// decodeMessage, which then leaves Content nil (see unquote.go).
	stream *streamContent
}

// parentHeader keeps only what routing needs; the gateway sends {} for none.
type parentHeader struct {
	MsgID   string `json:"msg_id,omitempty"`
	MsgType string `json:"msg_type,omitempty"`
}

func newMessage(session, channel, msgType string, content any) (*message, error) {
	raw, err := json.Marshal(content)
	if err != nil {
		return nil, fmt.Errorf("encode %s content: %w", msgType, err)
	}
	return &message{
		Header: header{MsgID: newID(), Username: "evalhost", Session: session,
			Date: time.Now().UTC().Format(time.RFC3339Nano), MsgType: msgType, Version: protocolVersion},
		Metadata: json.RawMessage("{}"),
		Content:  raw,
		Channel:  channel,
		Buffers:  []any{},
	}, nil
}

// decodeMessage parses one websocket message; the error quotes its start.
// raw becomes the message's, which may be hundreds of MiB (see readmsg.go):
// its metadata and content are slices of raw, not copies, and a stream's
// text is decoded in raw's bytes. The caller never uses raw again.
func decodeMessage(raw []byte) (*message, error) {
	var m message
	if err := parseJSON(raw, &m, segjson.DontCopyRawMessage); err != nil {
		return nil, fmt.Errorf("gateway sent a message that is not Jupyter JSON (%v): %.120q", err, raw)
	}
	if m.Header.MsgType == "" {
		return nil, fmt.Errorf("gateway sent a message without header.msg_type: %.120q", raw)
	}
	m.Metadata, m.Content = capped(m.Metadata), capped(m.Content)
	if m.Header.MsgType == "stream" {
		if m.stream = decodeStream(m.Content); m.stream != nil {
			m.Content = nil // decoded over
		}
	}
	return &m, nil
}

// streamed is a stream message's content.
func (m *message) streamed() (streamContent, error) {
	if m.stream != nil {
		return *m.stream, nil
	}
	var s streamContent
	return s, unmarshalContent(m, &s, 0)
}

// parseJSON is json.Unmarshal with segmentio's flags, which let values
// alias b instead of copying it: DontCopyRawMessage for json.RawMessage,
// DontCopyString for a string without escapes (one with escapes is decoded
// into a buffer of its own either way). Its errors are encoding/json's,
// whose words are plainer.
func parseJSON(b []byte, v any, flags segjson.ParseFlags) error {
	rest, err := segjson.Parse(b, v, flags)
	if err == nil && len(rest) > 0 {
		err = errors.New("trailing data after the top-level value")
	}
	if err != nil {
		if plain := json.Unmarshal(b, v); plain != nil {
			err = plain
		}
	}
	return err
}

// capped is a slice of a message that an append cannot write past: the
// bytes after it are the rest of the message, other values among them.
func capped(b json.RawMessage) json.RawMessage { return b[:len(b):len(b)] }

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Content shapes of the messages evalhost reads.
type (
	executeRequest struct {
		Code            string            `json:"code"`
		Silent          bool              `json:"silent"`
		StoreHistory    bool              `json:"store_history"`
		UserExpressions map[string]string `json:"user_expressions"`
		AllowStdin      bool              `json:"allow_stdin"`
		StopOnError     bool              `json:"stop_on_error"`
	}
	executeReply struct {
		Status          string                    `json:"status"`
		ExecutionCount  int                       `json:"execution_count"`
		Ename           string                    `json:"ename"`
		Evalue          string                    `json:"evalue"`
		UserExpressions map[string]userExpression `json:"user_expressions"`
	}
	userExpression struct {
		Status string                     `json:"status"`
		Data   map[string]json.RawMessage `json:"data"`
	}
	statusContent struct {
		ExecutionState string `json:"execution_state"`
	}
	streamContent struct {
		Name string `json:"name"`
		Text string `json:"text"`
	}
	displayContent struct {
		Data           map[string]json.RawMessage `json:"data"`
		Metadata       json.RawMessage            `json:"metadata"`
		Transient      transient                  `json:"transient"`
		ExecutionCount int                        `json:"execution_count"`
	}
	transient struct {
		DisplayID string `json:"display_id"`
	}
	clearContent struct {
		Wait bool `json:"wait"`
	}
	errorContent struct {
		Ename     string   `json:"ename"`
		Evalue    string   `json:"evalue"`
		Traceback []string `json:"traceback"`
	}
	inputRequest struct {
		Prompt   string `json:"prompt"`
		Password bool   `json:"password"`
	}
)

// written is the start snippet's count of characters the cell wrote to
// stdout and stderr, when the reply carries it.
func (r *executeReply) written() ([2]int, bool) {
	e, ok := r.UserExpressions[writtenKey]
	if !ok || e.Status != "ok" {
		return [2]int{}, false
	}
	var text string
	if json.Unmarshal(e.Data["text/plain"], &text) != nil {
		return [2]int{}, false
	}
	var n [2]int
	if _, err := fmt.Sscanf(text, "[%d, %d]", &n[0], &n[1]); err != nil {
		return [2]int{}, false
	}
	return n, true
}
