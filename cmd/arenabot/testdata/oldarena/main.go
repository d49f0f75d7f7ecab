// Command server is a fasthttp entry written the old arena's way: fasthttp's
// compression handler for /json, a plain fasthttp.FS for /static (files sent as
// they are, never their precompressed twins), no Vary header, and
// fasthttp's default request parser.
package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log"
	"mime"
	"os"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"
)

const (
	maxUploadBytes = 25 << 20 // the upload test sends up to 20 MB
	maxNumberBytes = 1 << 10  // a baseline body is one integer
)

type Rating struct {
	Score int `json:"score"`
	Count int `json:"count"`
}

type Item struct {
	ID       int      `json:"id"`
	Name     string   `json:"name"`
	Category string   `json:"category"`
	Price    int      `json:"price"`
	Quantity int      `json:"quantity"`
	Active   bool     `json:"active"`
	Tags     []string `json:"tags"`
	Rating   Rating   `json:"rating"`
}

type PricedItem struct {
	Item
	Total int `json:"total"`
}

type itemsResponse struct {
	Items []PricedItem `json:"items"`
	Count int          `json:"count"`
}

var (
	dataset []Item
	static  fasthttp.RequestHandler
	items   fasthttp.RequestHandler
)

func main() {
	// Go's built-in table has no web fonts, and the image has no /etc/mime.types.
	mime.AddExtensionType(".woff2", "font/woff2")
	mime.AddExtensionType(".woff", "font/woff")

	data, err := os.ReadFile(envOr("DATASET_PATH", "/data/dataset.json"))
	if err != nil {
		log.Printf("dataset not loaded: %v", err)
	} else if err := json.Unmarshal(data, &dataset); err != nil {
		log.Printf("dataset not loaded: %v", err)
		dataset = nil
	}

	fs := &fasthttp.FS{
		Root:        envOr("STATIC_DIR", "/data/static"),
		PathRewrite: fasthttp.NewPathSlashesStripper(1), // /static/x -> /x
	}
	static = fs.NewRequestHandler()
	compressed := fasthttp.CompressHandlerBrotliLevel(listItems,
		fasthttp.CompressBrotliDefaultCompression, fasthttp.CompressDefaultCompression)
	// As the old arena's entry did: the compressed answers say nothing of varying with
	// Accept-Encoding (this fasthttp's handler adds Vary itself).
	items = func(ctx *fasthttp.RequestCtx) {
		compressed(ctx)
		ctx.Response.Header.Del("Vary")
	}

	srv := &fasthttp.Server{
		Handler: handle,
		Name:    "fasthttp",
		// Bodies above MaxRequestBodySize are streamed to the handler.
		StreamRequestBody:  true,
		MaxRequestBodySize: 4 << 20,
		ReadTimeout:        60 * time.Second,
	}
	addr := "0.0.0.0:" + envOr("PORT", "8080")
	log.Printf("listening on %s", addr)
	log.Fatal(srv.ListenAndServe(addr))
}

func handle(ctx *fasthttp.RequestCtx) {
	path := ctx.Path()
	switch {
	case bytes.HasPrefix(path, []byte("/baseline")):
		baseline(ctx)
	case string(path) == "/pipeline":
		ctx.SetContentType("text/plain")
		ctx.SetBodyString("ok")
	case bytes.HasPrefix(path, []byte("/json/")):
		items(ctx)
	case string(path) == "/upload":
		upload(ctx)
	case bytes.HasPrefix(path, []byte("/static/")):
		static(ctx)
	default:
		ctx.Error("not found", fasthttp.StatusNotFound)
	}
}

// baseline answers the sum of the integer query values and, for a POST, the
// integer body (chunked or not).
func baseline(ctx *fasthttp.RequestCtx) {
	var sum int64
	for _, v := range ctx.QueryArgs().All() {
		if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			sum += n
		}
	}
	if ctx.IsPost() {
		body, err := io.ReadAll(io.LimitReader(ctx.RequestBodyStream(), maxNumberBytes+1))
		if err != nil || len(body) > maxNumberBytes {
			ctx.Error("bad request body", fasthttp.StatusBadRequest)
			return
		}
		if b := string(bytes.TrimSpace(body)); b != "" {
			n, err := strconv.ParseInt(b, 10, 64)
			if err != nil {
				ctx.Error("body is not an integer", fasthttp.StatusBadRequest)
				return
			}
			sum += n
		}
	}
	ctx.SetContentType("text/plain")
	ctx.SetBody(strconv.AppendInt(nil, sum, 10))
}

// listItems answers the first count dataset items, each with total = price *
// quantity * m.
func listItems(ctx *fasthttp.RequestCtx) {
	if dataset == nil {
		ctx.Error("dataset not loaded", fasthttp.StatusServiceUnavailable)
		return
	}
	count, err := strconv.Atoi(string(ctx.Path()[len("/json/"):]))
	if err != nil || count < 0 {
		ctx.Error("count must be a non-negative integer", fasthttp.StatusBadRequest)
		return
	}
	m := 1
	if v := ctx.QueryArgs().Peek("m"); len(v) > 0 {
		if m, err = strconv.Atoi(string(v)); err != nil {
			ctx.Error("m must be an integer", fasthttp.StatusBadRequest)
			return
		}
	}
	count = min(count, len(dataset))
	resp := itemsResponse{Items: make([]PricedItem, count), Count: count}
	for i, it := range dataset[:count] {
		resp.Items[i] = PricedItem{Item: it, Total: it.Price * it.Quantity * m}
	}
	body, err := json.Marshal(resp)
	if err != nil {
		ctx.Error(err.Error(), fasthttp.StatusInternalServerError)
		return
	}
	ctx.SetContentType("application/json")
	ctx.SetBody(body)
}

// upload answers the number of body bytes read.
func upload(ctx *fasthttp.RequestCtx) {
	n, err := io.Copy(io.Discard, io.LimitReader(ctx.RequestBodyStream(), maxUploadBytes+1))
	if err != nil {
		ctx.Error("cannot read request body", fasthttp.StatusBadRequest)
		return
	}
	if n > maxUploadBytes {
		ctx.Error("request body too large", fasthttp.StatusRequestEntityTooLarge)
		ctx.SetConnectionClose()
		return
	}
	ctx.SetContentType("text/plain")
	ctx.SetBody(strconv.AppendInt(nil, n, 10))
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
