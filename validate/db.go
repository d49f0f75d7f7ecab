package validate

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// seedFile is the database seed in the data directory (arenadata's db/seed.sql),
// the one the Postgres sidecar loads. Its items table is read from the COPY block
// "COPY items (id, name, category, price, quantity, active, tags, rating_score,
// rating_count) FROM stdin;": one tab-separated row per line, booleans t/f, tags a JSON
// array, up to a line "\.".
const seedFile = "db/seed.sql"

// A dbRow is one row of the seeded items table.
type dbRow struct {
	ID                 int
	Name, Category     string
	Price, Quantity    int
	Active             bool
	Tags               []string
	Score, RatingCount int
}

// seed is the items table as seeded: rows by id, and in id order.
type seed struct {
	byID map[int]dbRow
	rows []dbRow
}

// seeds holds the last seed read from each path, with the file's size and modification time
// then: a process validates many times against one data directory (a job each entry it
// measures, the tests hundreds of servers), and parsing its 100,000 rows cost each Run about
// 0.7 CPU-s under the race detector. A file that changed since is read again.
var (
	seedsMu sync.Mutex
	seeds   = map[string]seedRead{}
)

type seedRead struct {
	size int64
	mod  time.Time
	load func() (*seed, error)
}

// cachedSeed is loadSeed through seeds.
func cachedSeed(dir string) (*seed, error) {
	path := filepath.Join(dir, filepath.FromSlash(seedFile))
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read the database seed: %w", err)
	}
	seedsMu.Lock()
	r, ok := seeds[path]
	if !ok || r.size != fi.Size() || !r.mod.Equal(fi.ModTime()) {
		r = seedRead{size: fi.Size(), mod: fi.ModTime(), load: sync.OnceValues(func() (*seed, error) { return loadSeed(dir) })}
		seeds[path] = r
	}
	seedsMu.Unlock()
	return r.load()
}

// loadSeed reads dir/db/seed.sql.
func loadSeed(dir string) (*seed, error) {
	f, err := os.Open(filepath.Join(dir, filepath.FromSlash(seedFile)))
	if err != nil {
		return nil, fmt.Errorf("read the database seed: %w", err)
	}
	defer f.Close()
	return parseSeed(f)
}

func parseSeed(r io.Reader) (*seed, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	const head = "COPY items (id, name, category, price, quantity, active, tags, rating_score, rating_count) FROM stdin;"
	s := &seed{byID: map[int]dbRow{}}
	in, line := false, 0
	for sc.Scan() {
		line++
		text := sc.Text()
		switch {
		case !in && text == head:
			in = true
			continue
		case !in:
			continue
		case text == `\.`:
			if len(s.rows) == 0 {
				return nil, errors.New("database seed: the items table has no rows")
			}
			return s, nil
		}
		row, err := parseSeedRow(text)
		if err != nil {
			return nil, fmt.Errorf("database seed line %d: %w", line, err)
		}
		if _, dup := s.byID[row.ID]; dup {
			return nil, fmt.Errorf("database seed line %d: id %d twice", line, row.ID)
		}
		s.byID[row.ID] = row
		s.rows = append(s.rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("database seed: %w", err)
	}
	return nil, fmt.Errorf("database seed: no items COPY block ending in a \\. line")
}

func parseSeedRow(text string) (dbRow, error) {
	f := strings.Split(text, "\t")
	if len(f) != 9 {
		return dbRow{}, fmt.Errorf("%d fields, want 9", len(f))
	}
	var ints [5]int
	for i, idx := range []int{0, 3, 4, 7, 8} {
		n, err := strconv.Atoi(f[idx])
		if err != nil {
			return dbRow{}, fmt.Errorf("field %d: %w", idx+1, err)
		}
		ints[i] = n
	}
	var tags []string
	if err := json.Unmarshal([]byte(f[6]), &tags); err != nil {
		return dbRow{}, fmt.Errorf("tags: %w", err)
	}
	if f[5] != "t" && f[5] != "f" {
		return dbRow{}, fmt.Errorf("active is %q, want t or f", f[5])
	}
	return dbRow{ID: ints[0], Name: f[1], Category: f[2], Price: ints[1], Quantity: ints[2], Active: f[5] == "t", Tags: tags, Score: ints[3], RatingCount: ints[4]}, nil
}

// matches counts the rows with a price in [lo, hi].
func (s *seed) matches(lo, hi int) int {
	n := 0
	for _, r := range s.rows {
		if r.Price >= lo && r.Price <= hi {
			n++
		}
	}
	return n
}

// checkRow checks that v is the JSON object of a seeded row, every field equal:
// {"id", "name", "category", "price", "quantity", "active", "tags", "rating": {"score",
// "count"}}. It returns the row.
func (s *seed) checkRow(v any, where string) (dbRow, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return dbRow{}, fmt.Errorf("%s is %s, not an object", where, jsonText(v))
	}
	id, err := intField(obj, "id")
	if err != nil {
		return dbRow{}, fmt.Errorf("%s: %w", where, err)
	}
	row, ok := s.byID[int(id)]
	if !ok {
		return dbRow{}, fmt.Errorf("%s has id %d, which the items table does not hold", where, id)
	}
	return row, row.equal(obj, where)
}

