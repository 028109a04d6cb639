package serve

import (
	"math"
	"reflect"
	"testing"

	"github.com/evalhost/evalhost/sessions"
	"github.com/evalhost/evalhost/streamsink"
)

// The hand-built cell_end and end lines are byte for byte what encodeLine
// makes of the same values.
func TestHandEncodersMatchEncodingJSON(t *testing.T) {
	strs := []string{"", "r1", `quo"te\back`, "ctl\x01\x1f\t\n\r", "<html>&", "é ✓ \u2028\u2029", "\xff bad utf-8"}
	floats := []float64{0, 0.3, 1, 31.25, 1234567.891, 1e-7, 1e21, 123456789012345678901234.0, -2.5}
	for _, s := range strs {
		for _, f := range floats {
			ends := []End{
				{DurationMs: f, FailedCell: -1, ID: s, Status: sessions.StatusOK, Type: TypeEnd},
				{DurationMs: f, FailedCell: 3, Status: sessions.Status(s), Type: TypeEnd},
			}
			for _, e := range ends {
				want, err := encodeLine(e)
				if err != nil {
					t.Fatal(err)
				}
				got, err := appendEnd(nil, &e)
				if err != nil || string(got) != string(want) {
					t.Fatalf("end %+v:\n got %s (%v)\nwant %s", e, got, err, want)
				}
			}
			cells := []CellEnd{
				{Type: TypeCellEnd, ID: s, CellResult: sessions.CellResult{Index: 2, Language: "py", Status: sessions.StatusOK,
					ExecutionCount: 7, DurationMs: f, Output: streamsink.Dump{Text: s, TotalLines: 1}}},
				{Type: TypeCellEnd, CellResult: sessions.CellResult{Title: s, Message: s, Recycled: true, StateLost: true, Retried: true,
					DurationMs: f, Output: streamsink.Dump{Notices: []string{s}, Truncated: true}}},
				{Type: TypeCellEnd, CellResult: sessions.CellResult{Status: sessions.StatusError, ExitStatus: -1, ExitMessage: &s}},
				{Type: TypeCellEnd, CellResult: sessions.CellResult{Status: sessions.StatusCancelled, Message: s, CancelledBeforeStart: true}},
				{Type: TypeCellEnd, ID: s, CellResult: sessions.CellResult{Tags: []string{s, "x"}, Status: sessions.StatusDetached,
					DurationMs: f, StoppedMs: f, Job: "job-" + s, JobOffset: 12}},
				{Type: TypeCellEnd, CellResult: sessions.CellResult{Output: streamsink.Dump{Text: s, Truncated: true, TotalLines: -3,
					TotalBytes: 1 << 40, KeptLines: 2, KeptBytes: 9, Notices: []string{s, "", "[…2 lines elided…]"},
					ArtifactID: s + "7.eval.log", ArtifactPath: "/a/" + s}}},
				{Type: TypeCellEnd, CellResult: sessions.CellResult{Output: streamsink.Dump{Text: s, Notices: []string{},
					Payloads: []streamsink.Payload{{}}}}},
			}
			for _, c := range cells {
				want, err := encodeLine(c)
				if err != nil {
					t.Fatal(err)
				}
				got, err := appendCellEnd(nil, &c)
				if err != nil || string(got) != string(want) {
					t.Fatalf("cell_end %+v:\n got %s (%v)\nwant %s", c, got, err, want)
				}
			}
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1)} {
		if _, err := appendEnd(nil, &End{DurationMs: f}); err == nil {
			t.Fatalf("durationMs %v encoded; encoding/json refuses it", f)
		}
	}
}

// Every field of a cell's result reaches cell_end: a field added to
// sessions.CellResult and forgotten by appendCellEnd (tags and jobs once
// were) fails here, since each is set to a value that is not its zero.
func TestHandEncoderKeepsEveryField(t *testing.T) {
	c := CellEnd{Type: TypeCellEnd, ID: "r1"}
	setEveryField(t, reflect.ValueOf(&c.CellResult).Elem())
	want, err := encodeLine(c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := appendCellEnd(nil, &c)
	if err != nil || string(got) != string(want) {
		t.Fatalf("cell_end with every field set:\n got %s (%v)\nwant %s", got, err, want)
	}
}

// setEveryField sets each field of the struct v to a value that is not its
// zero, a struct's (the output summary's) too, except the output's payloads,
// which appendCellEnd leaves to encoding/json.
func setEveryField(t *testing.T, v reflect.Value) {
	t.Helper()
	for i := range v.NumField() {
		f, name := v.Field(i), v.Type().Field(i).Name
		switch f.Kind() {
		case reflect.String:
			f.SetString("x" + name)
		case reflect.Int, reflect.Int64:
			f.SetInt(int64(i + 1))
		case reflect.Float64:
			f.SetFloat(float64(i) + 0.5)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Slice:
			if name != "Payloads" {
				f.Set(reflect.ValueOf([]string{"a", "b"}))
			}
		case reflect.Struct:
			setEveryField(t, f)
		case reflect.Pointer:
			if f.Type().Elem().Kind() != reflect.String {
				t.Fatalf("%s.%s is a %s: teach this test to set it", v.Type(), name, f.Type())
			}
			s := "x" + name
			f.Set(reflect.ValueOf(&s))
		default:
			t.Fatalf("%s.%s is a %s: teach this test to set it", v.Type(), name, f.Kind())
		}
	}
}

// The hand-built cell_end is encoding/json's line byte for byte for any
// strings in its fields, the output summary's included.
func FuzzCellEnd(f *testing.F) {
	f.Add("hi\n", "r1", "", "[…2 lines elided…]", int64(1), 0.5)
	f.Add("ctl\x01\x7f\u2028\u2029</script>", `q"\`, "\xff\xfe", "\xed\xa0\x80", int64(-1), 1e21)
	f.Fuzz(func(t *testing.T, text, id, title, notice string, n int64, dur float64) {
		c := CellEnd{Type: TypeCellEnd, ID: id, CellResult: sessions.CellResult{Title: title, Message: notice,
			Status: sessions.Status(title), DurationMs: dur, Job: id, Tags: []string{notice, text},
			Output: streamsink.Dump{Text: text, TotalLines: n, TotalBytes: -n, KeptLines: int(n), Notices: []string{notice, title},
				ArtifactID: id, ArtifactPath: title}}}
		want, werr := encodeLine(c)
		got, gerr := appendCellEnd(nil, &c)
		if (werr != nil) != (gerr != nil) || string(got) != string(want) {
			t.Fatalf("cell_end:\n got %q (%v)\nwant %q (%v)", got, gerr, want, werr)
		}
	})
}
