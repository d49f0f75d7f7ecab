package main

import (
	"net/http"
	"time"
)

// httpLimits are the time and size limits of serve's HTTP server.
type httpLimits struct {
	// ReadHeader bounds the arrival of a request's headers.
	ReadHeader time.Duration
	// Read bounds the arrival of a whole request, headers and body: a webhook delivery's
	// body has what ReadHeader left of it. net/http clears the deadline once the body has
	// been read to its end, so the recording of a delivery is not cut short by it (bot's
	// TestWebhookStoresPastTheReadDeadline).
	Read time.Duration
	// Write bounds the handling of a request and the writing of its answer, from the end
	// of its headers.
	Write time.Duration
	// Idle bounds the wait for the next request on a kept-alive connection.
	Idle time.Duration
	// MaxHeaderBytes bounds a request's headers (net/http adds 4 KiB of slack).
	MaxHeaderBytes int
}

// serveHTTPLimits are serve's HTTP limits; a variable so that tests need not wait for them.
//
// GitHub gives up on a delivery after 10 s, so a body still arriving then is of no use:
// Read is 10 s, and a client that declares a large body and sends it slowly is cut off
// there. GitHub's headers are about 1 KB and a browser's a few, so 5 s and 64 KiB are
// ample. Write leaves the webhook its 10 s of body and 20 s to record the delivery (the
// inbox's push and its undoing are each bounded by 10 s); the status page and /metrics
// answer in milliseconds. Idle keeps GitHub's and a scraper's connections for a minute.
var serveHTTPLimits = httpLimits{
	ReadHeader:     5 * time.Second,
	Read:           10 * time.Second,
	Write:          30 * time.Second,
	Idle:           60 * time.Second,
	MaxHeaderBytes: 64 << 10,
}

// newHTTPServer returns serve's HTTP server of h, with limits l.
func newHTTPServer(h http.Handler, l httpLimits) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: l.ReadHeader,
		ReadTimeout:       l.Read,
		WriteTimeout:      l.Write,
		IdleTimeout:       l.Idle,
		MaxHeaderBytes:    l.MaxHeaderBytes,
	}
}
