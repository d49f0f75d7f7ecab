package validate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// datasetFile is the item dataset inside the data directory (arenadata writes it).
const datasetFile = "dataset.json"

// A dataset is dataset.json as generic JSON values (numbers as json.Number), in file order.
type dataset []map[string]any

// loadDataset reads dir/dataset.json: an array of objects, each with integer price and
// quantity (the json profile's totals are computed from them).
func loadDataset(dir string) (dataset, error) {
	b, err := os.ReadFile(filepath.Join(dir, datasetFile))
	if err != nil {
		return nil, fmt.Errorf("read the dataset: %w", err)
	}
	return parseDataset(b)
}

func parseDataset(b []byte) (dataset, error) {
	var ds dataset
	if err := decodeJSON(b, &ds); err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	for i, it := range ds {
		for _, f := range []string{"price", "quantity"} {
			if _, err := intField(it, f); err != nil {
				return nil, fmt.Errorf("dataset item %d: %w", i, err)
			}
		}
	}
	return ds, nil
}

// decodeJSON decodes exactly one JSON value from b into v, numbers as json.Number.
func decodeJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("data after the JSON value")
	}
	return nil
}

func intField(obj map[string]any, name string) (int64, error) {
	n, ok := obj[name].(json.Number)
	if !ok {
		return 0, fmt.Errorf("%s is %s, not a number", name, jsonText(obj[name]))
	}
	v, err := strconv.ParseInt(n.String(), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s is %s, not an integer", name, n)
	}
	return v, nil
}

// checkItems checks the body of GET /json/{n}?m={m} against the dataset: an object whose
// count is min(n, dataset size), whose items are that many, each equal field by field to
// the dataset item at the same position, with total == price × quantity × m. Extra fields
// are allowed. The error names the first difference.
func checkItems(body []byte, ds dataset, n, m int) error {
	var got struct {
		Items *[]any `json:"items"`
		Count any    `json:"count"`
	}
	if err := decodeJSON(body, &got); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	want := min(n, len(ds))
	if got.Items == nil {
		return errors.New(`no "items" array`)
	}
	if c, ok := got.Count.(json.Number); !ok || !numEqual(c.String(), strconv.Itoa(want)) {
		return fmt.Errorf("count is %s, want %d", jsonText(got.Count), want)
	}
	if len(*got.Items) != want {
		return fmt.Errorf("items has %d entries, want %d", len(*got.Items), want)
	}
	for i, v := range *got.Items {
		item, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("items[%d] is %s, not an object", i, jsonText(v))
		}
		exp := ds[i]
		keys := make([]string, 0, len(exp))
		for k := range exp {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			g, ok := item[k]
			if !ok {
				return fmt.Errorf("items[%d] has no %q (dataset item %d has %s)", i, k, i, jsonText(exp[k]))
			}
			if !jsonEqual(g, exp[k]) {
				return fmt.Errorf("items[%d].%s is %s, want %s", i, k, jsonText(g), jsonText(exp[k]))
			}
		}
		price, _ := intField(exp, "price")
		qty, _ := intField(exp, "quantity")
		total := price * qty * int64(m)
		t, ok := item["total"].(json.Number)
		if !ok || !numEqual(t.String(), strconv.FormatInt(total, 10)) {
			return fmt.Errorf("items[%d].total is %s, want %d (price %d × quantity %d × m %d)", i, jsonText(item["total"]), total, price, qty, m)
		}
	}
	return nil
}

// jsonEqual reports whether two decoded JSON values are equal, numbers by value.
func jsonEqual(a, b any) bool {
	switch a := a.(type) {
	case json.Number:
		b, ok := b.(json.Number)
		return ok && numEqual(a.String(), b.String())
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !jsonEqual(a[i], b[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			w, ok := b[k]
			if !ok || !jsonEqual(v, w) {
				return false
			}
		}
		return true
	default: // string, bool, nil
		return a == b
	}
}

// numEqual compares two JSON numbers: equal text, or equal values within float64's exact
// integer range (so 1500, 1500.0 and 1.5e3 are the same total).
func numEqual(a, b string) bool {
	if a == b {
		return true
	}
	fa, errA := strconv.ParseFloat(a, 64)
	fb, errB := strconv.ParseFloat(b, 64)
	return errA == nil && errB == nil && fa == fb && math.Abs(fa) <= 1<<53
}

// jsonText renders a decoded JSON value for a message, cut short.
func jsonText(v any) string {
	if v == nil {
		return "null"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return printable(b, 80)
}