// equal compares a JSON object with the row, field by field and type by type.
func (r dbRow) equal(obj map[string]any, where string) error {
	tags := make([]any, len(r.Tags))
	for i, t := range r.Tags {
		tags[i] = t
	}
	want := []struct {
		name string
		v    any
	}{
		{"id", json.Number(strconv.Itoa(r.ID))},
		{"name", r.Name},
		{"category", r.Category},
		{"price", json.Number(strconv.Itoa(r.Price))},
		{"quantity", json.Number(strconv.Itoa(r.Quantity))},
		{"active", r.Active},
		{"tags", tags},
		{"rating", map[string]any{"score": json.Number(strconv.Itoa(r.Score)), "count": json.Number(strconv.Itoa(r.RatingCount))}},
	}
	for _, w := range want {
		g, ok := obj[w.name]
		if !ok {
			return fmt.Errorf("%s (id %d) has no %q (the row has %s)", where, r.ID, w.name, jsonText(w.v))
		}
		if !jsonEqual(g, w.v) {
			return fmt.Errorf("%s (id %d): %s is %s, the row has %s", where, r.ID, w.name, jsonText(g), jsonText(w.v))
		}
	}
	return nil
}

// asyncDBQueries are the load's queries (arenadata's async-db-*.raw): min 10, max
// 50 and these limits.
var asyncDBLimits = []int{5, 10, 20, 35, 50}

// arenaDBQueries are the old arena's validation queries (min, max, limit).
var arenaDBQueries = [][3]int{{5, 80, 7}, {20, 150, 18}, {100, 400, 33}, {10, 50, 50}}

const asyncDBContract = `GET /async-db?min={min}&max={max}&limit={limit} → 200 application/json {"items": [rows of the items table with min <= price <= max, each {"id", "name", "category", "price", "quantity", "active", "tags", "rating": {"score", "count"}} equal to the row], "count": the number of items}, limit rows when that many match, else every match`

// asyncDBChecks are the checks of the /async-db endpoint, for async-db and the profiles
// that send it among other requests (api-4, api-16, crud).
func asyncDBChecks(p string, probe bool) []check {
	ref := func(text string) string { return contract(p, text, "") }
	var checks []check
	if probe {
		checks = append(checks, probeCheck(p, "/baseline11?a=1&b=1"))
	}
	loadQueries := make([][3]int, len(asyncDBLimits))
	for i, l := range asyncDBLimits {
		loadQueries[i] = [3]int{10, 50, l}
	}
	return append(checks,
		check{
			name:     "GET /async-db load queries",
			contract: ref(asyncDBContract + "; the load's queries min=10&max=50&limit=5, 10, 20, 35, 50"),
			run:      func(ctx context.Context, e *env) result { return dbQueryCheck(ctx, e, loadQueries) },
		},
		check{
			name:     "GET /async-db arena ranges",
			contract: ref(asyncDBContract + "; min/max/limit 5/80/7, 20/150/18, 100/400/33, 10/50/50"),
			run:      func(ctx context.Context, e *env) result { return dbQueryCheck(ctx, e, arenaDBQueries) },
		},
		check{
			name:     "GET /async-db random ranges",
			contract: ref(asyncDBContract + ", for any range and any limit from 1 to 50"),
			run: func(ctx context.Context, e *env) result {
				rng := e.rand()
				qs := make([][3]int, 4)
				for i := range qs {
					lo := 1 + rng.IntN(450)
					qs[i] = [3]int{lo, lo + rng.IntN(60), 1 + rng.IntN(50)}
				}
				return dbQueryCheck(ctx, e, qs)
			},
		},
		check{
			name:     "GET /async-db empty range",
			contract: ref(`GET /async-db?min=9999&max=9999&limit=50 → 200 application/json {"items": [], "count": 0}`),
			run:      func(ctx context.Context, e *env) result { return dbQueryCheck(ctx, e, [][3]int{{9999, 9999, 50}}) },
		},
		check{
			name:     "GET /async-db Content-Type",
			contract: ref(asyncDBContract),
			run: func(ctx context.Context, e *env) result {
				return expectType(ctx, e, "GET", request("GET", "/async-db?min=10&max=50&limit=3", nil, nil), "application/json")
			},
		},
		check{
			name:     "GET /async-db limit clamp",
			contract: contract(p, `GET /async-db with limit above 50 → 50 rows; with limit 0 or below → 1 row (the limit is clamped to 1..50)`, ""),
			run: func(ctx context.Context, e *env) result {
				return dbQueryCheck(ctx, e, [][3]int{{10, 50, 500}, {10, 50, 0}})
			},
		}.advisory(),
		check{
			name:     "GET /async-db defaults",
			contract: contract(p, `GET /async-db without parameters → as min=10&max=50&limit=50`, ""),
			run:      func(ctx context.Context, e *env) result { return dbDefaultsCheck(ctx, e) },
		}.advisory(),
	)
}

