package validate

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arenabot/arenabot/arenadata"
	"github.com/arenabot/arenabot/frameworks"
)

// tlsTestData returns an arena data directory (the shared test cache).
func tlsTestData(t *testing.T) string {
	t.Helper()
	dir, err := arenadata.Ensure(filepath.Join(os.TempDir(), "arenabot-test-cache"))
	if err != nil {
		t.Fatalf("arena data: %v", err)
	}
	return dir
}

// certsCopy copies the data directory's TLS pair into a new directory, as the runner's
// /certs-tls copy.
func certsCopy(t *testing.T, dataDir string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"server.crt", "server.key"} {
		b, err := os.ReadFile(filepath.Join(dataDir, arenadata.CertsDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// pairLoader serves the pair in dir: loaded once, or again whenever its files change
// (reload), as an entry that passes the rotation checks does.
type pairLoader struct {
	dir    string
	reload bool
	mu     sync.Mutex
	cert   *tls.Certificate
	stamp  string
}

func (l *pairLoader) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	crt, key := filepath.Join(l.dir, "server.crt"), filepath.Join(l.dir, "server.key")
	stamp := ""
	for _, f := range []string{crt, key} {
		if fi, err := os.Stat(f); err == nil {
			stamp += fi.ModTime().String() + "/" + fi.Name() + "/"
		}
	}
	if l.cert == nil || (l.reload && stamp != l.stamp) {
		c, err := tls.LoadX509KeyPair(crt, key)
		if err != nil {
			if l.cert != nil {
				return l.cert, nil // mid-rotation: keep serving the old pair
			}
			return nil, err
		}
		l.cert, l.stamp = &c, stamp
	}
	return l.cert, nil
}

// serverConfig is a TLS configuration serving the pair in dir.
func serverConfig(dir string, reload bool) *tls.Config {
	l := &pairLoader{dir: dir, reload: reload}
	return &tls.Config{GetCertificate: l.get, NextProtos: []string{"http/1.1"}}
}

// startHTTPS serves HTTP/1.1 over TLS with net/http on a free port, with cfg, and returns the
// port.
func startHTTPS(t *testing.T, cfg *tls.Config) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "2")
		}),
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
		ErrorLog:     quietLog(),
	}
	go srv.Serve(tls.NewListener(ln, cfg))
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().(*net.TCPAddr).Port
}

// startRaw serves HTTP/1.1 over TLS by hand, answering each request with Connection: close,
// then ending the connection as end says: "close-notify" (a close_notify alert, then the
// close), "tcp-close" (a TCP close without one) or "stay-open" (nothing: the connection
// stays open).
func startRaw(t *testing.T, cfg *tls.Config, end string) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var open []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range open {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			raw, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			open = append(open, raw)
			mu.Unlock()
			wg.Go(func() {
				tc := tls.Server(raw, cfg)
				br := bufio.NewReader(tc)
				for {
					line, err := br.ReadString('\n')
					if err != nil {
						raw.Close()
						return
					}
					if line == "\r\n" {
						break
					}
				}
				io.WriteString(tc, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
				switch end {
				case "close-notify":
					tc.Close()
				case "tcp-close":
					raw.Close()
				}
			})
		}
	})
	return ln.Addr().(*net.TCPAddr).Port
}

func quietLog() *log.Logger { return log.New(io.Discard, "", 0) }

// runTLSCheck runs the section against port, with the pair to rotate in certsDir.
func runTLSCheck(t *testing.T, dataDir string, port int, certsDir string) map[string]Outcome {
	t.Helper()
	out := Run(t.Context(), Target{
		Host: "127.0.0.1", Ports: map[int]int{TLSCheckPort: port}, DataDir: dataDir, Timeout: 2 * time.Second,
		CertsTLSDir: certsDir, RotationInterval: 40 * time.Millisecond,
	}, []string{TLSCheck})
	got := map[string]Outcome{}
	for _, o := range out {
		if o.Profile != TLSCheck {
			t.Errorf("outcome of %q: %s", o.Profile, o)
		}
		got[o.Check] = o
	}
	if len(got) != len(tlsCheckSuite) {
		t.Fatalf("%d outcomes, want one per check (%d): %v", len(out), len(tlsCheckSuite), out)
	}
	return got
}

// noTestssl hides testssl.sh for the test, whose run would take minutes.
func noTestssl(t *testing.T) {
	old := testsslNames
	testsslNames = []string{"arenabot-no-such-testssl"}
	t.Cleanup(func() { testsslNames = old })
}

