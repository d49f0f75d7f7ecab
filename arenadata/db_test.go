package arenadata_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

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
	seedFortuneHead = "\\.\n" +
		"CREATE TABLE fortune (id integer PRIMARY KEY, message text NOT NULL);\n" +
		"COPY fortune (id, message) FROM stdin;\n"
	seedTail = "\\.\nANALYZE;\n"
)

// parseSeed reads db/seed.sql the way a consumer of the documented format would: the items
// COPY block, then the users COPY block, then the fortune COPY block.
func parseSeed(t *testing.T, b []byte) (items []arenadata.DBItem, users [][]string, fortunes []arenadata.Fortune) {
	t.Helper()
	s, ok := strings.CutPrefix(string(b), seedItemsHead)
	if !ok {
		t.Fatalf("the seed does not start with\n%s", seedItemsHead)
	}
	rows, rest, ok := strings.Cut(s, seedUsersHead)
	if !ok {
		t.Fatalf("the seed has no users table after the items rows")
	}
	userRows, rest, ok := strings.Cut(rest, seedFortuneHead)
	if !ok {
		t.Fatalf("the seed has no fortune table after the users rows")
	}
	fortuneRows, ok := strings.CutSuffix(rest, seedTail)
	if !ok || strings.Contains(fortuneRows, "\\.") {
		t.Fatalf("the seed does not end with one fortune block and %q", seedTail)
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
	for line := range strings.Lines(fortuneRows) {
		id, msg, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "\t")
		n, err := strconv.Atoi(id)
		if !ok || err != nil || strconv.Itoa(n) != id || strings.Contains(msg, "\t") {
			t.Fatalf("fortune row %q, want id<TAB>message", line)
		}
		fortunes = append(fortunes, arenadata.Fortune{ID: n, Message: msg})
	}
	return items, users, fortunes
}

// TestSeed checks db/seed.sql: its exact shape, that its rows are DBItems(), and that each
// query the checks and the load send finds what it expects.
func TestSeed(t *testing.T) {
	b := readFile(t, tree(t), arenadata.DBSeedFile)
	if bytes.Count(b, []byte("\\")) != 3 || bytes.ContainsRune(b, '\r') {
		t.Errorf("the seed has a CR or a backslash outside the three \\. lines")
	}
	items, users, fortunes := parseSeed(t, b)
	if !slices.Equal(fortunes, arenadata.DBFortunes()) {
		t.Errorf("the seed's %d fortune rows are not DBFortunes()", len(fortunes))
	}

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

// TestFortunes checks the fortune table against the fortunes profile's contract: 200 rows,
// ids 1 to 200; rows 1 to 12 the TechEmpower seed, byte for byte; every later row holding &,
// ', " and an em dash; the <script> row first and the multi-byte row last in byte order, a
// sort that ignores case differing from it; and a page of all 201 rows, escaped, inside the
// size the arena's validation accepts.
func TestFortunes(t *testing.T) {
	tfb := []string{
		"fortune: No such file or directory",
		"A computer scientist is someone who fixes things that aren't broken.",
		"After enough decimal places, nobody gives a damn.",
		"A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1",
		"A computer program does what you tell it to do, not what you want it to do.",
		"Emacs is a nice operating system, but I prefer UNIX. \u2014 Tom Christaensen",
		"Any program that runs right is obsolete.",
		"A list is only as strong as its weakest link. \u2014 Donald Knuth",
		"Feature: A bug with seniority.",
		"Computers make very fast, very accurate mistakes.",
		"<script>alert(\"This should not be displayed in a browser alert box.\");</script>",
		"\u30d5\u30ec\u30fc\u30e0\u30ef\u30fc\u30af\u306e\u30d9\u30f3\u30c1\u30de\u30fc\u30af",
	}
	rows := arenadata.DBFortunes()
	if len(rows) != arenadata.FortuneCount || arenadata.FortuneCount != 200 {
		t.Fatalf("%d fortunes, FortuneCount %d; want 200", len(rows), arenadata.FortuneCount)
	}
	seen := map[string]bool{}
	for i, f := range rows {
		if f.ID != i+1 {
			t.Fatalf("row %d has id %d, want %d", i, f.ID, i+1)
		}
		if i < len(tfb) && f.Message != tfb[i] {
			t.Errorf("row %d is %q, want TechEmpower's %q", f.ID, f.Message, tfb[i])
		}
		if i >= len(tfb) {
			for _, c := range []string{"&", "'", `"`, "\u2014"} {
				if !strings.Contains(f.Message, c) {
					t.Errorf("row %d %q lacks %q", f.ID, f.Message, c)
				}
			}
		}
		if seen[f.Message] || !utf8.ValidString(f.Message) || strings.ContainsAny(f.Message, "\t\n\r\\") || f.Message == "" {
			t.Errorf("row %d %q: repeated, not UTF-8, or holding a tab, newline or backslash", f.ID, f.Message)
		}
		seen[f.Message] = true
	}
	if again := arenadata.DBFortunes(); !slices.Equal(again, rows) {
		t.Error("DBFortunes() differs between calls")
	}

	msgs := make([]string, 0, len(rows)+1)
	for _, f := range rows {
		msgs = append(msgs, f.Message)
	}
	msgs = append(msgs, "Additional fortune added at request time.")
	byBytes := slices.Sorted(slices.Values(msgs))
	if byBytes[0] != tfb[10] || byBytes[len(byBytes)-1] != tfb[11] {
		t.Errorf("in byte order %q is first and %q last; want the <script> row first and the Japanese row last", byBytes[0], byBytes[len(byBytes)-1])
	}
	if i := slices.Index(byBytes, msgs[len(msgs)-1]); i < 10 || i > len(byBytes)-10 {
		t.Errorf("the runtime row sorts to %d of %d; want it among the others, not at an end", i, len(byBytes))
	}
	noCase := slices.Clone(msgs)
	slices.SortFunc(noCase, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) })
	if slices.Equal(noCase, byBytes) {
		t.Error("a sort that ignores case orders the rows as the byte order does; the data cannot tell them apart")
	}

	var page strings.Builder
	page.WriteString("<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table><tr><th>id</th><th>message</th></tr>")
	for _, f := range rows {
		fmt.Fprintf(&page, "<tr><td>%d</td><td>%s</td></tr>", f.ID, html.EscapeString(f.Message))
	}
	page.WriteString("<tr><td>0</td><td>Additional fortune added at request time.</td></tr></table></body></html>")
	if n := utf8.RuneCountInString(page.String()); n < 18432+2000 || n > 40000 {
		t.Errorf("a compact page of every row is %d characters; want well inside the arena's 18,432 to 65,536", n)
	} else {
		t.Logf("a compact page of every row: %d characters, %d bytes", n, page.Len())
	}
}
