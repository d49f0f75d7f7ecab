package main

import (
	"bytes"
	"context"
	_ "embed"
	"html/template"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// fortunesHTML is the page of GET /fortunes, a template executed for every request by
// html/template, which escapes each message as it writes it (standard mode: a real template
// engine, auto-escaping on).
//
//go:embed fortunes.html
var fortunesHTML string

var fortunesTemplate = template.Must(template.New("fortunes.html").Parse(fortunesHTML))

// Fortune is one row of the fortune table.
type Fortune struct {
	ID      int32
	Message string
}

// runtimeFortune is the row added to the table's at request time, id 0.
const runtimeFortune = "Additional fortune added at request time."

// fortunes reads the whole fortune table, in no order (no ORDER BY: the rows are sorted
// after the runtime row joins them).
func (s *store) fortunes(ctx context.Context) ([]Fortune, error) {
	rows, err := s.pool.Query(ctx, "SELECT id, message FROM fortune")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]Fortune, 0, 256)
	for rows.Next() {
		var f Fortune
		if err := rows.Scan(&f.ID, &f.Message); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// sortFortunes sorts by message in byte order: Go compares strings byte by byte, which is
// the ordinal order the profile asks for (no locale's collation).
func sortFortunes(fs []Fortune) {
	slices.SortFunc(fs, func(a, b Fortune) int { return strings.Compare(a.Message, b.Message) })
}

// renderFortunes writes the page of fs, in their order, to buf.
func renderFortunes(buf *bytes.Buffer, fs []Fortune) error {
	return fortunesTemplate.Execute(buf, fs)
}

// pages are buffers for rendered pages (about 30 KB each), reused across requests.
var pages = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// fortunesPage answers GET /fortunes: the table's rows and the runtime row, sorted by
// message, rendered per request.
func (s *server) fortunesPage(w http.ResponseWriter, r *http.Request) {
	if s.db == nil {
		http.Error(w, noDatabase, http.StatusServiceUnavailable)
		return
	}
	fs, err := s.db.fortunes(r.Context())
	if err != nil {
		dbError(w, err)
		return
	}
	fs = append(fs, Fortune{ID: 0, Message: runtimeFortune})
	sortFortunes(fs)
	buf := pages.Get().(*bytes.Buffer)
	defer pages.Put(buf)
	buf.Reset()
	if err := renderFortunes(buf, fs); err != nil {
		logError("template", err)
		http.Error(w, "template error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.Write(buf.Bytes())
}
