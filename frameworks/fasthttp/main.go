// Command server is the arena's fasthttp entry: valyala/fasthttp (HTTP/1.1,
// and over TLS on 8081) with its
// own compression handler and file server, which sends precompressed static
// files, and Postgres (pgx) with a Redis or in-process item cache (go-redis)
// for /async-db and /crud, and /fortunes rendered with html/template.
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log"
	"mime"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"
)

const (
	maxUploadBytes = 25 << 20 // the upload profile sends up to 20 MB
	maxNumberBytes = 1 << 10  // a baseline body is one integer
)

type Rating struct {
	Score int `json:"score"`
	Count int `json:"count"`
}

// Item is one element of the dataset.
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

// PricedItem is an Item with its total for one request.
type PricedItem struct {
	Item
	Total int `json:"total"`
}

type itemsResponse struct {
	Items []PricedItem `json:"items"`
	Count int          `json:"count"`
}

type server struct {
	dataset []Item // nil when the dataset could not be loaded
	static  fasthttp.RequestHandler
	items   fasthttp.RequestHandler
	large   *largeFiles
	db      *store // nil without DATABASE_URL: /async-db and /crud answer 503
}

func main() {
	// Go's built-in table lacks web fonts; a scratch image has no /etc/mime.types.
	mime.AddExtensionType(".woff2", "font/woff2")
	mime.AddExtensionType(".woff", "font/woff")

	s := &server{}
	if items, err := loadDataset(envOr("DATASET_PATH", "/data/dataset.json")); err != nil {
		log.Printf("dataset not loaded, /json answers 503: %v", err)
	} else {
		s.dataset = items
	}
	static := &fasthttp.FS{
		// Files are opened through an fs.FS rather than Root: FS then never
		// writes compressed copies next to the files (the mount is
		// read-only), and compresses a file that has no twin in memory.
		FS:          os.DirFS(envOr("STATIC_DIR", "/data/static")),
		PathRewrite: fasthttp.NewPathSlashesStripper(1), // /static/x -> /x
		SkipCache:   true,                               // read from disk on every request
		// When the client accepts br or gzip (q > 0), send the precompressed
		// twin x.br or x.gz, with the Content-Type of x. FS takes the map only
		// when it names all three codings.
		Compress:               true,
		CompressBrotli:         true,
		CompressedFileSuffixes: map[string]string{"br": ".br", "gzip": ".gz", "zstd": ".zst"},
	}
	s.static = static.NewRequestHandler()
	s.large = newLargeFiles(envOr("LARGE_DIR", "/data/large"))
	s.items = fasthttp.CompressHandlerBrotliLevel(s.listItems,
		fasthttp.CompressBrotliDefaultCompression, fasthttp.CompressDefaultCompression)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	s.db = openDatabase(ctx)

	newServer := func() *fasthttp.Server {
		return &fasthttp.Server{
			Handler: s.handle,
			Name:    "fasthttp",
			// Bodies above MaxRequestBodySize are streamed to the handler
			// instead of being buffered; /upload reads them as a stream.
			StreamRequestBody:  true,
			MaxRequestBodySize: 4 << 20,
			ReadTimeout:        60 * time.Second,
			IdleTimeout:        120 * time.Second,
		}
	}
	// 8080 speaks HTTP/1.1; 8081 HTTP/1.1 over TLS with the arena's pair (ALPN
	// http/1.1). fasthttp has no HTTP/2, so 8443 and 8082 stay closed.
	srv, tlsSrv := newServer(), newServer()
	tlsSrv.TLSConfig = &tls.Config{NextProtos: []string{"http/1.1"}}
	errc := make(chan error, 2)
	addr := "0.0.0.0:" + envOr("PORT", "8080")
	go func() { errc <- srv.ListenAndServe(addr) }()
	log.Printf("listening on %s", addr)
	cert, key := envOr("TLS_CERT", "/certs/server.crt"), envOr("TLS_KEY", "/certs/server.key")
	if _, err := tls.LoadX509KeyPair(cert, key); err != nil {
		log.Printf("TLS pair not loaded, 8081 stays closed: %v", err)
	} else {
		go func() { errc <- tlsSrv.ListenAndServeTLS("0.0.0.0:8081", cert, key) }()
		log.Printf("listening on 0.0.0.0:8081 (TLS)")
	}
	select {
	case err := <-errc:
		log.Fatal(err)
	case <-ctx.Done():
	}
	// Finish the requests in flight, but not for longer than a stop allows.
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	for _, srv := range []*fasthttp.Server{srv, tlsSrv} {
		if err := srv.ShutdownWithContext(shutdownCtx); err != nil {
			log.Printf("shutdown: %v", err)
		}
	}
	if s.db != nil {
		s.db.close()
	}
}

// openDatabase opens the store from DATABASE_URL, DATABASE_MAX_CONN and
// REDIS_URL and warms it in the background; nil without DATABASE_URL or when
// it cannot be parsed.
func openDatabase(ctx context.Context) *store {
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		log.Printf("DATABASE_URL not set, /async-db and /crud answer 503")
		return nil
	}
	cache, err := newCache(os.Getenv("REDIS_URL"))
	if err != nil {
		log.Printf("REDIS_URL not usable, caching in process: %v", err)
		cache = newMemCache()
	}
	db, err := openStore(url, os.Getenv("DATABASE_MAX_CONN"), cache)
	if err != nil {
		log.Printf("DATABASE_URL not usable, /async-db and /crud answer 503: %v", err)
		cache.close()
		return nil
	}
	go db.warm(ctx)
	return db
}

