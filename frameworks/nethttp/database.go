package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"math"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

const (
	maxItemBytes = 64 << 10 // a crud body is one small item

	defaultMin, defaultMax, defaultLimit = 10, 50, 50 // /async-db
	defaultPageLimit                     = 10         // /crud/items
	maxLimit                             = 50
	maxPage                              = 1 << 30 // keeps the OFFSET well inside a bigint
)

var errNotFound = errors.New("item not found")

// inputError is a request body that is not what the route takes; its text is
// the answer.
type inputError string

func (e inputError) Error() string { return string(e) }

func isInputError(err error) bool {
	_, ok := errors.AsType[inputError](err)
	return ok
}

const itemColumns = "id, name, category, price, quantity, active, tags, rating_score, rating_count"

// statements are prepared on every new connection and run by name.
var statements = map[string]string{
	"by_price":       "SELECT " + itemColumns + " FROM items WHERE price BETWEEN $1 AND $2 LIMIT $3",
	"by_id":          "SELECT " + itemColumns + " FROM items WHERE id = $1",
	"by_category":    "SELECT " + itemColumns + " FROM items WHERE category = $1 ORDER BY id LIMIT $2 OFFSET $3",
	"count_category": "SELECT count(*) FROM items WHERE category = $1",
	"upsert": "INSERT INTO items (" + itemColumns + ") VALUES ($1, $2, $3, $4, $5, true, '[]', 0, 0) " +
		"ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, category = EXCLUDED.category, " +
		"price = EXCLUDED.price, quantity = EXCLUDED.quantity RETURNING " + itemColumns,
	"update": "UPDATE items SET name = COALESCE($2, name), category = COALESCE($3, category), " +
		"price = COALESCE($4, price), quantity = COALESCE($5, quantity) WHERE id = $1 RETURNING " + itemColumns,
}

// store is the Postgres pool behind /async-db and /crud, with the item cache
// in front of the reads by id.
type store struct {
	pool  *pgxpool.Pool
	cache itemCache
	users userCache // /api/me
}

// openStore makes the pool without connecting: connections are opened, and
// the statements prepared on them, when a request or warm first needs one,
// so a database that is not up yet does not stop the server.
func openStore(databaseURL, maxConn string, cache itemCache) (*store, error) {
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = poolSize(maxConn, runtime.NumCPU())
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	}
	cfg.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
		for name, sql := range statements {
			if _, err := conn.Prepare(ctx, name, sql); err != nil {
				return fmt.Errorf("prepare %s: %w", name, err)
			}
		}
		return nil
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, err
	}
	return &store{pool: pool, cache: cache}, nil
}

// poolSize is four connections per CPU, but no more than the database
// accepts (maxConn, DATABASE_MAX_CONN) less a sixteenth left for its other
// clients; at least one.
func poolSize(maxConn string, cpus int) int32 {
	n := 4 * cpus
	if m, err := strconv.Atoi(maxConn); err == nil && m > 0 {
		n = min(n, m-m/16)
	}
	return int32(min(max(n, 1), math.MaxInt32))
}

