package notebook

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestOutputs(t *testing.T) {
	nb := New()
	nb.Insert(0, Markdown, "# doc")
	nb.Insert(1, Code, "x")
	plain := map[string]json.RawMessage{"text/plain": json.RawMessage(`"v1"`)}
	res, err := ExecuteResult(plain, json.RawMessage(`{"a":1}`), 3)
	if err != nil {
		t.Fatal(err)
	}
	before := nb.clone()
	if err := nb.SetOutputs(1, []Output{res, ErrorOutput("ValueError", "bad", []string{"tb"})}); err != nil {
		t.Fatal(err)
	}
	upd, err := res.WithBundle(map[string]json.RawMessage{"text/plain": json.RawMessage(`"v2"`)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Text() + "|" + upd.Text() + "|" + upd.Type(); got != "v1|v2|execute_result" {
		t.Errorf("result, updated: %q", got)
	}
	if !strings.Contains(string(upd.v.get("execution_count").raw), "3") {
		t.Errorf("WithBundle lost the execution_count")
	}
	outs := nb.Outputs(1)
	if len(outs) != 2 || outs[1].Text() != "ValueError: bad" {
		t.Errorf("Outputs(1) = %v", outs)
	}
	if len(before.Outputs(1)) != 0 {
		t.Errorf("SetOutputs changed a clone taken before it")
	}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"outputs of markdown", nb.SetOutputs(0, nil), "set outputs of cell 0: it is a markdown cell"},
		{"count out of range", nb.SetExecutionCount(2, 1), "cell 2 is out of range"},
		{"zero output", nb.SetOutputs(1, []Output{{}}), "output 0 is the zero Output"},
		{"bad bundle", func() error {
			_, err := DisplayData(map[string]json.RawMessage{"text/html": json.RawMessage(`<b>`)}, nil)
			return err
		}(),
			`bundle "text/html" is not valid JSON`},
		{"bad metadata", func() error { _, err := DisplayData(plain, json.RawMessage(`"s"`)); return err }(), "metadata is a string, want an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err == nil || !strings.Contains(tt.err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", tt.err, tt.want)
			}
		})
	}
}
