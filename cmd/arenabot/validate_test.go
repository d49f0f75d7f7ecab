package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func runCmd(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	err = run(t.Context(), append(args[:1:1], append([]string{"--cache-dir", cacheDir}, args[1:]...)...), func(string) string { return "" }, &out, &errb)
	t.Logf("arenabot %s\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), out.String(), errb.String())
	return out.String(), errb.String(), err
}

// TestValidateRealEntries runs the whole suite against the real containers of the HTTP
// entries this repository ships, with --strict: every check of every profile they subscribe
// to passes, the required ones (the old arena's own suite among them) and the advisory ones.
// (grpc-go has TestValidateGRPCEntry.)
func TestValidateRealEntries(t *testing.T) {
	if testing.Short() {
		t.Skip("builds images")
	}
	needDocker(t)
	for _, e := range []string{"nethttp", "fasthttp", "fiber", "gin", "quic-go"} {
		t.Run(e, func(t *testing.T) {
			stdout, _, err := runCmd(t, "validate", e, "--strict", "--root", repoRoot(t))
			if err != nil {
				t.Fatalf("validate %s: %v", e, err)
			}
			lines := strings.Split(strings.TrimSpace(stdout), "\n")
			last := lines[len(lines)-1]
			m := regexp.MustCompile(`^(\d+) passed, 0 failed, 0 skipped$`).FindStringSubmatch(last)
			if m == nil {
				t.Fatalf("summary line %q, want N passed, 0 failed, 0 skipped", last)
			}
			if m[1] != itoa(len(lines)-1) {
				t.Errorf("summary counts %s passes but %d check lines were printed", m[1], len(lines)-1)
			}
			// Every entry but quic-go serves HTTP/1.1 over TLS on 8081, with the arena's
			// certificate, and the fixed-rate, async and bandwidth endpoints.
			profiles := []string{"baseline", "pipelined", "limited-conn", "json", "json-comp", "upload", "static", "json-tls", "static-tls",
				"latency-10k", "latency-1m", "latency-500k-8cpu", "8gbit", "async", "download", "static-large"}
			if e == "quic-go" {
				// HTTP/1.1 on 8080, h2 over TLS on TCP 8443 and h3 over QUIC on UDP 8443.
				profiles = []string{"baseline", "baseline-h2", "static-h2", "baseline-h3", "static-h3"}
			}
			if e == "nethttp" {
				// gorilla/websocket at /ws.
				profiles = append(profiles, "echo-ws", "echo-ws-pipeline", "echo-ws-limited")
			}
			if e == "nethttp" || e == "fasthttp" {
				// On real Postgres and Redis sidecars, seeded with the arena's items and fortune
				// tables; fortunes rendered from a template file (its advisory checks pass too).
				profiles = append(profiles, "api-4", "api-16", "async-db", "crud", "fortunes")
			}
			if e == "nethttp" || e == "gin" {
				// net/http: h2 over TLS on 8443, h2c with prior knowledge on 8082.
				profiles = append(profiles, "baseline-h2", "static-h2", "baseline-h2c", "json-h2c")
			}
			for _, p := range profiles {
				if !strings.Contains(stdout, "PASS "+p+": ") {
					t.Errorf("no passing check of %s", p)
				}
			}
		})
	}
}

// brokenServer answers /pipeline and GET /baseline11 correctly but ignores POST bodies.
const brokenServer = `package main

import (
	"net/http"
	"strconv"
)

func main() {
	http.HandleFunc("/pipeline", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("ok"))
	})
	http.HandleFunc("/baseline11", func(w http.ResponseWriter, r *http.Request) {
		sum := 0
		for _, vs := range r.URL.Query() {
			for _, v := range vs {
				n, _ := strconv.Atoi(v)
				sum += n
			}
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte(strconv.Itoa(sum)))
	})
	http.ListenAndServe("0.0.0.0:8080", nil)
}
`

// TestValidateBrokenEntry: a wrong server fails with the request, the expectation, what
// came back and the contract; bench does not measure the failing profile and says why, and
// still measures the one that passes.
func TestValidateBrokenEntry(t *testing.T) {
	if testing.Short() {
		t.Skip("builds images and runs load")
	}
	needDocker(t)
	root := t.TempDir()
	scratchEntry(t, root, "offbyone", brokenServer, "COPY server /server\nENTRYPOINT [\"/server\"]\n")
	meta := `{"display_name":"offbyone","language":"Go","type":"engine","engine":"test","enabled":true,"tests":["baseline","pipelined","gateway-64"]}`
	os.WriteFile(filepath.Join(root, "frameworks", "offbyone", "meta.json"), []byte(meta), 0o644)

	stdout, _, err := runCmd(t, "validate", "offbyone", "--root", root)
	if err == nil {
		t.Fatal("validate passed a server that ignores POST bodies")
	}
	if !regexp.MustCompile(`(?m)^FAIL baseline: POST Content-Length body: sent POST /baseline11.*expected.*"75".*got.*"55".*contract`).MatchString(stdout) {
		t.Errorf("no FAIL line naming the sent request, 75 expected, 55 got and the contract")
	}
	if !regexp.MustCompile(`(?m)^PASS baseline: GET sum 13\+42$`).MatchString(stdout) {
		t.Errorf("the GET check fails though GET is right")
	}
	if !regexp.MustCompile(`(?m)^FAIL gateway-64: compose stack: .*no compose file for gateway-64 \(looked for compose.gateway.yml and compose.gateway-64.yml\)`).MatchString(stdout) {
		t.Errorf("the subscribed compose-stack test without a compose file is not one FAIL that says so")
	}
	if !regexp.MustCompile(`(?m)^\d+ passed, [1-9]\d* failed, 0 skipped$`).MatchString(stdout) {
		t.Errorf("no summary line with failures")
	}

	stdout, _, err = runBench(t, nil, "offbyone", "-t", "baseline,pipelined", "--runs", "1", "--duration", "1s", "--save", "--root", root)
	if err == nil {
		t.Fatal("bench succeeded though baseline fails validation")
	}
	if !strings.Contains(stdout, "| baseline | 512 | ❌ validation: POST Content-Length body |") {
		t.Errorf("baseline row's short cell does not name the failing check:\n%s", stdout)
	}
	if !regexp.MustCompile("(?m)^Why rows of `offbyone` failed:\n\n- baseline 512, baseline 4096: validation failed, not measured: FAIL baseline: POST Content-Length body: sent ").MatchString(stdout) {
		t.Errorf("the whole validation failure is not listed after the tables:\n%s", stdout)
	}
	dir := filepath.Join(root, "frameworks", "offbyone")
	if _, err := readSaved(dir, "baseline", 512); err == nil {
		t.Error("a result was saved for the profile that failed validation")
	}
	if r, err := readSaved(dir, "pipelined", 512); err != nil || r.RPS <= 0 {
		t.Errorf("pipelined passes validation and should be measured: %v, %+v", err, r)
	}
}
