// Command server is the arena's Gin entry: gin-gonic/gin on net/http (HTTP/1.1,
// over TLS, h2 and h2c; listen.go) with gin-contrib/gzip and precompressed static
// files.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"mime"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/gin-contrib/gzip"
	"github.com/gin-gonic/gin"
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

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := listenAndServe(ctx, s.router(envOr("STATIC_DIR", "/data/static"), envOr("LARGE_DIR", "/data/large")), envOr("PORT", "8080")); err != nil {
		log.Fatal(err)
	}
}

func (s *server) router(staticDir, largeDir string) *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Use(gin.Recovery())
	r.HandleMethodNotAllowed = true

	r.GET("/pipeline", func(c *gin.Context) {
		c.Data(http.StatusOK, "text/plain", []byte("ok"))
	})
	for _, p := range []string{"/baseline11", "/baseline2"} {
		r.GET(p, baseline)
		r.POST(p, baseline)
	}
	r.GET("/json/:count", gzip.Gzip(gzip.DefaultCompression), s.listItems)
	r.POST("/upload", upload)
	r.POST("/echo", echo)
	r.GET("/delay/:ms", delay)
	r.GET("/large/:file", newLargeFiles(largeDir).serve)
	// Files are read on every request and directories are not listed; a
	// precompressed twin is sent when the client accepts its coding.
	r.Group("/static", precompressed(os.DirFS(staticDir))).Static("", staticDir)

	// The router matches whole segments; any other path that starts with
	// /baseline sums too.
	r.NoRoute(func(c *gin.Context) {
		if !strings.HasPrefix(c.Request.URL.Path, "/baseline") {
			c.String(http.StatusNotFound, "not found")
			return
		}
		switch c.Request.Method {
		case http.MethodGet, http.MethodPost:
			baseline(c)
		default:
			c.Header("Allow", "GET, POST")
			c.String(http.StatusMethodNotAllowed, "method not allowed")
		}
	})
	return r
}

// baseline answers the sum of the integer query values and, for a POST, the
// integer body.
func baseline(c *gin.Context) {
	var sum int64
	for _, vs := range c.Request.URL.Query() {
		for _, v := range vs {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				sum += n
			}
		}
	}
	if c.Request.Method == http.MethodPost {
		body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, maxNumberBytes))
		if err != nil {
			bodyError(c, err)
			return
		}
		if b := strings.TrimSpace(string(body)); b != "" {
			n, err := strconv.ParseInt(b, 10, 64)
			if err != nil {
				c.String(http.StatusBadRequest, "body is not an integer")
				return
			}
			sum += n
		}
	}
	c.Data(http.StatusOK, "text/plain", strconv.AppendInt(nil, sum, 10))
}

// listItems answers the first count dataset items, each with total = price *
// quantity * m.
func (s *server) listItems(c *gin.Context) {
	c.Header("Vary", "Accept-Encoding")
	if s.dataset == nil {
		c.String(http.StatusServiceUnavailable, "dataset not loaded")
		return
	}
	count, err := strconv.Atoi(c.Param("count"))
	if err != nil || count < 0 {
		c.String(http.StatusBadRequest, "count must be a non-negative integer")
		return
	}
	m := 1
	if v := c.Query("m"); v != "" {
		if m, err = strconv.Atoi(v); err != nil {
			c.String(http.StatusBadRequest, "m must be an integer")
			return
		}
	}
	count = min(count, len(s.dataset))
	resp := itemsResponse{Items: make([]PricedItem, count), Count: count}
	for i, it := range s.dataset[:count] {
		resp.Items[i] = PricedItem{Item: it, Total: it.Price * it.Quantity * m}
	}
	c.JSON(http.StatusOK, resp)
}

// upload answers the number of body bytes read.
func upload(c *gin.Context) {
	n, err := io.Copy(io.Discard, http.MaxBytesReader(c.Writer, c.Request.Body, maxUploadBytes))
	if err != nil {
		bodyError(c, err)
		return
	}
	c.Data(http.StatusOK, "text/plain", strconv.AppendInt(nil, n, 10))
}

func bodyError(c *gin.Context, err error) {
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		c.String(http.StatusRequestEntityTooLarge, "request body too large")
		return
	}
	c.String(http.StatusBadRequest, "cannot read request body")
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