// warm pings the database until it answers, retrying with backoff for up to
// two minutes, and logs the outcome. Requests retry on their own either way.
func (s *store) warm(ctx context.Context) {
	deadline := time.Now().Add(2 * time.Minute)
	for delay := 100 * time.Millisecond; ; delay = min(2*delay, 2*time.Second) {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := s.pool.Ping(pctx)
		cancel()
		switch {
		case err == nil:
			log.Printf("database ready (pool of %d connections)", s.pool.Config().MaxConns)
			return
		case ctx.Err() != nil:
			return
		case time.Now().After(deadline):
			log.Printf("database not reachable yet, requests will retry: %v", err)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
	}
}

func (s *store) close() {
	s.pool.Close()
	s.cache.close()
}

func scanItem(row pgx.Row) (Item, error) {
	var it Item
	err := row.Scan(&it.ID, &it.Name, &it.Category, &it.Price, &it.Quantity, &it.Active,
		&it.Tags, &it.Rating.Score, &it.Rating.Count)
	if it.Tags == nil {
		it.Tags = []string{}
	}
	return it, err
}

func collectItems(rows pgx.Rows, capacity int) ([]Item, error) {
	defer rows.Close()
	items := make([]Item, 0, capacity)
	for rows.Next() {
		it, err := scanItem(rows)
		if err != nil {
			return nil, err
		}
		items = append(items, it)
	}
	return items, rows.Err()
}

// itemsByPrice answers up to limit items whose price is in [lo, hi].
func (s *store) itemsByPrice(ctx context.Context, lo, hi, limit int) ([]Item, error) {
	rows, err := s.pool.Query(ctx, "by_price", lo, hi, limit)
	if err != nil {
		return nil, err
	}
	return collectItems(rows, limit)
}

// page answers one page of the items of a category, ordered by id, and the
// number of items in the category, in one round trip.
func (s *store) page(ctx context.Context, category string, page, limit int) ([]Item, int, error) {
	b := &pgx.Batch{}
	b.Queue("count_category", category)
	b.Queue("by_category", category, limit, int64(page-1)*int64(limit))
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	var total int
	if err := br.QueryRow().Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := br.Query()
	if err != nil {
		return nil, 0, err
	}
	items, err := collectItems(rows, limit)
	if err != nil {
		return nil, 0, err
	}
	return items, total, br.Close()
}

// itemJSON answers the item's JSON from the cache (hit) or from Postgres,
// caching it then; errNotFound when there is no such item.
func (s *store) itemJSON(ctx context.Context, id int) (body []byte, hit bool, err error) {
	if body, ok := s.cache.get(ctx, id); ok {
		return body, true, nil
	}
	it, err := scanItem(s.pool.QueryRow(ctx, "by_id", id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, errNotFound
	} else if err != nil {
		return nil, false, err
	}
	if body, err = json.Marshal(it); err != nil {
		return nil, false, err
	}
	s.cache.set(ctx, id, body)
	return body, false, nil
}

// newItem is the body of POST /crud/items.
type newItem struct {
	ID       int32  `json:"id"`
	Name     string `json:"name"`
	Category string `json:"category"`
	Price    int32  `json:"price"`
	Quantity int32  `json:"quantity"`
}

// itemUpdate is the body of PUT /crud/items/{id}; a field left out keeps its
// value.
type itemUpdate struct {
	Name     *string `json:"name"`
	Category *string `json:"category"`
	Price    *int32  `json:"price"`
	Quantity *int32  `json:"quantity"`
}

func decodeNewItem(body []byte) (newItem, error) {
	var in newItem
	if err := json.Unmarshal(body, &in); err != nil {
		return in, inputError("body is not an item")
	}
	if in.ID < 1 {
		return in, inputError("id must be a positive integer")
	}
	return in, nil
}

func decodeItemUpdate(body []byte) (itemUpdate, error) {
	var in itemUpdate
	if err := json.Unmarshal(body, &in); err != nil {
		return in, inputError("body is not an item")
	}
	return in, nil
}

// upsert inserts the item, or replaces the name, category, price and
// quantity of the one with its id, and drops the id from the cache.
func (s *store) upsert(ctx context.Context, in newItem) (Item, error) {
	it, err := scanItem(s.pool.QueryRow(ctx, "upsert", in.ID, in.Name, in.Category, in.Price, in.Quantity))
	if err != nil {
		return Item{}, err
	}
	s.cache.drop(ctx, it.ID)
	return it, nil
}

// update changes the item's fields that in names and drops the id from the
// cache; errNotFound when there is no such item.
func (s *store) update(ctx context.Context, id int, in itemUpdate) (Item, error) {
	it, err := scanItem(s.pool.QueryRow(ctx, "update", id, in.Name, in.Category, in.Price, in.Quantity))
	if errors.Is(err, pgx.ErrNoRows) {
		return Item{}, errNotFound
	} else if err != nil {
		return Item{}, err
	}
	s.cache.drop(ctx, id)
	return it, nil
}

// itemID parses an item id: a decimal integer in Postgres's integer range.
func itemID(s string) (int, bool) {
	n, err := strconv.ParseInt(s, 10, 32)
	return int(n), err == nil
}

// intParam is the decimal integer s, or def when s is empty or not one.
func intParam(s string, def int) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	return def
}

func clamp(n, lo, hi int) int { return min(max(n, lo), hi) }

// priceQuery reads /async-db's min, max and limit: defaults 10, 50 and 50,
// limit clamped to 1..50, prices to Postgres's integer range.
func priceQuery(minS, maxS, limitS string) (lo, hi, limit int) {
	lo = clamp(intParam(minS, defaultMin), math.MinInt32, math.MaxInt32)
	hi = clamp(intParam(maxS, defaultMax), math.MinInt32, math.MaxInt32)
	limit = clamp(intParam(limitS, defaultLimit), 1, maxLimit)
	return lo, hi, limit
}

// pageQuery reads /crud/items's page (1-based, default 1) and limit (1..50,
// default 10).
func pageQuery(pageS, limitS string) (page, limit int) {
	return clamp(intParam(pageS, 1), 1, maxPage), clamp(intParam(limitS, defaultPageLimit), 1, maxLimit)
}

// dbStatus is the status for a failed query: 503 when no connection could be
// made, 500 otherwise.
func dbStatus(err error) (int, string) {
	logError("database", err)
	if _, ok := errors.AsType[*pgconn.ConnectError](err); ok {
		return 503, "database unavailable"
	}
	return 500, "database error"
}

var lastErrorLog atomic.Int64

// logError logs a failed database or cache call, at most one a second; a
// call cut short by the client going away is not logged.
func logError(what string, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	now, last := time.Now().UnixNano(), lastErrorLog.Load()
	if now-last < int64(time.Second) || !lastErrorLog.CompareAndSwap(last, now) {
		return
	}
	log.Printf("%s: %v", what, err)
}

type dbItemsResponse struct {
	Items []Item `json:"items"`
	Count int    `json:"count"`
}

type pageResponse struct {
	Items []Item `json:"items"`
	Total int    `json:"total"`
	Page  int    `json:"page"`
	Limit int    `json:"limit"`
}
