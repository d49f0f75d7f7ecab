// Package validate checks that a running entry does the work each test profile asks for,
// before its numbers are worth measuring.
//
// Every profile the runner can run has a list of checks ([Checks]), each a named
// requirement of the profile's contract (docs/profiles.md, generated from them): status
// codes, Content-Type, framing (a Content-Length that matches the body, or a valid chunked
// encoding), exact bodies and JSON values for fixed and random inputs, compression when
// asked for and only then, pipelined responses in order, uploads of several sizes, static
// files byte for byte (the 170 MiB download streamed against the data directory's copy,
// never held in memory), echoed bodies, delays that must not serialize, requests that
// arrive in fragments, an HTML page's table rows, their order and their escaping against the
// seeded fortune table, and malformed requests, after
// which the server must still answer. One check reads the entry's source rather than its
// answers (Target.Source: fortunes' template file in standard mode). [Run] sends them to a server and returns one
// [Outcome] per check: PASS, FAIL with the request sent, what was expected, what came back
// and the contract, or SKIP with the reason.
//
// Each profile's checks reach the server through the profile's protocol unit
// (validate/protocol, the same one the runner's readiness probe uses). Over HTTP/1.1, plain
// or over TLS (8081, offering no ALPN, as wrk), they speak through a small client of their
// own rather than net/http, which would hide what is checked (pipelining, fragments,
// malformed requests, exact framing); every read and write has a deadline, and the response
// parser is strict and bounded. Over h2 (8443, ALPN h2) and h2c with prior knowledge (8082)
// the same requests go through net/http's HTTP/2 (roundTrip), and the TLS checks compare the
// server's certificate with the arena's (certs/server.crt in the data directory).
//
// The section [TLSCheck] is not a profile: an entry opts into it with meta.json's tls_check,
// and Run runs it after the profiles against HTTP/1.1 over TLS on :9000 (the TLS posture and
// quality, with ClientHellos of its own making for what crypto/tls cannot offer; SNI; session
// resumption; close_notify; testssl.sh -U where it is installed; and a rotation of the pair in
// the server's /certs-tls copy, Target.CertsTLSDir). [MetaWarnings] turns what is odd in an
// entry's meta.json into advisory outcomes.
//
// The gRPC profiles' checks ([GRPCClient]) call the arena's BenchmarkService through grpc-go
// over the profile's protocol unit (h2c on 8080, TLS on 8443), with messages built from a
// descriptor rather than generated code, and want grpc-status 0 with the exact sum or
// exactly count stream replies; the runner's grpc-status sample beside h2load uses the same
// client.
//
// Imports: the standard library, brotli, grpc-go and protobuf, and profile and
// validate/protocol from this module; the dataset and the static files are read from the
// data directory at run time. The package validatetest holds a server that fulfils every
// contract and can be told to break any one check, and a gRPC fixture (StartGRPC) that
// breaks any one gRPC check, for tests.
package validate
