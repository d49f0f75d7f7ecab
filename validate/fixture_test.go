package validate_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/arenabot/arenabot/arenadata"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/validate"
	"github.com/arenabot/arenabot/validate/validatetest"
)

var (
	dataOnce sync.Once
	dataDir  string
	dataErr  error
)

// data returns an arena data directory (generated once into the shared test cache).
func data(t testing.TB) string {
	t.Helper()
	dataOnce.Do(func() {
		dataDir, dataErr = arenadata.Ensure(filepath.Join(os.TempDir(), "arenabot-test-cache"))
	})
	if dataErr != nil {
		t.Fatalf("arena data: %v", dataErr)
	}
	return dataDir
}

// runnable are the profiles validate has checks for.
var runnable = []string{"baseline", "pipelined", "limited-conn", "json", "json-comp", "json-tls", "upload", "api-4", "api-16",
	"static", "static-tls", "async-db", "crud", "fortunes", "baseline-h2", "static-h2", "baseline-h2c", "json-h2c",
	"latency-10k", "latency-1m", "latency-500k-8cpu", "8gbit", "async", "download", "static-large"}

// testTimeout is the per-operation timeout the tests give Run: short, so the modes that
// leave a connection hanging cost little.
const testTimeout = 2 * time.Second

// target points Run at a fixture server.
func target(t testing.TB, s *validatetest.Server) validate.Target {
	return validate.Target{Host: "127.0.0.1", Port: s.Port, DataDir: data(t), Timeout: testTimeout, Source: s.Source,
		Ports: map[int]int{profile.PortH1TLS: s.TLSPort, profile.PortH2C: s.H2CPort, profile.PortTLS: s.H2Port}}
}
