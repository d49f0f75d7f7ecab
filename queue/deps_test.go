package queue

import (
	"testing"

	"github.com/arenabot/arenabot/internal/deptest"
)

// TestDeps keeps the import arrow one way: bot and runner import queue;
// queue imports of this module only profile (the row key its jobs carry), and
// only go-redis and bbolt (with what they need) from outside.
func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.Rules{
		Module: []string{"profile", "text"},
		ThirdParty: []string{
			"github.com/redis/go-redis/v9",
			"github.com/cespare/xxhash/v2", // go-redis
			"go.uber.org/atomic",           // go-redis
			"golang.org/x/sys/cpu",         // go-redis, through xxhash
			"go.etcd.io/bbolt",             // Disk
			"golang.org/x/sys/unix",        // bbolt
		},
	})
}
