package validate

import (
	"encoding/json"
	"strings"
	"testing"
)

// testDataset is a small dataset in the arena's format.
const testDataset = `[
 {"id":1,"name":"Ultra Helmet","category":"sports","price":62,"quantity":81,"active":true,"tags":["limited"],"rating":{"score":4,"count":4470}},
 {"id":2,"name":"Eco Kettle","category":"home","price":7,"quantity":3,"active":false,"tags":["new","sale"],"rating":{"score":1,"count":0}},
 {"id":3,"name":"Basic Atlas","category":"books","price":500,"quantity":100,"active":true,"tags":[],"rating":{"score":5,"count":12}}
]`

func mustDataset(t testing.TB) dataset {
	t.Helper()
	ds, err := parseDataset([]byte(testDataset))
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// renderItems is a correct /json/{n}?m={m} body for the dataset.
func renderItems(ds dataset, n, m int) []byte {
	n = max(0, min(n, len(ds)))
	items := make([]map[string]any, n)
	for i := range items {
		it := map[string]any{}
		for k, v := range ds[i] {
			it[k] = v
		}
		p, _ := intField(ds[i], "price")
		q, _ := intField(ds[i], "quantity")
		it["total"] = p * q * int64(m)
		items[i] = it
	}
	b, _ := json.Marshal(map[string]any{"items": items, "count": n})
	return b
}

func TestCheckItems(t *testing.T) {
	ds := mustDataset(t)
	for n := range 5 {
		for _, m := range []int{0, 1, 3, 99} {
			if err := checkItems(renderItems(ds, n, m), ds, n, m); err != nil {
				t.Errorf("checkItems(correct body for n=%d m=%d): %v", n, m, err)
			}
		}
	}
	good := string(renderItems(ds, 2, 3))
	for _, tt := range []struct {
		name, body, err string
	}{
		{"float total", strings.Replace(good, `"total":15066`, `"total":15066.0`, 1), ""},
		{"exponent total", strings.Replace(good, `"total":15066`, `"total":1.5066e4`, 1), ""},
		{"extra field", strings.Replace(good, `"id":1,`, `"id":1,"extra":true,`, 1), ""},
		{"wrong total", strings.Replace(good, `"total":15066`, `"total":15067`, 1), "items[0].total is 15067, want 15066"},
		{"string total", strings.Replace(good, `"total":15066`, `"total":"15066"`, 1), "items[0].total"},
		{"missing field", strings.Replace(good, `"active":true,`, ``, 1), `items[0] has no "active"`},
		{"wrong name", strings.Replace(good, `Eco Kettle`, `Eco Kettles`, 1), `items[1].name is "Eco Kettles"`},
		{"wrong nested", strings.Replace(good, `"score":1}`, `"score":2}`, 1), `items[1].rating`},
		{"tags order", strings.Replace(good, `["new","sale"]`, `["sale","new"]`, 1), `items[1].tags`},
		{"count", strings.Replace(good, `"count":2,"items"`, `"count":3,"items"`, 1), "count is 3, want 2"},
		{"count string", strings.Replace(good, `"count":2,"items"`, `"count":"2","items"`, 1), "count is"},
		{"no items", `{"count":2}`, `no "items"`},
		{"items not array", `{"items":{},"count":2}`, "not a JSON object"},
		{"short items", `{"items":[],"count":2}`, "items has 0 entries, want 2"},
		{"item not object", `{"items":[1,2],"count":2}`, "items[0] is 1, not an object"},
		{"trailing data", good + "{}", "data after the JSON value"},
		{"not JSON", "55", "not a JSON object"},
		{"array", "[]", "not a JSON object"},
		{"empty", "", "not a JSON object"},
	} {
		err := checkItems([]byte(tt.body), ds, 2, 3)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%s: checkItems: %v, want success", tt.name, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s: checkItems = %v, want an error containing %q", tt.name, err, tt.err)
		}
	}
	// count larger than the dataset: the first len(dataset) items.
	if err := checkItems(renderItems(ds, 3, 2), ds, 50, 2); err != nil {
		t.Errorf("checkItems(n=50 of 3): %v", err)
	}
}

func TestParseDataset(t *testing.T) {
	for _, bad := range []string{``, `{}`, `[{"price":1.5,"quantity":2}]`, `[{"price":1}]`, `[{"price":"1","quantity":2}]`} {
		if _, err := parseDataset([]byte(bad)); err == nil {
			t.Errorf("parseDataset(%q) succeeded, want an error", bad)
		}
	}
}
