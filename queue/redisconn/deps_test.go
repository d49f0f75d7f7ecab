package redisconn

import (
	"testing"

	"github.com/arenabot/arenabot/internal/deptest"
)

// TestDeps: redisconn imports nothing of this module, and only go-redis (with what it needs)
// from outside.
func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.Rules{
		ThirdParty: []string{
			"github.com/redis/go-redis/v9",
			"github.com/cespare/xxhash/v2", // go-redis
			"go.uber.org/atomic",           // go-redis
			"golang.org/x/sys/cpu",         // go-redis, through xxhash
		},
	})
}
