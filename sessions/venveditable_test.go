package sessions

import (
	"reflect"
	"testing"
)

// TestEditableMaps: a setuptools finder's MAPPING and NAMESPACES are read
// as repr writes them, in the forms setuptools 64 to 80 write.
func TestEditableMaps(t *testing.T) {
	cases := []struct {
		name, src string
		want      map[string][]string
	}{
		{"setuptools 65", "MAPPING = {'mypkg': '/src/proj/mypkg'}\nNAMESPACES = {}\n",
			map[string][]string{"mypkg": {"/src/proj/mypkg"}}},
		{"annotated, several, namespaces", "MAPPING: dict[str, str] = {'a': '/p/a', 'b.c': '/p/b/c'}\n" +
			"NAMESPACES: dict[str, list[str]] = {'ns': ['/x/ns', '/y/ns'], 'e': []}\n",
			map[string][]string{"a": {"/p/a"}, "b.c": {"/p/b/c"}, "ns": {"/x/ns", "/y/ns"}, "e": nil}},
		{"a quote in a path", `MAPPING = {'a': "/p/it's"}`, map[string][]string{"a": {"/p/it's"}}},
		{"escapes", `MAPPING = {'a': '/p/\xe9\u00e9\U0001f600\\\'\n', 'b': '/q/\udcff'}`,
			map[string][]string{"a": {"/p/éé\U0001f600\\'\n"}, "b": {"/q/\xff"}}},
		{"a line that is not the map", "x = MAPPING.get('a')\n", map[string][]string{}},
		{"cut short", "MAPPING = {'a': '/p", map[string][]string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := editableMaps(tc.src)
			for k, v := range got {
				if len(v) == 0 {
					got[k] = nil
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("editableMaps(%q) = %q, want %q", tc.src, got, tc.want)
			}
		})
	}
}
