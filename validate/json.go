package validate

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// The (count, m) pairs the load tool requests (arenadata's
// json-*.raw and json-gzip-*.raw).
var (
	jsonPairs     = [][2]int{{1, 3}, {5, 7}, {10, 2}, {15, 5}, {25, 4}, {40, 8}, {50, 6}}
	jsonCompPairs = [][2]int{{25, 4}, {40, 8}, {50, 6}}
)

// jsonAcceptEncoding is what json-comp's requests accept.
const jsonAcceptEncoding = "gzip, br"

const itemsContract = `GET /json/{count}?m={m} → 200 application/json {"items": the first count dataset items, each with every dataset field and "total": price*quantity*m, "count": count}`

// jsonChecks are the /json checks, of json, json-tls, json-h2c and the api profiles, after
// the profile's probe at probe ("": the caller has its own checks first).
func jsonChecks(p, probe string) []check {
	ref := func(text string) string { return contract(p, text, "") }
	var checks []check
	if probe != "" {
		checks = append(checks, probeCheck(p, probe))
	}
	return append(checks, []check{
		{
			name:     "GET /json load pairs",
			contract: ref(itemsContract + "; the load's pairs (1,3) (5,7) (10,2) (15,5) (25,4) (40,8) (50,6)"),
			run: func(ctx context.Context, e *env) result {
				return itemsCheck(ctx, e, jsonPairs, "", encodingAny)
			},
		},
		{
			name:     "GET /json random count and m",
			contract: contract(p, itemsContract+", for any count from 1 to 50 and any m", ""),
			run: func(ctx context.Context, e *env) result {
				return itemsCheck(ctx, e, randomPairs(e, 4, 1, 50), "", encodingAny)
			},
		},
		{
			name:     "GET /json Content-Type",
			contract: ref(itemsContract),
			run: func(ctx context.Context, e *env) result {
				return expectType(ctx, e, "GET", jsonRequest(50, 1, ""), "application/json")
			},
		},
		{
			name:     "GET /json without Accept-Encoding",
			contract: ref(itemsContract + "; a request without Accept-Encoding gets no Content-Encoding (RFC 9110 §12.5.3)"),
			run: func(ctx context.Context, e *env) result {
				return itemsCheck(ctx, e, [][2]int{{15, 5}}, "", encodingNone)
			},
		},
	}...)
}

func jsonCompChecks(p string) []check {
	ref := func(text string) string { return contract(p, text, "") }
	const comp = itemsContract + `; with Accept-Encoding: gzip, br the body is compressed, Content-Encoding gzip or br`
	return []check{
		probeCheck(p, "/baseline11?a=1&b=1"),
		{
			name:     "gzip, br: load pairs",
			contract: ref(comp + "; the load's pairs (25,4) (40,8) (50,6)"),
			run: func(ctx context.Context, e *env) result {
				return itemsCheck(ctx, e, jsonCompPairs, jsonAcceptEncoding, encodingGzipOrBr)
			},
		},
		{
			name:     "gzip, br: random count and m",
			contract: contract(p, comp+", for any count from 25 to 50 and any m", ""),
			run: func(ctx context.Context, e *env) result {
				return itemsCheck(ctx, e, randomPairs(e, 3, 25, 50), jsonAcceptEncoding, encodingGzipOrBr)
			},
		},
		check{
			name:     "gzip only",
			contract: contract(p, itemsContract+"; with Accept-Encoding: gzip the body is gzip, never br", "RFC 9110 §12.5.3"),
			run: func(ctx context.Context, e *env) result {
				return itemsCheck(ctx, e, [][2]int{{40, 8}}, "gzip", encodingGzip)
			},
		}.advisory(),
		{
			name:     "without Accept-Encoding",
			contract: ref(itemsContract + "; without Accept-Encoding there is no Content-Encoding"),
			run: func(ctx context.Context, e *env) result {
				return itemsCheck(ctx, e, [][2]int{{50, 6}}, "", encodingNone)
			},
		},
		check{
			name:     "compressed Content-Type",
			contract: contract(p, comp+"; the Content-Type stays application/json", "RFC 9110 §8.3"),
			run: func(ctx context.Context, e *env) result {
				return expectType(ctx, e, "GET", jsonRequest(25, 4, jsonAcceptEncoding), "application/json")
			},
		}.advisory(),
		check{
			name:     "Vary: Accept-Encoding",
			contract: contract(p, comp+"; a response that depends on Accept-Encoding says so with Vary: Accept-Encoding", "RFC 9110 §12.5.5"),
			run: func(ctx context.Context, e *env) result {
				raw := jsonRequest(25, 4, jsonAcceptEncoding)
				const exp = "200 with Vary: Accept-Encoding"
				r, err := exchange(ctx, e, "GET", raw)
				if err != nil {
					return failed(show(raw), exp, err.Error())
				}
				if r.Status != 200 || !varies(r) {
					return failed(show(raw), exp, describe(r))
				}
				return passed(show(raw), exp, describe(r))
			},
		}.advisory(),
	}
}