// clampLimit is the endpoint's limit rule: 1 to 50.
func clampLimit(l int) int { return max(1, min(l, 50)) }

func asyncDBTarget(q [3]int) string {
	return fmt.Sprintf("/async-db?min=%d&max=%d&limit=%d", q[0], q[1], q[2])
}

// dbQueryCheck sends each query on one kept-alive connection and judges the answers
// against the seeded table.
func dbQueryCheck(ctx context.Context, e *env, queries [][3]int) result {
	targets := make([]string, len(queries))
	for i, q := range queries {
		targets[i] = asyncDBTarget(q)
	}
	req := "GET " + strings.Join(targets, ", ")
	const exp = `200 application/json {"items": [the matching rows, each equal to the table's], "count": N} with N = min(limit, rows with min <= price <= max)`
	sd, err := e.data.seed()
	if err != nil {
		return failed(req, exp, "cannot check: "+err.Error())
	}
	s := &session{e: e}
	defer s.close()
	for _, q := range queries {
		raw := request("GET", asyncDBTarget(q), nil, nil)
		r, err := s.do(ctx, "GET", raw)
		if err != nil {
			return failed(show(raw), exp, err.Error())
		}
		want := min(clampLimit(q[2]), sd.matches(q[0], q[1]))
		if problem := judgeDBItems(sd, r, q[0], q[1], want); problem != "" {
			return failed(show(raw), exp, problem)
		}
	}
	return passed(req, exp, fmt.Sprintf("%d responses, each the rows of the table", len(queries)))
}

// dbDefaultsCheck: no parameters is min=10, max=50, limit=50.
func dbDefaultsCheck(ctx context.Context, e *env) result {
	raw := request("GET", "/async-db", nil, nil)
	const exp = `200 with the rows of min=10&max=50&limit=50`
	sd, err := e.data.seed()
	if err != nil {
		return failed(show(raw), exp, "cannot check: "+err.Error())
	}
	r, err := exchange(ctx, e, "GET", raw)
	if err != nil {
		return failed(show(raw), exp, err.Error())
	}
	if problem := judgeDBItems(sd, r, 10, 50, min(50, sd.matches(10, 50))); problem != "" {
		return failed(show(raw), exp, problem)
	}
	return passed(show(raw), exp, describe(r))
}

// judgeDBItems returns "" when r is 200 application/json with want distinct rows priced in
// [lo, hi], each equal to the table's, and count = want; else what is wrong.
func judgeDBItems(sd *seed, r *response, lo, hi, want int) string {
	if r.Status != 200 {
		return describe(r)
	}
	if !typeMatches(r.get("Content-Type"), "application/json") {
		return describe(r) + " (expected Content-Type application/json)"
	}
	var got struct {
		Items *[]any `json:"items"`
		Count any    `json:"count"`
	}
	if err := decodeJSON(r.Body, &got); err != nil {
		return fmt.Sprintf("%s: not a JSON object: %v", describe(r), err)
	}
	switch {
	case got.Items == nil:
		return describe(r) + `: no "items" array`
	case len(*got.Items) != want:
		return fmt.Sprintf("%s: %d items, want %d", describe(r), len(*got.Items), want)
	}
	if c, ok := got.Count.(json.Number); !ok || !numEqual(c.String(), strconv.Itoa(want)) {
		return fmt.Sprintf("%s: count is %s, want %d", describe(r), jsonText(got.Count), want)
	}
	seen := map[int]bool{}
	for i, v := range *got.Items {
		row, err := sd.checkRow(v, fmt.Sprintf("items[%d]", i))
		if err != nil {
			return describe(r) + ": " + err.Error()
		}
		if row.Price < lo || row.Price > hi {
			return fmt.Sprintf("%s: items[%d] (id %d) has price %d, outside %d..%d", describe(r), i, row.ID, row.Price, lo, hi)
		}
		if seen[row.ID] {
			return fmt.Sprintf("%s: items[%d]: id %d twice", describe(r), i, row.ID)
		}
		seen[row.ID] = true
	}
	return ""
}
