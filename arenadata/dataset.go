package arenadata

import (
	"encoding/json"
	"io"
	"slices"
)

// An Item is one entry of dataset.json, in the arena's format. Prices and quantities are
// integers, so a json response's total (price × quantity × m) is exact.
type Item struct {
	ID       int      `json:"id"`
	Name     string   `json:"name"`
	Category string   `json:"category"`
	Price    int      `json:"price"`
	Quantity int      `json:"quantity"`
	Active   bool     `json:"active"`
	Tags     []string `json:"tags"`
	Rating   Rating   `json:"rating"`
}

// A Rating is an item's review score (1 to 5) and number of reviews.
type Rating struct {
	Score int `json:"score"`
	Count int `json:"count"`
}

// DatasetSize is the number of items in dataset.json.
const DatasetSize = 50

// DatasetLargeFile is the large item dataset, relative to the data tree's root: the
// arena's data/dataset-large.json, which its gateway-64 stacks mount into their server
// (${DATA_DIR}/dataset-large.json:/data/dataset-large.json:ro). No profile's check or load
// asks for it here; a stack that mounts it must find it, or its container cannot start.
const DatasetLargeFile = "dataset-large.json"

// DatasetLargeSize is the number of items in DatasetLargeFile.
const DatasetLargeSize = 6000

var (
	categories = []string{"electronics", "office", "home", "sports", "books", "clothing", "toys", "garden"}
	nouns      = map[string][]string{
		"electronics": {"Headphones", "Keyboard", "Monitor", "Charger", "Speaker", "Webcam", "Router", "Tablet"},
		"office":      {"Stapler", "Notebook", "Desk Lamp", "Pen Set", "Binder", "Whiteboard", "Organizer", "Chair"},
		"home":        {"Kettle", "Blanket", "Mug", "Vase", "Cutting Board", "Candle", "Pillow", "Towel Set"},
		"sports":      {"Yoga Mat", "Water Bottle", "Dumbbell", "Jump Rope", "Backpack", "Tennis Racket", "Helmet", "Gloves"},
		"books":       {"Cookbook", "Novel", "Atlas", "Field Guide", "Journal", "Anthology", "Handbook", "Biography"},
		"clothing":    {"Jacket", "Scarf", "Sneakers", "Hoodie", "Rain Coat", "Beanie", "Socks", "T-Shirt"},
		"toys":        {"Puzzle", "Building Set", "Kite", "Board Game", "Plush Bear", "Race Car", "Yo-Yo", "Robot Kit"},
		"garden":      {"Watering Can", "Trowel", "Planter", "Hose", "Pruners", "Seed Kit", "Bird Feeder", "Lantern"},
	}
	adjectives = []string{"Compact", "Classic", "Deluxe", "Eco", "Ultra", "Smart", "Vintage", "Portable",
		"Premium", "Basic", "Modern", "Rugged", "Wireless", "Foldable", "Bright", "Silent"}
	tagPool = []string{"new", "sale", "popular", "limited", "eco", "premium", "bestseller", "imported",
		"handmade", "clearance", "gift", "bundle"}
)

// Dataset returns the 50 items of dataset.json, in file order (ids 1 to 50).
func Dataset() []Item {
	r := newRNG(DatasetFile)
	items := make([]Item, DatasetSize)
	for i := range items {
		items[i] = randomItem(r, i+1)
	}
	return items
}

// DatasetLarge returns the DatasetLargeSize items of dataset-large.json, in file order (ids 1
// to 6000): dataset.json's shape, drawn the same way from a source of their own, so neither
// file changes the other.
func DatasetLarge() []Item {
	r := newRNG(DatasetLargeFile)
	items := make([]Item, DatasetLargeSize)
	for i := range items {
		items[i] = randomItem(r, i+1)
	}
	return items
}

// randomItem draws one item from r: a category, 1 to 4 distinct tags, a name made of an
// adjective and one of the category's nouns, a price of 1 to 500, a quantity of 1 to 100,
// active four times in five, a rating score of 1 to 5 and a review count of 0 to 5000.
// Dataset and DBItems both use it, each with its own source, so neither changes the other.
func randomItem(r *rng, id int) Item {
	cat := pick(r, categories)
	tags := make([]string, 0, 4)
	for n := r.between(1, 4); len(tags) < n; {
		if t := pick(r, tagPool); !slices.Contains(tags, t) {
			tags = append(tags, t)
		}
	}
	return Item{
		ID:       id,
		Name:     pick(r, adjectives) + " " + pick(r, nouns[cat]),
		Category: cat,
		Price:    r.between(1, 500),
		Quantity: r.between(1, 100),
		Active:   r.chance(80),
		Tags:     tags,
		Rating:   Rating{Score: r.between(1, 5), Count: r.between(0, 5000)},
	}
}

func writeDataset(w io.Writer) error { return writeItems(w, Dataset()) }

func writeDatasetLarge(w io.Writer) error { return writeItems(w, DatasetLarge()) }

// writeItems writes items as the arena's dataset files are: a JSON array indented by two
// spaces, ending with a newline.
func writeItems(w io.Writer, items []Item) error {
	b, err := json.MarshalIndent(items, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
