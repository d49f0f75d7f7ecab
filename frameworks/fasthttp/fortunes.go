package main

import (
	"context"
	_ "embed"
	"html/template"
	"io"
	"slices"
	"strings"

	"github.com/valyala/fasthttp"
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

// renderFortunes writes the page of fs, in their order, to w.
func renderFortunes(w io.Writer, fs []Fortune) error {
	return fortunesTemplate.Execute(w, fs)
}

// fortunesPage answers GET /fortunes: the table's rows and the runtime row, sorted by
// message, rendered per request into the response body (fasthttp sends it with its length).
func (s *server) fortunesPage(ctx *fasthttp.RequestCtx) {
	if s.db == nil {
		ctx.Error(noDatabase, fasthttp.StatusServiceUnavailable)
		return
	}
	fs, err := s.db.fortunes(dbContext)
	if err != nil {
		dbError(ctx, err)
		return
	}
	fs = append(fs, Fortune{ID: 0, Message: runtimeFortune})
	sortFortunes(fs)
	if err := renderFortunes(ctx, fs); err != nil {
		logError("template", err)
		ctx.Error("template error", fasthttp.StatusInternalServerError)
		return
	}
	ctx.SetContentType("text/html; charset=utf-8")
}
