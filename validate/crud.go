package validate

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

const crudItemContract = `GET /crud/items/{id} → 200 application/json, the row as {"id", "name", "category", "price", "quantity", "active", "tags", "rating": {"score", "count"}}, with X-Cache: MISS when it was read from the database and X-Cache: HIT when from the cache; 404 for an id the table does not hold`

// crudChecks are crud's checks: the /async-db ones (the arena checks them for crud too),
// then the CRUD endpoints, which run one after another because they write and depend on
// what the cache holds.
func crudChecks(p string) []check {
	ref := func(text string) string { return contract(p, text, "") }
	serial := func(c check) check {
		c.serial = true
		return c
	}
	checks := asyncDBChecks(p, true)
	return append(checks,
		serial(check{
			name:     "GET /crud/items list",
			contract: ref(`GET /crud/items?category={c}&page={p}&limit={l} → 200 application/json {"items": l rows of category c (page p), each equal to the table's, "total": the rows of category c, "page": p, "limit": l}`),
			run:      crudListCheck,
		}),
		serial(check{
			name:     "GET /crud/items/1",
			contract: ref(crudItemContract),
			run: func(ctx context.Context, e *env) result {
				return crudGetCheck(ctx, e, 1)
			},
		}),
		serial(check{
			name:     "GET /crud/items/42 MISS then HIT",
			contract: ref(crudItemContract + "; two reads in a row: MISS, then HIT with the same row"),
			run:      crudCacheCheck,
		}),
		serial(check{
			name:     "GET /crud/items/999999 404",
			contract: ref(crudItemContract),
			run: func(ctx context.Context, e *env) result {
				return expectStatus(ctx, e, "GET", request("GET", "/crud/items/999999", nil, nil), 404)
			},
		}),
		serial(check{
			name:     "POST /crud/items then GET",
			contract: ref(`POST /crud/items {"id", "name", "category", "price", "quantity"} → 201, an upsert; a later GET /crud/items/{id} answers the written values`),
			run:      crudCreateCheck,
		}),
		serial(check{
			name:     "PUT /crud/items/7 then GET MISS",
			contract: ref(`PUT /crud/items/{id} {"name", "category", "price", "quantity"} → 200; it invalidates the cache, so the next GET /crud/items/{id} is X-Cache: MISS with the written values`),
			run:      crudUpdateCheck,
		}),
	)
}

// crudJSON is a request with a JSON body.
func crudJSON(method, target, body string) []byte {
	return request(method, target, []string{"Content-Type: application/json", "Content-Length: " + strconv.Itoa(len(body))}, []byte(body))
}

// crudObject decodes a 200 application/json object.
func crudObject(r *response) (map[string]any, string) {
	if !typeMatches(r.get("Content-Type"), "application/json") {
		return nil, describe(r) + " (expected Content-Type application/json)"
	}
	var obj map[string]any
	if err := decodeJSON(r.Body, &obj); err != nil {
		return nil, fmt.Sprintf("%s: not a JSON object: %v", describe(r), err)
	}
	return obj, ""
}

func crudListCheck(ctx context.Context, e *env) result {
	const cat, page, limit = "electronics", 1, 5
	raw := request("GET", fmt.Sprintf("/crud/items?category=%s&page=%d&limit=%d", cat, page, limit), nil, nil)
	sd, err := e.data.seed()
	total := 0
	if err == nil {
		for _, row := range sd.rows {
			if row.Category == cat {
				total++
			}
		}
	}
	exp := fmt.Sprintf(`200 application/json {"items": %d electronics rows, "total": %d, "page": %d, "limit": %d}`, limit, total, page, limit)
	if err != nil {
		return failed(show(raw), exp, "cannot check: "+err.Error())
	}
	r, err := exchange(ctx, e, "GET", raw)
	if err != nil {
		return failed(show(raw), exp, err.Error())
	}
	if r.Status != 200 {
		return failed(show(raw), exp, describe(r))
	}
	obj, problem := crudObject(r)
	if problem != "" {
		return failed(show(raw), exp, problem)
	}
	items, ok := obj["items"].([]any)
	if !ok || len(items) != limit {
		return failed(show(raw), exp, fmt.Sprintf("%s: items is %s", describe(r), jsonText(obj["items"])))
	}
	seen := map[int]bool{}
	for i, v := range items {
		row, err := sd.checkRow(v, fmt.Sprintf("items[%d]", i))
		if err != nil {
			return failed(show(raw), exp, describe(r)+": "+err.Error())
		}
		if row.Category != cat || seen[row.ID] {
			return failed(show(raw), exp, fmt.Sprintf("%s: items[%d] (id %d) is not another %s row", describe(r), i, row.ID, cat))
		}
		seen[row.ID] = true
	}
	for name, want := range map[string]int{"total": total, "page": page} {
		if n, err := intField(obj, name); err != nil || n != int64(want) {
			return failed(show(raw), exp, fmt.Sprintf("%s: %s is %s, want %d", describe(r), name, jsonText(obj[name]), want))
		}
	}
	return passed(show(raw), exp, describe(r))
}

// crudGet reads one item and checks it against the want row: "" or what is wrong.
func crudGet(ctx context.Context, s *session, id int, want dbRow, cache string) (raw []byte, problem string) {
	raw = request("GET", "/crud/items/"+strconv.Itoa(id), nil, nil)
	r, err := s.do(ctx, "GET", raw)
	if err != nil {
		return raw, err.Error()
	}
	if r.Status != 200 {
		return raw, describe(r)
	}
	obj, problem := crudObject(r)
	if problem != "" {
		return raw, problem
	}
	if err := want.equal(obj, "the item"); err != nil {
		return raw, describe(r) + ": " + err.Error()
	}
	if got := strings.ToUpper(strings.TrimSpace(r.get("X-Cache"))); cache != "" && got != cache {
		return raw, fmt.Sprintf("%s: X-Cache is %q, want %s", describe(r), r.get("X-Cache"), cache)
	}
	return raw, ""
}

