package settings

import (
	"testing"

	"github.com/arenabot/arenabot/internal/deptest"
)

// TestDeps keeps the package small: a YAML parser and the tables it checks the file against
// (profiles, the queue's job tuning, Markdown); nothing of the bot or the runner.
func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.Rules{
		Module:     []string{"profile", "queue", "md", "text"},
		ThirdParty: []string{"go.yaml.in/yaml/v3", "github.com/redis/go-redis/v9", "github.com/cespare/xxhash/v2", "go.uber.org/atomic", "golang.org/x/sys/cpu", "go.etcd.io/bbolt", "golang.org/x/sys/unix"},
	})
}