// varies reports whether the response's Vary names Accept-Encoding (or is "*").
func varies(r *response) bool {
	return hasToken(r.Header.Values("Vary"), "Accept-Encoding") || hasToken(r.Header.Values("Vary"), "*")
}

// randomPairs returns k (count, m) pairs: counts in [lo, hi], multipliers in [11, 99] (so
// they differ from every pair the load sends).
func randomPairs(e *env, k, lo, hi int) [][2]int {
	rng := e.rand()
	pairs := make([][2]int, k)
	for i := range pairs {
		pairs[i] = [2]int{lo + rng.IntN(hi-lo+1), 11 + rng.IntN(89)}
	}
	return pairs
}

func jsonRequest(n, m int, acceptEncoding string) []byte {
	var h []string
	if acceptEncoding != "" {
		h = append(h, "Accept-Encoding: "+acceptEncoding)
	}
	return request("GET", fmt.Sprintf("/json/%d?m=%d", n, m), h, nil)
}

// An encodingRule says which Content-Encoding a response may have.
type encodingRule int

const (
	encodingAny      encodingRule = iota // whatever it is, decode it (other checks judge it)
	encodingNone                         // none, or identity
	encodingGzipOrBr                     // gzip or br
	encodingGzip                         // gzip only
)

func (r encodingRule) String() string {
	switch r {
	case encodingNone:
		return "no Content-Encoding"
	case encodingGzipOrBr:
		return "Content-Encoding gzip or br"
	case encodingGzip:
		return "Content-Encoding gzip"
	}
	return ""
}

// allows reports whether the rule allows the Content-Encoding value ce.
func (r encodingRule) allows(ce string) bool {
	ce = strings.ToLower(strings.TrimSpace(ce))
	switch r {
	case encodingNone:
		return ce == "" || ce == "identity"
	case encodingGzipOrBr:
		return ce == "gzip" || ce == "br"
	case encodingGzip:
		return ce == "gzip"
	}
	return true
}

// itemsCheck requests each pair on one kept-alive connection and checks status, encoding
// and the decoded items against the dataset.
func itemsCheck(ctx context.Context, e *env, pairs [][2]int, acceptEncoding string, rule encodingRule) result {
	var targets []string
	for _, p := range pairs {
		targets = append(targets, fmt.Sprintf("/json/%d?m=%d", p[0], p[1]))
	}
	req := "GET " + strings.Join(targets, ", ")
	if acceptEncoding != "" {
		req += " with Accept-Encoding: " + acceptEncoding
	} else {
		req += " without Accept-Encoding"
	}
	exp := "200 application/json with the first count dataset items, total = price*quantity*m, and count"
	if rule != encodingAny {
		exp += ", " + rule.String()
	}
	ds, err := e.data.dataset()
	if err != nil {
		return failed(req, exp, "cannot check: "+err.Error())
	}
	s := &session{e: e}
	defer s.close()
	for _, p := range pairs {
		raw := jsonRequest(p[0], p[1], acceptEncoding)
		r, err := s.do(ctx, "GET", raw)
		if err != nil {
			return failed(show(raw), exp, err.Error())
		}
		ce := r.get("Content-Encoding")
		switch {
		case r.Status != 200:
			return failed(show(raw), exp, describe(r))
		case !rule.allows(ce):
			return failed(show(raw), exp, describe(r))
		}
		body, err := decodeBody(r.Body, ce)
		if err != nil {
			return failed(show(raw), exp, fmt.Sprintf("%s: the body does not decode: %v", describe(r), err))
		}
		if err := checkItems(body, ds, p[0], p[1]); err != nil {
			return failed(show(raw), exp, fmt.Sprintf("%s: %v", describeEncoded(r, body), err))
		}
	}
	return passed(req, exp, fmt.Sprintf("%d responses, each correct", len(pairs)))
}

// describeEncoded is describe with the decoded body shown when the body was compressed.
func describeEncoded(r *response, decoded []byte) string {
	if ce := r.get("Content-Encoding"); ce != "" && !slices.Equal(decoded, r.Body) {
		return fmt.Sprintf("%s, decoded to %d bytes: \"%s\"", describe(r), len(decoded), printable(decoded, 120))
	}
	return describe(r)
}