func crudGetCheck(ctx context.Context, e *env, id int) result {
	req := "GET /crud/items/" + strconv.Itoa(id)
	exp := fmt.Sprintf("200 application/json with row %d of the table", id)
	sd, err := e.data.seed()
	if err != nil {
		return failed(req, exp, "cannot check: "+err.Error())
	}
	s := &session{e: e}
	defer s.close()
	if raw, problem := crudGet(ctx, s, id, sd.byID[id], ""); problem != "" {
		return failed(show(raw), exp, problem)
	}
	return passed(req, exp, "the row")
}

func crudCacheCheck(ctx context.Context, e *env) result {
	const id = 42
	req := "GET /crud/items/42, twice on one connection"
	const exp = "200 with row 42 both times, X-Cache: MISS then X-Cache: HIT"
	sd, err := e.data.seed()
	if err != nil {
		return failed(req, exp, "cannot check: "+err.Error())
	}
	s := &session{e: e}
	defer s.close()
	for i, cache := range []string{"MISS", "HIT"} {
		if raw, problem := crudGet(ctx, s, id, sd.byID[id], cache); problem != "" {
			return failed(fmt.Sprintf("read %d of 2: %s", i+1, show(raw)), exp, problem)
		}
	}
	return passed(req, exp, "MISS, then HIT")
}

// crudCreated is the row the create check writes (the arena's own validation values).
var crudCreated = dbRow{ID: 200001, Name: "ValidateItem", Category: "test", Price: 42, Quantity: 7}

func crudCreateCheck(ctx context.Context, e *env) result {
	w := crudCreated
	body := fmt.Sprintf(`{"id":%d,"name":%q,"category":%q,"price":%d,"quantity":%d}`, w.ID, w.Name, w.Category, w.Price, w.Quantity)
	raw := crudJSON("POST", "/crud/items", body)
	const exp = "201, then GET /crud/items/200001 → 200 with id 200001 and the written name, category, price and quantity"
	r, err := exchange(ctx, e, "POST", raw)
	if err != nil {
		return failed(show(raw), exp, err.Error())
	}
	if r.Status != 201 {
		return failed(show(raw), exp, describe(r))
	}
	s := &session{e: e}
	defer s.close()
	get := request("GET", "/crud/items/200001", nil, nil)
	g, err := s.do(ctx, "GET", get)
	if err != nil {
		return failed(show(get), exp, err.Error())
	}
	if problem := writtenFields(g, w); problem != "" {
		return failed(show(get), exp, problem)
	}
	return passed(show(raw), exp, "201, and the GET answers the written values")
}

// writtenFields checks a GET answer for the fields a write set.
func writtenFields(r *response, w dbRow) string {
	if r.Status != 200 {
		return describe(r)
	}
	obj, problem := crudObject(r)
	if problem != "" {
		return problem
	}
	for name, want := range map[string]any{
		"id": json.Number(strconv.Itoa(w.ID)), "name": w.Name, "category": w.Category,
		"price": json.Number(strconv.Itoa(w.Price)), "quantity": json.Number(strconv.Itoa(w.Quantity)),
	} {
		if !jsonEqual(obj[name], want) {
			return fmt.Sprintf("%s: %s is %s, want %s", describe(r), name, jsonText(obj[name]), jsonText(want))
		}
	}
	return ""
}

func crudUpdateCheck(ctx context.Context, e *env) result {
	const id = 7
	w := dbRow{ID: id, Name: "UpdatedItem", Category: "test", Price: 99, Quantity: 1}
	body := fmt.Sprintf(`{"name":%q,"category":%q,"price":%d,"quantity":%d}`, w.Name, w.Category, w.Price, w.Quantity)
	raw := crudJSON("PUT", "/crud/items/7", body)
	const exp = "GET (warms the cache), PUT → 200, then GET /crud/items/7 → 200 with X-Cache: MISS and the written values"
	sd, err := e.data.seed()
	if err != nil {
		return failed(show(raw), exp, "cannot check: "+err.Error())
	}
	s := &session{e: e}
	defer s.close()
	if get, problem := crudGet(ctx, s, id, sd.byID[id], ""); problem != "" {
		return failed("warming read: "+show(get), exp, problem)
	}
	r, err := s.do(ctx, "PUT", raw)
	if err != nil {
		return failed(show(raw), exp, err.Error())
	}
	if r.Status != 200 {
		return failed(show(raw), exp, describe(r))
	}
	get := request("GET", "/crud/items/7", nil, nil)
	g, err := s.do(ctx, "GET", get)
	if err != nil {
		return failed(show(get), exp, err.Error())
	}
	if problem := writtenFields(g, w); problem != "" {
		return failed("after the PUT: "+show(get), exp, problem)
	}
	if c := strings.ToUpper(strings.TrimSpace(g.get("X-Cache"))); c != "MISS" {
		return failed("after the PUT: "+show(get), exp, fmt.Sprintf("%s: X-Cache is %q: the cache still held the old row", describe(g), g.get("X-Cache")))
	}
	return passed(show(raw), exp, "200, then a MISS with the written values")
}
