package main

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
)

const noDatabase = "database not configured"

// asyncDB answers up to limit items whose price is between min and max.
func (s *server) asyncDB(w http.ResponseWriter, r *http.Request) {
	if s.db == nil {
		http.Error(w, noDatabase, http.StatusServiceUnavailable)
		return
	}
	q := r.URL.Query()
	lo, hi, limit := priceQuery(q.Get("min"), q.Get("max"), q.Get("limit"))
	items, err := s.db.itemsByPrice(r.Context(), lo, hi, limit)
	if err != nil {
		dbError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, dbItemsResponse{Items: items, Count: len(items)})
}

// crudList answers one page of a category's items and the category's size.
func (s *server) crudList(w http.ResponseWriter, r *http.Request) {
	if s.db == nil {
		http.Error(w, noDatabase, http.StatusServiceUnavailable)
		return
	}
	q := r.URL.Query()
	page, limit := pageQuery(q.Get("page"), q.Get("limit"))
	items, total, err := s.db.page(r.Context(), q.Get("category"), page, limit)
	if err != nil {
		dbError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, pageResponse{Items: items, Total: total, Page: page, Limit: limit})
}

// crudGet answers one item, saying in X-Cache whether it came from the cache.
func (s *server) crudGet(w http.ResponseWriter, r *http.Request) {
	if s.db == nil {
		http.Error(w, noDatabase, http.StatusServiceUnavailable)
		return
	}
	id, ok := itemID(r.PathValue("id"))
	if !ok {
		http.Error(w, "id must be an integer", http.StatusBadRequest)
		return
	}
	body, hit, err := s.db.itemJSON(r.Context(), id)
	if err != nil {
		dbError(w, err)
		return
	}
	if hit {
		w.Header().Set("X-Cache", "HIT")
	} else {
		w.Header().Set("X-Cache", "MISS")
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

// crudCreate inserts or replaces the item in the body and answers it, 201.
func (s *server) crudCreate(w http.ResponseWriter, r *http.Request) {
	if s.db == nil {
		http.Error(w, noDatabase, http.StatusServiceUnavailable)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxItemBytes))
	if err != nil {
		bodyError(w, err)
		return
	}
	in, err := decodeNewItem(body)
	if err != nil {
		dbError(w, err)
		return
	}
	it, err := s.db.upsert(r.Context(), in)
	if err != nil {
		dbError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, it)
}

// crudUpdate changes the item's fields named in the body and answers the
// item.
func (s *server) crudUpdate(w http.ResponseWriter, r *http.Request) {
	if it, ok := s.updateItem(w, r); ok {
		writeJSON(w, http.StatusOK, it)
	}
}

// updateItem changes the fields the body of r names on the item of the path's
// id and returns it; when it cannot, it has answered w with why.
func (s *server) updateItem(w http.ResponseWriter, r *http.Request) (Item, bool) {
	if s.db == nil {
		http.Error(w, noDatabase, http.StatusServiceUnavailable)
		return Item{}, false
	}
	id, ok := itemID(r.PathValue("id"))
	if !ok {
		http.Error(w, "id must be an integer", http.StatusBadRequest)
		return Item{}, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxItemBytes))
	if err != nil {
		bodyError(w, err)
		return Item{}, false
	}
	in, err := decodeItemUpdate(body)
	if err != nil {
		dbError(w, err)
		return Item{}, false
	}
	it, err := s.db.update(r.Context(), id, in)
	if err != nil {
		dbError(w, err)
		return Item{}, false
	}
	return it, true
}

// dbError answers a failed store call: 400 for bad input, 404 for a missing
// item, 503 or 500 for a failed query.
func dbError(w http.ResponseWriter, err error) {
	switch {
	case isInputError(err):
		http.Error(w, err.Error(), http.StatusBadRequest)
	case errors.Is(err, errNotFound):
		http.Error(w, err.Error(), http.StatusNotFound)
	default:
		status, msg := dbStatus(err)
		http.Error(w, msg, status)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}
