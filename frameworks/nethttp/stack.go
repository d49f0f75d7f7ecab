package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/klauspost/compress/gzhttp"
)

// userTTL bounds how stale a cached /api/me answer can be (the arena allows 30 s).
const userTTL = 30 * time.Second

// userByID reads one row of the users table. It is not among the statements prepared on
// every connection, so a database without the table still serves the other routes.
const userByID = "SELECT id, name, email FROM users WHERE id = $1"

var errNoUser = errors.New("user not found")

// stackRoutes adds the production-stack profile's routes, which the entry serves behind
// that profile's edge: /public/ unauthenticated, /api/ after the edge's auth_request has
// checked the token and set X-User-Id to its subject.
func (s *server) stackRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /public/baseline", baseline)
	mux.Handle("GET /public/json/{count}", gzhttp.GzipHandler(http.HandlerFunc(s.items)))
	mux.HandleFunc("GET /api/items/{id}", s.crudGet) // cache-aside, X-Cache: HIT or MISS
	mux.HandleFunc("POST /api/items/{id}", s.apiUpdate)
	mux.HandleFunc("GET /api/me", s.apiMe)
}

// apiUpdate sets the item's name, price and quantity from the body, drops it from the
// cache and answers 204.
func (s *server) apiUpdate(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.updateItem(w, r); ok {
		w.WriteHeader(http.StatusNoContent)
	}
}

// apiMe answers the user the edge named in X-User-Id, from the users table.
func (s *server) apiMe(w http.ResponseWriter, r *http.Request) {
	id, ok := itemID(r.Header.Get("X-User-Id"))
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":"unauthorized"}`)
		return
	}
	if s.db == nil {
		http.Error(w, noDatabase, http.StatusServiceUnavailable)
		return
	}
	body, err := s.db.userJSON(r.Context(), id)
	if errors.Is(err, errNoUser) {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	} else if err != nil {
		dbError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

// User is one row of the users table.
type User struct {
	ID    int    `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

// userJSON answers the user's JSON, from the in-process cache when it is fresh.
func (s *store) userJSON(ctx context.Context, id int) ([]byte, error) {
	now := time.Now()
	if body, ok := s.users.get(id, now); ok {
		return body, nil
	}
	var u User
	err := s.pool.QueryRow(ctx, userByID, id).Scan(&u.ID, &u.Name, &u.Email)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errNoUser
	} else if err != nil {
		return nil, err
	}
	body, err := json.Marshal(u)
	if err != nil {
		return nil, err
	}
	s.users.set(id, body, now)
	return body, nil
}

// userCache holds users' JSON for userTTL; the zero value is empty and ready. The users
// table is a handful of rows, so nothing is swept.
type userCache struct {
	mu      sync.RWMutex
	entries map[int]memEntry
}

func (c *userCache) get(id int, now time.Time) ([]byte, bool) {
	c.mu.RLock()
	e, ok := c.entries[id]
	c.mu.RUnlock()
	if !ok || !now.Before(e.expires) {
		return nil, false
	}
	return e.body, true
}

func (c *userCache) set(id int, body []byte, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[int]memEntry{}
	}
	c.entries[id] = memEntry{body: body, expires: now.Add(userTTL)}
}
