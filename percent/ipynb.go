package percent

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/evalhost/evalhost/notebook"
)

// Ipynb is the .ipynb notebook jupytext writes of nb ("jupytext --to
// ipynb"): nbformat 4.5, each cell with a new id, the metadata without
// jupytext.text_representation (and without a jupytext section left
// empty). jupytext.formats, which pairs the notebook with its script, is
// kept only with paired: jupytext drops it from a notebook written
// outside the pair.
func (nb *Notebook) Ipynb(paired bool) (*notebook.Notebook, error) {
	out := notebook.New()
	return out, nb.IpynbInto(out, paired)
}

// IpynbInto is Ipynb into out, an empty notebook (notebook.NewAt's of a
// file that is not there yet, whose save will not replace one made
// meanwhile).
func (nb *Notebook) IpynbInto(out *notebook.Notebook, paired bool) error {
	if out.Len() != 0 {
		return fmt.Errorf("the notebook to fill has %d cells", out.Len())
	}
	for i, c := range nb.Cells {
		if err := out.Insert(i, notebook.CellType(c.Type), c.Source); err != nil {
			return err
		}
		// At once: a member at a time copied those before it.
		if err := out.SetCellMetadataMembers(i, jsonValue(c.Metadata).(map[string]any)); err != nil {
			return err
		}
	}
	md := maps.Clone(nb.Metadata)
	if j, ok := md["jupytext"].(map[string]any); ok {
		j = maps.Clone(j)
		delete(j, "text_representation")
		if !paired {
			delete(j, "formats")
		}
		md["jupytext"] = j
		if len(j) == 0 {
			delete(md, "jupytext")
		}
	}
	return out.SetMetadataMembers(jsonValue(md).(map[string]any))
}

// jsonValue is v with its int64s as the json.Numbers notebook writes.
func jsonValue(v any) any {
	switch v := v.(type) {
	case int64:
		return json.Number(strconv.FormatInt(v, 10))
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = jsonValue(x)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = jsonValue(x)
		}
		return out
	}
	return v
}

// Paired says whether the notebook at ipynb is the one jupytext.formats
// pairs with the script at script: the script's name with .ipynb for .py,
// in its directory, when formats names a plain "ipynb" (a prefix or
// suffix makes another name, which Paired does not work out: false).
func (nb *Notebook) Paired(script, ipynb string) bool {
	j, _ := nb.Metadata["jupytext"].(map[string]any)
	formats, err := longFormats(j["formats"], nil)
	if err != nil {
		return false
	}
	stem, ok := strings.CutSuffix(filepath.Clean(script), ".py")
	if !ok || filepath.Clean(ipynb) != stem+".ipynb" {
		return false
	}
	var hasIpynb, hasPy bool
	for _, f := range formats {
		plain := !f.hasPrefix && !f.hasSuffix
		hasIpynb = hasIpynb || plain && f.ext == ".ipynb"
		hasPy = hasPy || plain && f.ext == ".py"
	}
	return hasIpynb && hasPy
}
