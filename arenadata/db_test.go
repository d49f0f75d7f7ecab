package arenadata_test

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/arenadata"
)

// seedHead and seedTail are the fixed lines around the items rows and the users rows.
const (
	seedItemsHead = "CREATE TABLE items (id integer PRIMARY KEY, name text NOT NULL, category text NOT NULL, " +
		"price integer NOT NULL, quantity integer NOT NULL, active boolean NOT NULL, tags jsonb NOT NULL, " +
		"rating_score integer NOT NULL, rating_count integer NOT NULL);\n" +
		"COPY items (id, name, category, price, quantity, active, tags, rating_score, rating_count) FROM stdin;\n"
	seedUsersHead = "\\.\n" +
		"CREATE TABLE users (id integer PRIMARY KEY, name text NOT NULL, email text NOT NULL);\n" +
		"COPY users (id, name, email) FROM stdin;\n"
	seedTail = "\\.\nANALYZE;\n"
)

// parseSeed reads db/seed.sql the way a consumer of the documented format would: the items
// COPY block, then the users COPY block.
func parseSeed(t *testing.T, b []byte) (items []arenadata.DBItem, users [][]string) {
	t.Helper()
	s, ok := strings.CutPrefix(string(b), seedItemsHead)
	if !ok {
		t.Fatalf("the seed does not start with\n%s", seedItemsHead)
	}
	rows, rest, ok := strings.Cut(s, seedUsersHead)
	if !ok {
		t.Fatalf("the seed has no users table after the items rows")
	}
	userRows, ok := strings.CutSuffix(rest, seedTail)
	if !ok || strings.Contains(userRows, "\\.") {
		t.Fatalf("the seed does not end with one users block and %q", seedTail)
	}
	for line := range strings.Lines(rows) {
		f := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
		if len(f) != 9 {
			t.Fatalf("items row %q has %d fields, want 9", line, len(f))
		}
		it := arenadata.DBItem{Name: f[1], Category: f[2]}
		for i, p := range map[int]*int{0: &it.ID, 3: &it.Price, 4: &it.Quantity, 7: &it.RatingScore, 8: &it.RatingCount} {
			n, err := strconv.Atoi(f[i])
			if err != nil || strconv.Itoa(n) != f[i] {
				t.Fatalf("items row %q: field %d %q is not a plain integer", line, i+1, f[i])
			}
			*p = n
		}
		switch f[5] {
		case "t":
			it.Active = true
		case "f":
		default:
			t.Fatalf("items row %q: active %q, want t or f", line, f[5])
		}
		if err := json.Unmarshal([]byte(f[6]), &it.Tags); err != nil {
			t.Fatalf("items row %q: tags %q: %v", line, f[6], err)
		}
		if compact, _ := json.Marshal(it.Tags); string(compact) != f[6] {
			t.Fatalf("items row %q: tags %q, want compact JSON %s", line, f[6], compact)
		}
		items = append(items, it)
	}
	for line := range strings.Lines(userRows) {
		users = append(users, strings.Split(strings.TrimSuffix(line, "\n"), "\t"))
	}
	return items, users
}

