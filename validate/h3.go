package validate

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/arenabot/arenabot/validate/protocol"
)

// h3Checks are the HTTP/3 checks every h3 profile starts with: the server answers over QUIC
// on the profile's UDP port with ALPN h3 (no fallback: the client offers h3 only), and over
// TCP on the same port with h2 over TLS, where the runner probes readiness as the arena did.
// The old arena never validated h3.
func h3Checks(p string) []check {
	ref := func(text string) string { return contract(p, text, "RFC 9114") }
	const probe = "/baseline2?a=1&b=1"
	return []check{
		{
			name:     "h3 over QUIC",
			contract: ref("GET " + probe + " over QUIC (UDP, ALPN h3 only) → 200 over HTTP/3"),
			run: func(ctx context.Context, e *env) result {
				req := "GET " + probe + " over QUIC to udp " + e.addr + ", ALPN h3"
				const exp = "200 over HTTP/3 (ALPN h3)"
				c := protocol.H3.Client(protocol.Config{Timeout: e.timeout})
				defer c.CloseIdleConnections()
				hr, err := http.NewRequestWithContext(ctx, http.MethodGet, protocol.H3.URL(e.addr, probe), nil)
				if err != nil {
					return failed(req, exp, err.Error())
				}
				hr.Host = authority(e.addr)
				resp, err := c.Do(hr)
				if err != nil {
					return failed(req, exp, err.Error())
				}
				io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
				resp.Body.Close()
				alpn := ""
				if resp.TLS != nil {
					alpn = resp.TLS.NegotiatedProtocol
				}
				got := fmt.Sprintf("%s %d, ALPN %q", resp.Proto, resp.StatusCode, alpn)
				if resp.StatusCode != 200 || !protocol.NegotiatedH3(resp) {
					return failed(req, exp, got)
				}
				return passed(req, exp, got)
			},
		},
		{
			name:     "readiness over TCP h2",
			contract: contract(p, "the readiness probe: GET "+probe+" over TLS on TCP, same port, ALPN h2 → any answer (the runner waits for it; h3 servers serve h2 beside h3)", ""),
			run: func(ctx context.Context, e *env) result {
				req := "GET " + probe + " over TLS to tcp " + e.addr + ", ALPN h2"
				const exp = "an answer"
				if err := protocol.H2.Probe(ctx, e.addr, probe, protocol.Config{Timeout: e.timeout}); err != nil {
					return failed(req, exp, err.Error())
				}
				return passed(req, exp, "an answer")
			},
		},
	}
}