const (
	checkCert     = "TLS posture: the arena's certificate"
	checkTLS13    = "TLS posture: TLS 1.3"
	checkAEAD     = "TLS posture: AEAD cipher suite"
	checkALPN     = "TLS posture: ALPN"
	checkQuality  = "TLS quality: no legacy protocol or weak cipher"
	checkSNI      = "SNI with and without a server name"
	checkResume   = "session resumption"
	checkClose    = "close_notify"
	checkTestssl  = "testssl.sh -U"
	checkRotation = "certificate rotation within 30 s"
	checkServing  = "serving through rotation 30/30"
)

// wantOnly checks that the named checks have the given status and every other passed
// (testssl.sh -U skipped).
func wantOnly(t *testing.T, got map[string]Outcome, want map[string]Status) {
	t.Helper()
	for name, o := range got {
		w, ok := want[name]
		if !ok {
			w = Pass
			if name == checkTestssl {
				w = Skip
			}
		}
		if o.Status != w {
			t.Errorf("%s: %v, want %v", name, o, w)
		} else if w != Pass {
			t.Logf("%s", o)
		}
	}
}

// TestTLSCheckPasses: a server that does all the section asks (net/http over crypto/tls,
// reloading its pair when the files change) passes every check, and the pair in the
// directory is the arena's again afterwards.
func TestTLSCheckPasses(t *testing.T) {
	noTestssl(t)
	data := tlsTestData(t)
	certs := certsCopy(t, data)
	port := startHTTPS(t, serverConfig(certs, true))
	got := runTLSCheck(t, data, port, certs)
	wantOnly(t, got, nil)
	if o := got[checkRotation]; !strings.Contains(o.Got, "the new certificate after") {
		t.Errorf("rotation: %v", o)
	}
	if o := got[checkServing]; o.Got != "30/30 answered" {
		t.Errorf("serving: %v", o)
	}
	for _, f := range []string{"server.crt", "server.key"} {
		a, _ := os.ReadFile(filepath.Join(data, arenadata.CertsDir, f))
		b, _ := os.ReadFile(filepath.Join(certs, f))
		if !bytes.Equal(a, b) {
			t.Errorf("%s in the rotated directory is not the arena's again", f)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(certs, ".*")); len(left) > 0 {
		t.Errorf("temporary files left in the directory: %q", left)
	}
}

func TestTLSCheckFailures(t *testing.T) {
	noTestssl(t)
	data := tlsTestData(t)
	tests := []struct {
		name  string
		start func(t *testing.T, certs string) int
		want  map[string]Status
		// wantGot are words the Got of the check about must hold.
		about   string
		wantGot []string
	}{
		{"no reload", func(t *testing.T, certs string) int {
			return startHTTPS(t, serverConfig(certs, false))
		}, map[string]Status{checkRotation: Fail}, checkRotation, []string{"still the old certificate", "after 1.2s (30 handshakes)"}},
		{"TLS 1.2 only", func(t *testing.T, certs string) int {
			cfg := serverConfig(certs, true)
			cfg.MaxVersion = tls.VersionTLS12
			return startHTTPS(t, cfg)
		}, map[string]Status{checkTLS13: Fail, checkAEAD: Fail}, checkTLS13, []string{"TLS 1.2"}},
		{"legacy protocols and RC4", func(t *testing.T, certs string) int {
			cfg := serverConfig(certs, true)
			cfg.MinVersion, cfg.MaxVersion = tls.VersionTLS10, tls.VersionTLS12
			cfg.CipherSuites = []uint16{tls.TLS_ECDHE_ECDSA_WITH_RC4_128_SHA, tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}
			return startHTTPS(t, cfg)
		}, map[string]Status{checkQuality: Fail, checkTLS13: Fail, checkAEAD: Fail}, checkQuality,
			[]string{"accepted: TLS 1.0 (ServerHello TLS 1.0, suite 0xc009); TLS 1.1 (ServerHello TLS 1.1, suite 0xc009); the RC4 cipher family (ServerHello TLS 1.2, suite 0xc007)"}},
		{"no session tickets", func(t *testing.T, certs string) int {
			cfg := serverConfig(certs, true)
			cfg.SessionTicketsDisabled = true
			return startHTTPS(t, cfg)
		}, map[string]Status{checkResume: Warn}, checkResume, []string{"a full handshake: the server issued no session ticket"}},
		{"SNI required", func(t *testing.T, certs string) int {
			cfg := serverConfig(certs, true)
			get := cfg.GetCertificate
			cfg.GetCertificate = func(h *tls.ClientHelloInfo) (*tls.Certificate, error) {
				if h.ServerName == "" {
					return nil, errors.New("no SNI")
				}
				return get(h)
			}
			return startHTTPS(t, cfg)
		}, map[string]Status{checkSNI: Fail}, checkSNI, []string{"without SNI: TLS handshake:"}},
		{"no close_notify", func(t *testing.T, certs string) int {
			return startRaw(t, serverConfig(certs, true), "tcp-close")
		}, map[string]Status{checkClose: Warn}, checkClose, []string{"HTTP/1.1 200, then the connection closed without a close_notify alert"}},
		{"stays open", func(t *testing.T, certs string) int {
			return startRaw(t, serverConfig(certs, true), "stay-open")
		}, map[string]Status{checkClose: Fail}, checkClose, []string{"the connection still open 2s later"}},
		{"close_notify, no ALPN", func(t *testing.T, certs string) int {
			cfg := serverConfig(certs, true)
			cfg.NextProtos = nil
			return startRaw(t, cfg, "close-notify")
		}, nil, "", nil},
		{"another certificate", func(t *testing.T, certs string) int {
			cfg := serverConfig(certs, true)
			other := otherPair(t)
			cfg.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return other, nil }
			return startHTTPS(t, cfg)
		}, map[string]Status{checkCert: Fail, checkRotation: Fail}, checkCert, []string{"another certificate: subject"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			certs := certsCopy(t, data)
			got := runTLSCheck(t, data, tt.start(t, certs), certs)
			wantOnly(t, got, tt.want)
			if o := got[tt.about]; tt.about != "" && !containsAll(o.Got, tt.wantGot) {
				t.Errorf("%s: got %q, want it to say %q", tt.about, o.Got, tt.wantGot)
			}
		})
	}
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// otherPair is a pair that is not the arena's.
func otherPair(t *testing.T) *tls.Certificate {
	t.Helper()
	crt, key, _, err := newPair()
	if err != nil {
		t.Fatal(err)
	}
	c, err := tls.X509KeyPair(crt, key)
	if err != nil {
		t.Fatal(err)
	}
	return &c
}

// TestTLSCheckSkips: without a directory to rotate in, the rotation checks are skipped, and
// testssl.sh's check is where it is not installed; nothing listening fails every other check.
func TestTLSCheckSkips(t *testing.T) {
	noTestssl(t)
	data := tlsTestData(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	got := runTLSCheck(t, data, port, "")
	for name, o := range got {
		want := Fail
		switch name {
		case checkRotation, checkServing:
			want = Skip
			if !strings.Contains(o.Reason, "no /certs-tls directory") {
				t.Errorf("%s: reason %q", name, o.Reason)
			}
		case checkTestssl:
			want = Skip
			if !strings.Contains(o.Reason, "testssl.sh is not installed") {
				t.Errorf("%s: reason %q", name, o.Reason)
			}
		case checkResume:
			want = Warn
		}
		if o.Status != want {
			t.Errorf("%s: %v, want %v", name, o, want)
		}
	}
}

// TestTLSCheckRunOrder: the section runs after the profiles, once, and names its contract in
// docs/meta-json.md.
func TestTLSCheckRunOrder(t *testing.T) {
	names := orderProfiles([]string{TLSCheck, "nope", "json", "baseline", TLSCheck})
	if want := []string{"baseline", "json", TLSCheck, "nope"}; !slices.Equal(names, want) {
		t.Errorf("orderProfiles = %q, want %q", names, want)
	}
	if got := Checks(TLSCheck); len(got) != 11 || got[0] != checkCert || got[10] != checkServing {
		t.Errorf("Checks(TLSCheck) = %q", got)
	}
	for _, info := range Describe(TLSCheck) {
		if !strings.HasSuffix(info.Contract, "docs/meta-json.md#tls_check)") || !strings.HasPrefix(info.Contract, "tls_check — ") {
			t.Errorf("%s: contract %q", info.Name, info.Contract)
		}
	}
}

// TestSevereFindings reads testssl.sh's JSON output, captured from testssl 3.0.8 (Debian's
// testssl.sh package) run with -U against Go servers: one with crypto/tls's defaults, one
// accepting TLS 1.0 and RC4, and one run against a port nothing listened on.
func TestSevereFindings(t *testing.T) {
	tests := []struct {
		file  string
		total int
		bad   []string
	}{
		{"good.json", 22, nil},
		{"weak.json", 22, []string{"RC4 (HIGH): VULNERABLE, Detected ciphers: ECDHE-ECDSA-RC4-SHA"}},
		{"fatal.json", 2, []string{`scanProblem (FATAL): Can't connect to '127.0.0.1:19444' Make sure a firewall is not between you and your scanning target!`}},
	}
	for _, tt := range tests {
		b, err := os.ReadFile(filepath.Join("testdata", "testssl", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		bad, total, err := severeFindings(b)
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		t.Logf("%s: %d findings, severe: %q", tt.file, total, bad)
		if total != tt.total || !slices.Equal(bad, tt.bad) {
			t.Errorf("%s: %d findings, severe %q; want %d, %q", tt.file, total, bad, tt.total, tt.bad)
		}
	}
	if _, _, err := severeFindings([]byte(`{"id": "x"}`)); err == nil {
		t.Error("severeFindings of an object: nil error")
	}
}

// TestClientHelloParses checks the ClientHello the quality check builds against crypto/tls's
// own server: offered TLS 1.2 with a suite it serves, it answers with a ServerHello naming it.
func TestClientHelloParses(t *testing.T) {
	data := tlsTestData(t)
	cfg := serverConfig(certsCopy(t, data), false)
	cfg.MaxVersion = tls.VersionTLS12
	port := startHTTPS(t, cfg)
	e := tlsCheckEnv(Target{Host: "127.0.0.1", Ports: map[int]int{TLSCheckPort: port}, Timeout: 2 * time.Second}, newData(data))
	acc, err := e.hello(t.Context(), helloProbe{"ECDHE-ECDSA-AES128-GCM", wireTLS12, []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}})
	if err != nil || acc != "ServerHello TLS 1.2, suite 0xc02b" {
		t.Errorf("hello = %q, %v; want the ServerHello", acc, err)
	}
	acc, err = e.hello(t.Context(), helloProbe{"SSLv3", wireSSL30, legacySuites})
	if err != nil || acc != "" {
		t.Errorf("SSLv3 hello = %q, %v; want it refused", acc, err)
	}
}

// TestTestsslRuns runs testssl.sh -U, where it is installed, against a server that accepts
// RC4: the check fails naming that finding. It takes about two minutes, so -short skips it.
func TestTestsslRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("testssl.sh -U takes minutes; skipped with -short")
	}
	found := false
	for _, name := range testsslNames {
		if _, err := exec.LookPath(name); err == nil {
			found = true
		}
	}
	if !found {
		t.Skip("testssl.sh is not installed (Debian: apt-get install testssl.sh); its output is read by TestSevereFindings")
	}
	data := tlsTestData(t)
	cfg := serverConfig(certsCopy(t, data), false)
	cfg.MaxVersion = tls.VersionTLS12
	cfg.CipherSuites = []uint16{tls.TLS_ECDHE_ECDSA_WITH_RC4_128_SHA, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}
	port := startHTTPS(t, cfg)
	e := tlsCheckEnv(Target{Host: "127.0.0.1", Ports: map[int]int{TLSCheckPort: port}, Timeout: 2 * time.Second}, newData(data))
	start := time.Now()
	r := testsslCheck(t.Context(), e)
	t.Logf("%v after %v: %s", r.status, time.Since(start).Round(time.Second), r.got)
	if r.status != Fail || !strings.Contains(r.got, "RC4 (HIGH): VULNERABLE") {
		t.Errorf("testssl check: %+v; want a FAIL naming RC4", r)
	}
}

// TestMetaDocIsCurrent keeps docs/meta-json.md in step with the code: every check of the
// tls_check section in its table with its tier, and every value of type, mode and the
// completeness axes named.
func TestMetaDocIsCurrent(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(MetaDoc)))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, info := range Describe(TLSCheck) {
		tier := info.Tier.String()
		if info.Advisory != "" {
			tier = "required (advisory"
		}
		if !strings.Contains(doc, "| "+info.Name+" | "+tier) {
			t.Errorf("%s: no table row %q", MetaDoc, "| "+info.Name+" | "+tier)
		}
	}
	var values []string
	values = append(values, frameworks.Types...)
	values = append(values, frameworks.Modes...)
	values = append(values, frameworks.CompletenessAxes...)
	values = append(values, frameworks.Retired...)
	for _, v := range values {
		if !strings.Contains(doc, "`"+v+"`") {
			t.Errorf("%s does not name `%s`", MetaDoc, v)
		}
	}
	for _, anchor := range []string{"## type", "## mode", "## completeness", "## tls_check", "## website", "## tests", "## enabled"} {
		if !strings.Contains(doc, "\n"+anchor+"\n") {
			t.Errorf("%s has no section %q (messages link to it)", MetaDoc, anchor)
		}
	}
	for _, bad := range []string{"../", "shared/", "reference/"} {
		if strings.Contains(doc, bad) {
			t.Errorf("%s cites %q, outside the repository", MetaDoc, bad)
		}
	}
}