// TestSeed checks db/seed.sql: its exact shape, that its rows are DBItems(), and that each
// query the checks and the load send finds what it expects.
func TestSeed(t *testing.T) {
	b := readFile(t, tree(t), arenadata.DBSeedFile)
	if bytes.Count(b, []byte("\\")) != 2 || bytes.ContainsRune(b, '\r') {
		t.Errorf("the seed has a CR or a backslash outside the two \\. lines")
	}
	items, users := parseSeed(t, b)

	want := arenadata.DBItems()
	if len(want) != arenadata.DBItemCount || arenadata.DBItemCount != 100000 {
		t.Fatalf("DBItems() has %d rows, DBItemCount is %d; want 100000", len(want), arenadata.DBItemCount)
	}
	if !slices.EqualFunc(items, want, func(a, b arenadata.DBItem) bool {
		return a.ID == b.ID && a.Name == b.Name && a.Category == b.Category && a.Price == b.Price &&
			a.Quantity == b.Quantity && a.Active == b.Active && slices.Equal(a.Tags, b.Tags) &&
			a.RatingScore == b.RatingScore && a.RatingCount == b.RatingCount
	}) {
		t.Fatalf("the seed's %d rows are not DBItems()", len(items))
	}

	categories := map[string]int{}
	active := 0
	for i, it := range items {
		if it.ID != i+1 {
			t.Fatalf("row %d has id %d, want %d (ascending from 1)", i, it.ID, i+1)
		}
		if it.Name == "" || strings.ContainsAny(it.Name+it.Category, "\t\n\\") {
			t.Fatalf("row %d: name %q, category %q", it.ID, it.Name, it.Category)
		}
		if it.Price < 1 || it.Price > 500 || it.Quantity < 1 || it.Quantity > 100 ||
			it.RatingScore < 1 || it.RatingScore > 5 || it.RatingCount < 0 || it.RatingCount > 5000 {
			t.Fatalf("row %d out of range: %+v", it.ID, it)
		}
		if n := len(it.Tags); n < 1 || n > 4 || len(slices.Compact(slices.Sorted(slices.Values(it.Tags)))) != n {
			t.Fatalf("row %d: tags %q, want 1 to 4 distinct", it.ID, it.Tags)
		}
		categories[it.Category]++
		if it.Active {
			active++
		}
	}
	// The crud profile lists office items 10 to a page, pages 1 to 10; validation lists
	// electronics.
	if categories["office"] < 100 || categories["electronics"] < 5 {
		t.Errorf("categories %v; want at least 100 office and 5 electronics items", categories)
	}
	if active < 78000 || active > 82000 {
		t.Errorf("%d of 100000 rows active, want about 80%%", active)
	}
	// The async-db ranges of the load (10..50) and of validation: each must fill its limit
	// (at most 50) many times over; 9999..9999 must find nothing.
	for _, r := range [][2]int{{10, 50}, {5, 80}, {20, 150}, {100, 400}, {9999, 9999}} {
		n := 0
		for _, it := range items {
			if it.Price >= r[0] && it.Price <= r[1] {
				n++
			}
		}
		if wantNone := r[0] == 9999; wantNone && n != 0 || !wantNone && n < 1000 {
			t.Errorf("price BETWEEN %d AND %d matches %d rows", r[0], r[1], n)
		}
	}
	// The crud validation reads item 1 and 42, expects 999999 to be missing and creates
	// 200001; the load reads ids up to 50000 and creates from 100001 on.
	if len(items) < 50000 || len(items) >= 100001 {
		t.Errorf("%d items; crud reads 1..50000 and creates from 100001", len(items))
	}

	if len(users) != 4 {
		t.Errorf("%d users, want 4", len(users))
	}
	has42 := false
	for _, u := range users {
		if len(u) != 3 || u[1] == "" || !strings.Contains(u[2], "@") {
			t.Errorf("users row %q, want id, name, email", u)
		}
		has42 = has42 || u[0] == "42"
	}
	if !has42 {
		t.Errorf("users %q lack id 42 (production-stack's /api/me)", users)
	}
}

// TestDBItemsIndependent checks that the database rows do not come from the dataset's
// source: dataset.json is pinned by SHA256SUMS and must not move when the seed does.
func TestDBItemsIndependent(t *testing.T) {
	ds, db := arenadata.Dataset(), arenadata.DBItems()
	same := 0
	for i, it := range ds {
		if it.Name == db[i].Name && it.Price == db[i].Price {
			same++
		}
	}
	if same > 5 {
		t.Errorf("%d of the first 50 rows equal dataset.json's items; want an independent source", same)
	}
}

// BenchmarkSeed measures the seed's generation (once per data cache, beside the rest).
func BenchmarkSeed(b *testing.B) {
	for b.Loop() {
		if err := arenadata.WriteFileForTest(io.Discard, arenadata.DBSeedFile); err != nil {
			b.Fatal(err)
		}
	}
}
