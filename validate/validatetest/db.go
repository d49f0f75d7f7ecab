package validatetest

import (
	"bufio"
	"encoding/json"
	"errors"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The fixture's database: the items table of the data directory's db/seed.sql, read once
// per directory and shared, under each server's own writes, and a cache with the entries'
// 200 ms lifetime, so that /async-db and /crud answer as an entry over the Postgres sidecar
// does.
type db struct {
	once    sync.Once
	base    *table
	err     error
	mu      sync.Mutex
	written map[int]item // rows this server's POSTs and PUTs wrote
	cache   map[int]time.Time
}

// A table is the seeded items table.
type table struct {
	rows  map[int]item
	ids   []int  // ascending
	items []item // the rows in ids' order: a scan walks this slice, not the map
}

var tables sync.Map // data directory → func() (*table, error)

func loadTable(dataDir string) (*table, error) {
	f, _ := tables.LoadOrStore(dataDir, sync.OnceValues(func() (*table, error) { return readTable(dataDir) }))
	return f.(func() (*table, error))()
}

func readTable(dataDir string) (*table, error) {
	f, err := os.Open(filepath.Join(dataDir, "db", "seed.sql"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t := &table{rows: map[int]item{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	in := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "COPY items "):
			in = true
			continue
		case !in:
			continue
		case line == `\.`:
			slices.Sort(t.ids)
			t.items = make([]item, len(t.ids))
			for i, id := range t.ids {
				t.items[i] = t.rows[id]
			}
			return t, nil
		}
		f := strings.Split(line, "\t")
		if len(f) != 9 {
			return nil, errors.New("seed: a row without 9 fields")
		}
		n := func(i int) int { v, _ := strconv.Atoi(f[i]); return v }
		it := item{ID: n(0), Name: f[1], Category: f[2], Price: n(3), Quantity: n(4), Active: f[5] == "t", Rating: rating{Score: n(7), Count: n(8)}, Tags: []string{}}
		for _, tag := range strings.Split(strings.Trim(f[6], "[]"), ",") {
			if tag != "" {
				it.Tags = append(it.Tags, strings.Trim(tag, `"`))
			}
		}
		t.rows[it.ID] = it
		t.ids = append(t.ids, it.ID)
	}
	return nil, errors.New("seed: no items COPY block")
}

func (d *db) load(dataDir string) error {
	d.once.Do(func() {
		d.base, d.err = loadTable(dataDir)
		d.written, d.cache = map[int]item{}, map[int]time.Time{}
	})
	return d.err
}

// get returns a row as this server holds it; d.mu held.
func (d *db) get(id int) (item, bool) {
	if it, ok := d.written[id]; ok {
		return it, true
	}
	it, ok := d.base.rows[id]
	return it, ok
}

// all yields every row as this server holds it, the seeded ids ascending and then the ids
// only this server wrote, ascending; d.mu held. A seeded row is yielded in place, shared
// by every server of its data directory: not to be changed. The seeded rows are walked as a
// slice: a scan of all 100,000 (an empty price range, a category's total) looked each up in
// two maps and took up to 290 ms under -race, and several at once on a loaded machine
// passed a check's 2 s (.ci/flaky).
func (d *db) all() iter.Seq[*item] {
	return func(yield func(*item) bool) {
		for i := range d.base.items {
			it := &d.base.items[i]
			if len(d.written) > 0 {
				if w, ok := d.written[it.ID]; ok {
					it = &w
				}
			}
			if !yield(it) {
				return
			}
		}
		var extra []int
		for id := range d.written {
			if _, ok := d.base.rows[id]; !ok {
				extra = append(extra, id)
			}
		}
		slices.Sort(extra)
		for _, id := range extra {
			it := d.written[id]
			if !yield(&it) {
				return
			}
		}
	}
}

const cacheTTL = 200 * time.Millisecond

func jsonReply(status int, v any) reply {
	b, _ := json.Marshal(v)
	return reply{status: status, headers: []string{"Content-Type: application/json"}, body: b}
}

func intParam(q, name string, def int) int {
	if v, err := strconv.Atoi(queryValue(q, name)); err == nil {
		return v
	}
	return def
}

// asyncDB answers GET /async-db?min&max&limit: up to limit rows priced in [min, max].
func (s *Server) asyncDB(r *req) reply {
	if err := s.db.load(s.dataDir); err != nil {
		return reply{status: 503, body: []byte(err.Error())}
	}
	if s.mode == "db-no-defaults" && r.query == "" {
		return reply{status: 400, body: []byte("min, max and limit are required")}
	}
	lo, hi, limit := intParam(r.query, "min", 10), intParam(r.query, "max", 50), intParam(r.query, "limit", 50)
	if s.mode != "db-no-clamp" {
		limit = max(1, min(limit, 50))
	}
	out := struct {
		Items []item `json:"items"`
		Count int    `json:"count"`
	}{Items: []item{}}
	s.db.mu.Lock()
	for it := range s.db.all() {
		if len(out.Items) >= limit {
			break
		}
		if it.Price >= lo && it.Price <= hi {
			out.Items = append(out.Items, *it)
		}
	}
	s.db.mu.Unlock()
	out.Count = len(out.Items)
	switch {
	case s.mode == "db-load-wrong" && lo == 10 && hi == 50 && limit == 35 && out.Count > 0:
		out.Items, out.Count = out.Items[:out.Count-1], out.Count-1
	case s.mode == "db-arena-wrong" && lo == 100 && hi == 400 && limit == 33 && out.Count > 0:
		out.Items[0].Name += " (stale)"
	case s.mode == "db-empty-wrong" && lo == 9999:
		return reply{status: 200, headers: []string{"Content-Type: application/json"}, body: []byte(`{"items":null,"count":0}`)}
	case s.mode == "db-random-wrong" && !slices.Contains([]int{5, 10, 20, 100, 9999}, lo) && out.Count > 0:
		b, _ := json.Marshal(out)
		b = []byte(strings.Replace(string(b), `"active":true`, `"active":"true"`, 1))
		b = []byte(strings.Replace(string(b), `"active":false`, `"active":"false"`, 1))
		return reply{status: 200, headers: []string{"Content-Type: application/json"}, body: b}
	}
	rep := jsonReply(200, out)
	if s.mode == "db-content-type" && lo == 10 && hi == 50 && limit == 3 {
		rep.headers = []string{"Content-Type: text/plain"}
	}
	return rep
}

// crud answers /crud/items and /crud/items/{id}.
func (s *Server) crud(r *req) reply {
	if err := s.db.load(s.dataDir); err != nil {
		return reply{status: 503, body: []byte(err.Error())}
	}
	d := &s.db
	rest := strings.TrimPrefix(r.path, "/crud/items")
	if rest == "" {
		switch r.method {
		case "GET":
			return s.crudList(r)
		case "POST":
			var in item
			if err := json.Unmarshal(r.body, &in); err != nil || in.ID <= 0 {
				return reply{status: 400, body: []byte("bad item")}
			}
			d.mu.Lock()
			defer d.mu.Unlock()
			in.Active, in.Tags = true, []string{}
			if s.mode != "crud-create-lost" {
				d.written[in.ID] = in
			}
			delete(d.cache, in.ID)
			return jsonReply(201, in)
		}
		return reply{status: 405, headers: []string{"Allow: GET, POST"}}
	}
	id, err := strconv.Atoi(strings.TrimPrefix(rest, "/"))
	if err != nil {
		return reply{status: 400, body: []byte("bad id")}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	it, ok := d.get(id)
	if !ok {
		if s.mode == "crud-404" {
			return reply{status: 500, body: []byte("no rows in result set")}
		}
		return reply{status: 404, headers: []string{"Content-Type: text/plain"}, body: []byte("not found")}
	}
	switch r.method {
	case "GET":
		cache := "MISS"
		if at, ok := d.cache[id]; ok && time.Since(at) < cacheTTL && s.mode != "crud-no-hit" {
			cache = "HIT"
		} else {
			d.cache[id] = time.Now()
		}
		if s.mode == "crud-get-wrong" && id == 1 {
			it.Name += " (stale)"
		}
		rep := jsonReply(200, it)
		rep.headers = append(rep.headers, "X-Cache: "+cache)
		return rep
	case "PUT":
		var in item
		if err := json.Unmarshal(r.body, &in); err != nil {
			return reply{status: 400, body: []byte("bad item")}
		}
		it.Name, it.Category, it.Price, it.Quantity = in.Name, in.Category, in.Price, in.Quantity
		d.written[id] = it
		if s.mode == "crud-stale-cache" {
			d.cache[id] = time.Now()
		} else {
			delete(d.cache, id)
		}
		return jsonReply(200, it)
	}
	return reply{status: 405, headers: []string{"Allow: GET, PUT"}}
}

func (s *Server) crudList(r *req) reply {
	d := &s.db
	cat := queryValue(r.query, "category")
	page, limit := max(1, intParam(r.query, "page", 1)), max(1, min(intParam(r.query, "limit", 10), 50))
	out := struct {
		Items []item `json:"items"`
		Total int    `json:"total"`
		Page  int    `json:"page"`
		Limit int    `json:"limit"`
	}{Items: []item{}, Page: page, Limit: limit}
	d.mu.Lock()
	for it := range d.all() {
		if it.Category != cat {
			continue
		}
		if out.Total >= (page-1)*limit && len(out.Items) < limit {
			out.Items = append(out.Items, *it)
		}
		out.Total++
	}
	d.mu.Unlock()
	if s.mode == "crud-list-wrong" {
		out.Total++
	}
	return jsonReply(200, out)
}
