package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"

	"github.com/valyala/fasthttp"
)

const noDatabase = "database not configured"

// dbContext is the context of the database and cache calls. A RequestCtx is
// not one to pass on: fasthttp reuses it once the handler returns, while pgx
// may still be watching the context it was given.
var dbContext = context.Background()

// asyncDB answers up to limit items whose price is between min and max.
func (s *server) asyncDB(ctx *fasthttp.RequestCtx) {
	if s.db == nil {
		ctx.Error(noDatabase, fasthttp.StatusServiceUnavailable)
		return
	}
	args := ctx.QueryArgs()
	lo, hi, limit := priceQuery(string(args.Peek("min")), string(args.Peek("max")), string(args.Peek("limit")))
	items, err := s.db.itemsByPrice(dbContext, lo, hi, limit)
	if err != nil {
		dbError(ctx, err)
		return
	}
	writeJSON(ctx, fasthttp.StatusOK, dbItemsResponse{Items: items, Count: len(items)})
}

// crudList answers one page of a category's items and the category's size.
func (s *server) crudList(ctx *fasthttp.RequestCtx) {
	if s.db == nil {
		ctx.Error(noDatabase, fasthttp.StatusServiceUnavailable)
		return
	}
	args := ctx.QueryArgs()
	page, limit := pageQuery(string(args.Peek("page")), string(args.Peek("limit")))
	items, total, err := s.db.page(dbContext, string(args.Peek("category")), page, limit)
	if err != nil {
		dbError(ctx, err)
		return
	}
	writeJSON(ctx, fasthttp.StatusOK, pageResponse{Items: items, Total: total, Page: page, Limit: limit})
}

// crudGet answers one item, saying in X-Cache whether it came from the cache.
func (s *server) crudGet(ctx *fasthttp.RequestCtx, idS string) {
	if s.db == nil {
		ctx.Error(noDatabase, fasthttp.StatusServiceUnavailable)
		return
	}
	id, ok := itemID(idS)
	if !ok {
		ctx.Error("id must be an integer", fasthttp.StatusBadRequest)
		return
	}
	body, hit, err := s.db.itemJSON(dbContext, id)
	if err != nil {
		dbError(ctx, err)
		return
	}
	if hit {
		ctx.Response.Header.Set("X-Cache", "HIT")
	} else {
		ctx.Response.Header.Set("X-Cache", "MISS")
	}
	ctx.SetContentType("application/json")
	ctx.SetBody(body)
}

// crudCreate inserts or replaces the item in the body and answers it, 201.
func (s *server) crudCreate(ctx *fasthttp.RequestCtx) {
	if s.db == nil {
		ctx.Error(noDatabase, fasthttp.StatusServiceUnavailable)
		return
	}
	body, ok := readItemBody(ctx)
	if !ok {
		return
	}
	in, err := decodeNewItem(body)
	if err != nil {
		dbError(ctx, err)
		return
	}
	it, err := s.db.upsert(dbContext, in)
	if err != nil {
		dbError(ctx, err)
		return
	}
	writeJSON(ctx, fasthttp.StatusCreated, it)
}

// crudUpdate changes the item's fields named in the body and answers the
// item.
func (s *server) crudUpdate(ctx *fasthttp.RequestCtx, idS string) {
	if s.db == nil {
		ctx.Error(noDatabase, fasthttp.StatusServiceUnavailable)
		return
	}
	id, ok := itemID(idS)
	if !ok {
		ctx.Error("id must be an integer", fasthttp.StatusBadRequest)
		return
	}
	body, ok := readItemBody(ctx)
	if !ok {
		return
	}
	in, err := decodeItemUpdate(body)
	if err != nil {
		dbError(ctx, err)
		return
	}
	it, err := s.db.update(dbContext, id, in)
	if err != nil {
		dbError(ctx, err)
		return
	}
	writeJSON(ctx, fasthttp.StatusOK, it)
}

// readItemBody reads a crud request body from the stream, answering 400 or
// 413 when it cannot.
func readItemBody(ctx *fasthttp.RequestCtx) ([]byte, bool) {
	body, err := io.ReadAll(io.LimitReader(ctx.RequestBodyStream(), maxItemBytes+1))
	switch {
	case err != nil:
		ctx.Error("cannot read request body", fasthttp.StatusBadRequest)
		return nil, false
	case len(body) > maxItemBytes:
		tooLarge(ctx)
		return nil, false
	}
	return body, true
}

// dbError answers a failed store call: 400 for bad input, 404 for a missing
// item, 503 or 500 for a failed query.
func dbError(ctx *fasthttp.RequestCtx, err error) {
	switch {
	case isInputError(err):
		ctx.Error(err.Error(), fasthttp.StatusBadRequest)
	case errors.Is(err, errNotFound):
		ctx.Error(err.Error(), fasthttp.StatusNotFound)
	default:
		status, msg := dbStatus(err)
		ctx.Error(msg, status)
	}
}

func writeJSON(ctx *fasthttp.RequestCtx, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		ctx.Error(err.Error(), fasthttp.StatusInternalServerError)
		return
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(body)
}
