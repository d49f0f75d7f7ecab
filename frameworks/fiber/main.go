// Command server is the arena's Fiber entry: gofiber/fiber v2 (HTTP/1.1, and over
// TLS on 8081) with its compress and filesystem middleware, and precompressed
// static files.
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/compress"
	"github.com/gofiber/fiber/v2/middleware/filesystem"
	"github.com/gofiber/fiber/v2/middleware/recover"
)

const (
	maxUploadBytes = 25 << 20 // the upload profile sends up to 20 MB
	maxNumberBytes = 1 << 10  // a baseline body is one integer
)

var errTooLarge = fiber.NewError(fiber.StatusRequestEntityTooLarge, "request body too large")

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
	s := &server{}
	if items, err := loadDataset(envOr("DATASET_PATH", "/data/dataset.json")); err != nil {
		log.Printf("dataset not loaded, /json answers 503: %v", err)
	} else {
		s.dataset = items
	}

	app := fiber.New(fiber.Config{
		DisableStartupMessage: true,
		// Bodies above BodyLimit are streamed to the handler instead of
		// being buffered; /upload reads them as a stream.
		StreamRequestBody: true,
		BodyLimit:         4 << 20,
		ReadTimeout:       60 * time.Second,
		IdleTimeout:       120 * time.Second,
	})
	app.Use(recover.New())

	app.Get("/pipeline", func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, fiber.MIMETextPlain)
		return c.SendString("ok")
	})
	// Every path that starts with /baseline (/baseline11, /baseline2) sums.
	app.Get("/baseline*", baseline)
	app.Post("/baseline*", baseline)
	app.Get("/json/:count", compress.New(), s.listItems)
	app.Post("/upload", upload)
	newerRoutes(app, envOr("LARGE_DIR", "/data/large"))
	// Files are opened on every request; directories are not listed (403).
	// A precompressed twin is sent when the client accepts its coding.
	staticDir := envOr("STATIC_DIR", "/data/static")
	app.Use("/static",
		precompressed("/static", os.DirFS(staticDir)),
		filesystem.New(filesystem.Config{Root: http.Dir(staticDir)}))

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	// 8080 speaks HTTP/1.1; 8081 HTTP/1.1 over TLS with the arena's pair (ALPN
	// http/1.1), served by the same fasthttp server. Fiber v2 (fasthttp) has no
	// HTTP/2, so 8443 and 8082 stay closed.
	errc := make(chan error, 2)
	addr := "0.0.0.0:" + envOr("PORT", "8080")
	ln, err := net.Listen("tcp4", addr)
	if err != nil {
		log.Fatal(err)
	}
	app.Handler() // builds the routes once, before either listener serves
	srv := app.Server()
	go func() { errc <- srv.Serve(ln) }()
	log.Printf("listening on %s", addr)
	if cert, err := tls.LoadX509KeyPair(envOr("TLS_CERT", "/certs/server.crt"), envOr("TLS_KEY", "/certs/server.key")); err != nil {
		log.Printf("TLS pair not loaded, 8081 stays closed: %v", err)
	} else if tln, err := net.Listen("tcp4", "0.0.0.0:8081"); err != nil {
		log.Fatal(err)
	} else {
		cfg := &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"http/1.1"}}
		go func() { errc <- srv.Serve(tls.NewListener(tln, cfg)) }()
		log.Printf("listening on 0.0.0.0:8081 (TLS)")
	}
	select {
	case err := <-errc:
		log.Fatal(err)
	case <-ctx.Done():
	}
	// Finish the requests in flight, but not for longer than a stop allows.
	if err := app.ShutdownWithTimeout(3 * time.Second); err != nil {
		log.Printf("shutdown: %v", err)
	}
}

// baseline answers the sum of the integer query values and, for a POST, the
// integer body.
func baseline(c *fiber.Ctx) error {
	var sum int64
	c.Context().QueryArgs().VisitAll(func(_, v []byte) {
		if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			sum += n
		}
	})
	if c.Method() == fiber.MethodPost {
		body, err := io.ReadAll(io.LimitReader(c.Context().RequestBodyStream(), maxNumberBytes+1))
		switch {
		case err != nil:
			return fiber.NewError(fiber.StatusBadRequest, "cannot read request body")
		case len(body) > maxNumberBytes:
			return errTooLarge
		}
		if b := string(bytes.TrimSpace(body)); b != "" {
			n, err := strconv.ParseInt(b, 10, 64)
			if err != nil {
				return fiber.NewError(fiber.StatusBadRequest, "body is not an integer")
			}
			sum += n
		}
	}
	c.Set(fiber.HeaderContentType, fiber.MIMETextPlain)
	return c.SendString(strconv.FormatInt(sum, 10))
}

// listItems answers the first count dataset items, each with total = price *
// quantity * m.
func (s *server) listItems(c *fiber.Ctx) error {
	c.Vary(fiber.HeaderAcceptEncoding)
	if s.dataset == nil {
		return fiber.NewError(fiber.StatusServiceUnavailable, "dataset not loaded")
	}
	count, err := strconv.Atoi(c.Params("count"))
	if err != nil || count < 0 {
		return fiber.NewError(fiber.StatusBadRequest, "count must be a non-negative integer")
	}
	m := 1
	if v := c.Query("m"); v != "" {
		if m, err = strconv.Atoi(v); err != nil {
			return fiber.NewError(fiber.StatusBadRequest, "m must be an integer")
		}
	}
	count = min(count, len(s.dataset))
	resp := itemsResponse{Items: make([]PricedItem, count), Count: count}
	for i, it := range s.dataset[:count] {
		resp.Items[i] = PricedItem{Item: it, Total: it.Price * it.Quantity * m}
	}
	return c.JSON(resp)
}

// upload answers the number of body bytes read from the request stream.
func upload(c *fiber.Ctx) error {
	n, err := io.Copy(io.Discard, io.LimitReader(c.Context().RequestBodyStream(), maxUploadBytes+1))
	switch {
	case err != nil:
		return fiber.NewError(fiber.StatusBadRequest, "cannot read request body")
	case n > maxUploadBytes:
		c.Context().SetConnectionClose() // rather than read the rest
		return errTooLarge
	}
	c.Set(fiber.HeaderContentType, fiber.MIMETextPlain)
	return c.SendString(strconv.FormatInt(n, 10))
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
