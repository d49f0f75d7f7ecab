package arenadata_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/arenabot/arenabot/arenadata"
)

func TestDataset(t *testing.T) {
	items := arenadata.Dataset()
	if len(items) != 50 {
		t.Fatalf("Dataset() has %d items, want 50", len(items))
	}
	categories := checkItems(t, "Dataset()", items)
	if len(categories) < 4 {
		t.Errorf("only %d categories: %v", len(categories), categories)
	}
	if categories["electronics"] == 0 || categories["office"] == 0 {
		t.Errorf("the crud and validate checks query electronics and office; categories: %v", categories)
	}
	if !slices.EqualFunc(items, arenadata.Dataset(), func(a, b arenadata.Item) bool {
		return a.ID == b.ID && a.Name == b.Name && slices.Equal(a.Tags, b.Tags) && a.Price == b.Price
	}) {
		t.Error("two calls of Dataset() differ")
	}
}

// checkItems checks the shape of a dataset's items (ids 1 to n in order; a name, a
// category, a positive price and quantity, 1 to 4 distinct tags, a rating score of 1 to 5)
// and counts them by category.
func checkItems(t *testing.T, what string, items []arenadata.Item) map[string]int {
	t.Helper()
	categories := map[string]int{}
	for i, it := range items {
		if it.ID != i+1 {
			t.Errorf("%s: item %d has id %d, want %d", what, i, it.ID, i+1)
		}
		if it.Name == "" || it.Category == "" {
			t.Errorf("%s: item %d: empty name or category: %+v", what, it.ID, it)
		}
		categories[it.Category]++
		if it.Price < 1 || it.Quantity < 1 {
			t.Errorf("%s: item %d: price %d, quantity %d; want both positive", what, it.ID, it.Price, it.Quantity)
		}
		if n := len(it.Tags); n < 1 || n > 4 {
			t.Errorf("%s: item %d has %d tags, want 1 to 4", what, it.ID, n)
		}
		if sorted := slices.Sorted(slices.Values(it.Tags)); len(slices.Compact(sorted)) != len(it.Tags) {
			t.Errorf("%s: item %d has duplicate tags %q", what, it.ID, it.Tags)
		}
		if it.Rating.Score < 1 || it.Rating.Score > 5 || it.Rating.Count < 0 {
			t.Errorf("%s: item %d: rating %+v, want score 1..5 and count >= 0", what, it.ID, it.Rating)
		}
	}
	return categories
}

// TestDatasetLarge checks dataset-large.json, which the arena's gateway-64 stacks mount:
// 6,000 items in dataset.json's shape and format (every field, nothing more, integer
// prices), exactly DatasetLarge(), drawn apart from dataset.json's.
func TestDatasetLarge(t *testing.T) {
	b := readFile(t, tree(t), arenadata.DatasetLargeFile)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var items []arenadata.Item
	if err := dec.Decode(&items); err != nil {
		t.Fatalf("decode %s: %v", arenadata.DatasetLargeFile, err)
	}
	if len(items) != arenadata.DatasetLargeSize || arenadata.DatasetLargeSize != 6000 {
		t.Fatalf("%s has %d items, want 6000", arenadata.DatasetLargeFile, len(items))
	}
	if categories := checkItems(t, arenadata.DatasetLargeFile, items); len(categories) != 8 {
		t.Errorf("%s covers %d categories, want all 8: %v", arenadata.DatasetLargeFile, len(categories), categories)
	}
	want, err := json.MarshalIndent(arenadata.DatasetLarge(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, append(want, '\n')) {
		t.Errorf("%s is not DatasetLarge() written as dataset.json is (indented by two spaces, one final newline)", arenadata.DatasetLargeFile)
	}
	small := arenadata.Dataset()
	if slices.EqualFunc(items[:len(small)], small, func(a, b arenadata.Item) bool { return a.Name == b.Name && a.Price == b.Price }) {
		t.Errorf("%s starts with dataset.json's items; want a source of its own", arenadata.DatasetLargeFile)
	}
}

// TestDatasetFile checks that dataset.json holds exactly Dataset() with integer prices
// and quantities, so the json profiles' totals (price × quantity × m) are exact.
func TestDatasetFile(t *testing.T) {
	b := readFile(t, tree(t), arenadata.DatasetFile)

	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var items []arenadata.Item
	if err := dec.Decode(&items); err != nil {
		t.Fatalf("decode %s: %v", arenadata.DatasetFile, err)
	}
	want, err := json.Marshal(arenadata.Dataset())
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(items)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s does not hold Dataset():\n got %s\nwant %s", arenadata.DatasetFile, got, want)
	}

	// The raw numbers are integers (a float would decode into int only by accident).
	var raw []map[string]any
	dec = json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		t.Fatal(err)
	}
	for _, it := range raw {
		for _, k := range []string{"id", "price", "quantity"} {
			n, ok := it[k].(json.Number)
			if !ok {
				t.Fatalf("%s of %v is %T, want a number", k, it["id"], it[k])
			}
			if _, err := n.Int64(); err != nil {
				t.Errorf("%s of item %v is %s, want an integer", k, it["id"], n)
			}
		}
	}

	// The json profile's totals: the validator checks total == price*quantity*m exactly.
	var sum int64
	for _, it := range items {
		sum += int64(it.Price) * int64(it.Quantity) * 6
	}
	if sum <= 0 {
		t.Errorf("sum of totals for /json/50?m=6 is %d", sum)
	}
}
