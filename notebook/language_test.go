package notebook

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

func TestSetLanguageInfo(t *testing.T) {
	want := map[string]any{"codemirror_mode": map[string]any{"name": "ipython", "version": 3.0},
		"file_extension": ".py", "mimetype": "text/x-python", "name": "python",
		"nbconvert_exporter": "python", "pygments_lexer": "ipython3", "version": "3.11.7"}
	tests := []struct {
		name      string
		in        string
		unchanged bool
	}{
		{"none yet", `{"cells":[],"metadata":{"kernelspec":{"display_name":"Python 3","language":"python","name":"python3"}},"nbformat":4,"nbformat_minor":5}`, false},
		{"no metadata", `{"cells":[],"nbformat":4,"nbformat_minor":5}`, false},
		{"older version is replaced", `{"cells":[],"metadata":{"language_info":{"name":"python","version":"3.8.1","extra":1}},"nbformat":4,"nbformat_minor":5}`, false},
		{"same version keeps the bytes", "{\n \"cells\": [],\n \"metadata\": {\n  \"language_info\": {\n   \"name\": \"python\",\n   \"version\": \"3.11.7\"\n  }\n },\n \"nbformat\": 4,\n \"nbformat_minor\": 5\n}\n", true},
	}
	var written [][]byte
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nb := mustParse(t, []byte(tt.in))
			nb.SetLanguageInfo(PythonLanguageInfo("3.11.7"))
			out := nb.Bytes()
			if tt.unchanged {
				if !bytes.Equal(out, []byte(tt.in)) {
					t.Fatalf("bytes changed:\n%s", out)
				}
				return
			}
			var doc struct {
				Metadata map[string]any `json:"metadata"`
			}
			if err := json.Unmarshal(out, &doc); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if got := doc.Metadata["language_info"]; !reflect.DeepEqual(got, want) {
				t.Errorf("language_info = %v\nwant %v", got, want)
			}
			if bytes.Contains([]byte(tt.in), []byte("kernelspec")) && doc.Metadata["kernelspec"] == nil {
				t.Error("kernelspec was lost")
			}
			written = append(written, out)
		})
	}
	validateWithNbformat(t, written...)
}