func (s *server) handle(ctx *fasthttp.RequestCtx) {
	path := ctx.Path()
	switch {
	case bytes.HasPrefix(path, []byte("/baseline")):
		if allow(ctx, fasthttp.MethodGet, fasthttp.MethodHead, fasthttp.MethodPost) {
			baseline(ctx)
		}
	case string(path) == "/pipeline":
		if allow(ctx, fasthttp.MethodGet, fasthttp.MethodHead) {
			ctx.SetContentType("text/plain")
			ctx.SetBodyString("ok")
		}
	case bytes.HasPrefix(path, []byte("/json/")):
		if allow(ctx, fasthttp.MethodGet, fasthttp.MethodHead) {
			s.items(ctx)
		}
	case string(path) == "/upload":
		if allow(ctx, fasthttp.MethodPost) {
			upload(ctx)
		}
	case string(path) == "/async-db":
		if allow(ctx, fasthttp.MethodGet, fasthttp.MethodHead) {
			s.asyncDB(ctx)
		}
	case string(path) == "/crud/items":
		if allow(ctx, fasthttp.MethodGet, fasthttp.MethodHead, fasthttp.MethodPost) {
			if ctx.IsPost() {
				s.crudCreate(ctx)
			} else {
				s.crudList(ctx)
			}
		}
	case bytes.HasPrefix(path, []byte("/crud/items/")):
		if allow(ctx, fasthttp.MethodGet, fasthttp.MethodHead, fasthttp.MethodPut) {
			id := string(path[len("/crud/items/"):])
			if ctx.IsPut() {
				s.crudUpdate(ctx, id)
			} else {
				s.crudGet(ctx, id)
			}
		}
	case string(path) == "/fortunes":
		if allow(ctx, fasthttp.MethodGet, fasthttp.MethodHead) {
			s.fortunesPage(ctx)
		}
	case bytes.HasPrefix(path, []byte("/static/")):
		if allow(ctx, fasthttp.MethodGet, fasthttp.MethodHead) {
			// FS adds Vary only to compressed answers; the plain ones vary too.
			ctx.Response.Header.Set("Vary", "Accept-Encoding")
			s.static(ctx)
		}
	case string(path) == "/echo":
		if allow(ctx, fasthttp.MethodPost) {
			echo(ctx)
		}
	case bytes.HasPrefix(path, []byte("/delay/")):
		if allow(ctx, fasthttp.MethodGet, fasthttp.MethodHead) {
			delay(ctx, string(path[len("/delay/"):]))
		}
	case bytes.HasPrefix(path, []byte("/large/")):
		if allow(ctx, fasthttp.MethodGet, fasthttp.MethodHead) {
			s.large.serve(ctx, string(path[len("/large/"):]))
		}
	default:
		ctx.Error("not found", fasthttp.StatusNotFound)
	}
}

// allow answers 405 unless the request method is one of methods.
func allow(ctx *fasthttp.RequestCtx, methods ...string) bool {
	for _, m := range methods {
		if string(ctx.Method()) == m {
			return true
		}
	}
	ctx.Response.Header.Set("Allow", strings.Join(methods, ", "))
	ctx.Error("method not allowed", fasthttp.StatusMethodNotAllowed)
	return false
}

// baseline answers the sum of the integer query values and, for a POST, the
// integer body.
func baseline(ctx *fasthttp.RequestCtx) {
	var sum int64
	for _, v := range ctx.QueryArgs().All() {
		if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			sum += n
		}
	}
	if ctx.IsPost() {
		body, err := io.ReadAll(io.LimitReader(ctx.RequestBodyStream(), maxNumberBytes+1))
		switch {
		case err != nil:
			ctx.Error("cannot read request body", fasthttp.StatusBadRequest)
			return
		case len(body) > maxNumberBytes:
			tooLarge(ctx)
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
// quantity * m. It runs inside the compression handler.
func (s *server) listItems(ctx *fasthttp.RequestCtx) {
	ctx.Response.Header.Set("Vary", "Accept-Encoding")
	if s.dataset == nil {
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
	count = min(count, len(s.dataset))
	resp := itemsResponse{Items: make([]PricedItem, count), Count: count}
	for i, it := range s.dataset[:count] {
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

// upload answers the number of body bytes read from the request stream.
func upload(ctx *fasthttp.RequestCtx) {
	n, err := io.Copy(io.Discard, io.LimitReader(ctx.RequestBodyStream(), maxUploadBytes+1))
	switch {
	case err != nil:
		ctx.Error("cannot read request body", fasthttp.StatusBadRequest)
		return
	case n > maxUploadBytes:
		tooLarge(ctx)
		return
	}
	ctx.SetContentType("text/plain")
	ctx.SetBody(strconv.AppendInt(nil, n, 10))
}

// tooLarge answers 413 and closes the connection rather than read the rest.
func tooLarge(ctx *fasthttp.RequestCtx) {
	ctx.Error("request body too large", fasthttp.StatusRequestEntityTooLarge)
	ctx.SetConnectionClose()
}

func loadDataset(path string) ([]Item, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	items := []Item{}
	if err := json.Unmarshal(data, &items); err != nil {
		return nil, err
	}
	return items, nil
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
