// Command server is the arena's Go net/http entry: the standard library's
// server (HTTP/1.1, over TLS, h2 and h2c; listen.go) with gzip from klauspost/compress/gzhttp and precompressed
// static files, and Postgres (pgx) with a Redis or in-process item cache
// (go-redis) for /async-db and /crud, and /fortunes rendered with html/template.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log"
	"mime"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/klauspost/compress/gzhttp"
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
	db      *store // nil without DATABASE_URL: /async-db and /crud answer 503
}

func main() {
	// Go's built-in table lacks web fonts; a scratch image has no /etc/mime.types.
	mime.AddExtensionType(".woff2", "font/woff2")
	mime.AddExtensionType(".woff", "font/woff")

	s := &server{}
	datasetPath := envOr("DATASET_PATH", "/data/dataset.json")
	if items, err := loadDataset(datasetPath); err != nil {
		log.Printf("dataset not loaded, /json answers 503: %v", err)
	} else {
		s.dataset = items
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	s.db = openDatabase(ctx)

	err := listenAndServe(ctx, s.routes(envOr("STATIC_DIR", "/data/static"), envOr("LARGE_DIR", "/data/large")), envOr("PORT", "8080"))
	if s.db != nil {
		s.db.close()
	}
	if err != nil {
		log.Fatal(err)
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

func (s *server) routes(staticDir, largeDir string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /echo", echo)
	mux.HandleFunc("GET /ws", wsEcho)
	mux.HandleFunc("GET /delay/{ms}", delay)
	mux.Handle("GET /large/{file}", newLargeFiles(largeDir))
	mux.HandleFunc("GET /pipeline", pipeline)
	mux.Handle("GET /json/{count}", gzhttp.GzipHandler(http.HandlerFunc(s.items)))
	mux.HandleFunc("POST /upload", upload)
	mux.HandleFunc("GET /async-db", s.asyncDB)
	mux.HandleFunc("GET /crud/items", s.crudList)
	mux.HandleFunc("POST /crud/items", s.crudCreate)
	mux.HandleFunc("GET /crud/items/{id}", s.crudGet)
	mux.HandleFunc("PUT /crud/items/{id}", s.crudUpdate)
	mux.HandleFunc("GET /fortunes", s.fortunesPage)
	s.stackRoutes(mux)
	staticFS := os.DirFS(staticDir)
	mux.Handle("GET /static/", http.StripPrefix("/static", staticFiles{
		fsys: staticFS,
		next: http.FileServerFS(filesOnly{staticFS}),
	}))

	// Every path that starts with /baseline (/baseline11, /baseline2) sums;
	// ServeMux patterns match whole segments, so the prefix is routed here.
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/baseline") {
			baseline(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// baseline answers the sum of the integer query values and, for a POST, the
// integer body.
func baseline(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodPost {
		w.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	var sum int64
	for _, vs := range r.URL.Query() {
		for _, v := range vs {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				sum += n
			}
		}
	}
	if r.Method == http.MethodPost {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxNumberBytes))
		if err != nil {
			bodyError(w, err)
			return
		}
		if b := strings.TrimSpace(string(body)); b != "" {
			n, err := strconv.ParseInt(b, 10, 64)
			if err != nil {
				http.Error(w, "body is not an integer", http.StatusBadRequest)
				return
			}
			sum += n
		}
	}
	w.Header().Set("Content-Type", "text/plain")
	io.WriteString(w, strconv.FormatInt(sum, 10))
}

func pipeline(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	io.WriteString(w, "ok")
}

// items answers the first count dataset items, each with total = price *
// quantity * m.
func (s *server) items(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Vary", "Accept-Encoding")
	if s.dataset == nil {
		http.Error(w, "dataset not loaded", http.StatusServiceUnavailable)
		return
	}
	count, err := strconv.Atoi(r.PathValue("count"))
	if err != nil || count < 0 {
		http.Error(w, "count must be a non-negative integer", http.StatusBadRequest)
		return
	}
	m := 1
	if v := r.URL.Query().Get("m"); v != "" {
		if m, err = strconv.Atoi(v); err != nil {
			http.Error(w, "m must be an integer", http.StatusBadRequest)
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
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

// upload answers the number of body bytes read.
func upload(w http.ResponseWriter, r *http.Request) {
	n, err := io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, maxUploadBytes))
	if err != nil {
		bodyError(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	io.WriteString(w, strconv.FormatInt(n, 10))
}

func bodyError(w http.ResponseWriter, err error) {
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		return
	}
	http.Error(w, "cannot read request body", http.StatusBadRequest)
}

// filesOnly serves regular files only: a directory is reported missing, so
// the file server never lists one.
type filesOnly struct{ fsys fs.FS }

func (f filesOnly) Open(name string) (fs.File, error) {
	file, err := f.fsys.Open(name)
	if err != nil {
		return nil, err
	}
	if fi, err := file.Stat(); err != nil || !fi.Mode().IsRegular() {
		file.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return file, nil
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
