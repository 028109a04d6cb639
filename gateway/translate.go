package gateway

import (
	"fmt"

	segjson "github.com/segmentio/encoding/json"

	"github.com/evalhost/evalhost/frames"
)

// translate maps an output message of cell id to its frame. ok is false for
// messages that are not output (status, execute_reply, input_request, …).
func translate(id string, m *message) (f frames.Frame, ok bool, err error) {
	f.ID = id
	switch m.Header.MsgType {
	case "stream":
		var s streamContent
		if s, err = m.streamed(); err == nil {
			f.Type, f.Data = frames.TypeStdout, s.Text
			if s.Name == "stderr" {
				f.Type = frames.TypeStderr
			}
		}
	case "display_data", "update_display_data", "execute_result":
		err = translateDisplay(&f, m)
	case "clear_output":
		var cl clearContent
		if err = unmarshalContent(m, &cl, 0); err == nil {
			f.Type, f.Wait = frames.TypeClearOutput, cl.Wait
		}
	case "error":
		var e errorContent
		if err = unmarshalContent(m, &e, 0); err == nil {
			f.Type, f.Ename, f.Evalue, f.Traceback = frames.TypeError, e.Ename, e.Evalue, e.Traceback
			// The kernel's message names the type alone: a class of the
			// name is taken for the builtin (Frame.KeyboardInterrupt).
			f.KeyboardInterrupt = e.Ename == "KeyboardInterrupt"
		}
	default:
		return f, false, nil
	}
	return f, err == nil, err
}

func translateDisplay(f *frames.Frame, m *message) error {
	var d displayContent
	// The data's values are slices of the message: a display can be
	// hundreds of MiB.
	if err := unmarshalContent(m, &d, segjson.DontCopyRawMessage); err != nil {
		return err
	}
	for mime, v := range d.Data {
		d.Data[mime] = capped(v)
	}
	d.Metadata = capped(d.Metadata)
	f.Bundle = frames.Bundle(d.Data)
	if f.Bundle == nil {
		f.Bundle = frames.Bundle{}
	}
	if _, has := f.Bundle["text/plain"]; !has {
		f.Bundle.SetText("text/plain", "")
	}
	if len(d.Metadata) > 0 && string(d.Metadata) != "{}" && string(d.Metadata) != "null" {
		f.Metadata = d.Metadata
	}
	f.DisplayID = d.Transient.DisplayID
	switch m.Header.MsgType {
	case "display_data":
		f.Type = frames.TypeDisplay
	case "update_display_data":
		if f.DisplayID == "" {
			return fmt.Errorf("gateway update_display_data message has no transient.display_id: %.120q", m.Content)
		}
		f.Type = frames.TypeUpdateDisplay
	default:
		f.Type, f.ExecutionCount, f.DisplayID = frames.TypeResult, d.ExecutionCount, ""
	}
	return nil
}

func unmarshalContent(m *message, v any, flags segjson.ParseFlags) error {
	if err := parseJSON(m.Content, v, flags); err != nil {
		return fmt.Errorf("gateway %s message has malformed content (%v): %.120q", m.Header.MsgType, err, m.Content)
	}
	return nil
}
