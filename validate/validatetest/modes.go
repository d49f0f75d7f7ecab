package validatetest

import (
	"maps"
	"slices"
)

// baselineBehaviours break the checks baseline and limited-conn share.
var baselineBehaviours = map[string]string{
	"probe-status":           "GET /baseline11?a=1&b=1 answers 503",
	"get-wrong-sum":          `GET /baseline11?a=13&b=42 answers "56"`,
	"get-content-type":       "GET /baseline* answers text/html",
	"post-cl-wrong-sum":      `POST /baseline11?a=13&… with Content-Length body "20" ignores the body`,
	"post-content-type":      "POST /baseline* answers text/html",
	"post-chunked-wrong-sum": "a chunked POST /baseline11?a=13&… ignores the body",
	"get-random-wrong-sum":   "GET /baseline11 with a >= 100 answers one too many",
	"post-random-wrong-sum":  "POST /baseline11 with a body >= 100 answers one too many",
	"framing":                "a request with Connection: close gets a Content-Length one larger than the body",
	"frag-line":              "a request line that arrives in several reads gets 400",
	"frag-headers":           "a header section that ends in a later read than the request line gets 400",
	"frag-body":              "a body that arrives whole in a read after the header section gets 400",
	"frag-body-split":        "a body that arrives in several reads gets 400",
}

// jsonBehaviours break the /json checks json, api-4 and api-16 share.
var jsonBehaviours = map[string]string{
	"json-pairs-wrong-total": "GET /json/40?m=8 has a wrong total in the last item",
	"json-random-wrong":      "with m >= 11 the first item has no tags",
	"json-content-type":      "/json answers text/plain",
	"json-compress-unasked":  "/json is gzipped without Accept-Encoding",
}

// dbBehaviours break the /async-db checks async-db, api-4, api-16 and crud share.
var dbBehaviours = map[string]string{
	"db-load-wrong":   "min=10&max=50&limit=35 gets 34 rows",
	"db-arena-wrong":  "min=100&max=400&limit=33 gets a row with a stale name",
	"db-random-wrong": `a range outside the fixed queries gets "active" as a string`,
	"db-empty-wrong":  `an empty range gets "items": null`,
	"db-content-type": "min=10&max=50&limit=3 is answered text/plain",
	"db-no-clamp":     "a limit above 50 is not clamped",
	"db-no-defaults":  "no parameters gets 400",
}

// modes are every mode Start accepts, with what it breaks.
var modes = func() map[string]string {
	m := map[string]string{}
	for b, d := range baselineBehaviours {
		for _, p := range []string{"baseline", "limited-conn", "api-4", "api-16"} {
			m[p+"."+b] = d
		}
	}
	for b, d := range jsonBehaviours {
		for _, p := range []string{"json", "api-4", "api-16"} {
			m[p+"."+b] = d
		}
	}
	for b, d := range dbBehaviours {
		for _, p := range []string{"async-db", "api-4", "api-16", "crud"} {
			m[p+"."+b] = d
		}
	}
	for name, d := range map[string]string{
		"baseline.keepalive-close":      "every response says Connection: close and the connection closes",
		"baseline.malformed-bad-cl":     "Content-Length: abc is taken as no body",
		"baseline.malformed-bad-header": `"X-Bad : 1" is accepted`,
		"baseline.malformed-bare-cr":    "a bare CR gets 500",
		"baseline.malformed-nul":        "a NUL closes the connection and the next connection is refused",
		"baseline.malformed-fold":       `obsolete line folding gets 200 "folded"`,
		"baseline.malformed-huge":       "a header section over 16 KiB gets no answer on a connection held open",
		"baseline.malformed-junk":       "binary junk gets 200",
		"baseline.no-length":            "baseline responses are close-delimited (extra)",
		"limited-conn.reconnect":        "the 5th request on a connection gets Connection: close",

		"pipelined.probe-status":          "GET /baseline11?a=1&b=1 answers 503",
		"pipelined.pipeline-wrong-body":   `a lone GET /pipeline answers "OK"`,
		"pipelined.pipeline-content-type": "GET /pipeline answers text/html",
		"pipelined.pipeline-burst":        "the connection closes after 8 answers to /pipeline",
		"pipelined.pipeline-reorder":      "pipelined /baseline requests are answered before the others",

		"json.probe-status": "GET /json/1 answers 500",

		"async-db.probe-status": "GET /baseline11?a=1&b=1 answers 503",
		"crud.probe-status":     "GET /baseline11?a=1&b=1 answers 503",
		"crud.crud-list-wrong":  "the list's total is one too many",
		"crud.crud-get-wrong":   "item 1 has a stale name",
		"crud.crud-no-hit":      "an item read twice is never a cache HIT",
		"crud.crud-404":         "a missing item gets 500",
		"crud.crud-create-lost": "a created item is answered 201 but not stored",
		"crud.crud-stale-cache": "a PUT leaves the old row in the cache",

		"json-comp.probe-status":            "GET /baseline11?a=1&b=1 answers 503",
		"json-comp.comp-pairs-uncompressed": `with Accept-Encoding "gzip, br" and m <= 8 the body is not compressed`,
		"json-comp.comp-random-wrong":       "with Accept-Encoding and m >= 11 the last total is wrong",
		"json-comp.comp-gzip-only-br":       `Accept-Encoding "gzip" gets br`,
		"json-comp.json-compress-unasked":   "/json is gzipped without Accept-Encoding",
		"json-comp.comp-content-type":       "compressed /json answers text/plain",
		"json-comp.comp-no-vary":            "/json has no Vary",

		"upload.probe-status":        "GET /baseline11?a=1&b=1 answers 503",
		"upload.upload-17":           "a 17-byte body is counted as 16",
		"upload.upload-48":           "a 48-byte body is counted as 47",
		"upload.upload-500k":         "a 512000-byte body is counted as 512001",
		"upload.upload-2m":           "a 2097152-byte body is counted as 2097151",
		"upload.upload-10m":          "a 10485760-byte body is answered by echoing Content-Length, unread",
		"upload.upload-20m":          "a 20971520-byte body gets 413 (a 16 MB limit)",
		"upload.upload-chunked":      "a chunked body is counted as 0",
		"upload.upload-content-type": "/upload answers text/html",

		"static.probe-status":        "GET /static/reset.css as a connection's first request answers 503",
		"static.static-identity":     "hero.webp without Accept-Encoding has its last byte changed",
		"static.static-content-type": ".woff2 without Accept-Encoding is application/octet-stream",
		"static.static-css-type":     "reset.css without Accept-Encoding is text/plain",
		"static.static-uncompressed": "the precompressed twins are never served",
		"static.static-404":          "a missing file gets 200 with an empty body",
		"static.static-no-vary":      "static responses have no Vary (extra)",
		"static.static-mislabel":     "the gzip twin is sent as Content-Encoding: br (extra)",
	} {
		m[name] = d
	}
	protocolModes(m)
	newerModes(m)
	fortunesModes(m)
	wsModes(m)
	h3Modes(m)
	return m
}()

// Modes returns every mode Start accepts, sorted: "<profile>.<behaviour>".
func Modes() []string { return slices.Sorted(maps.Keys(modes)) }

// Describe says what a mode breaks, or "" for an unknown mode.
func Describe(mode string) string { return modes[mode] }
