package queue_test

import (
	"testing"

	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/queue/queuetest"
)

func TestRedis(t *testing.T) {
	addr := queuetest.RedisAddr(t)
	queuetest.Conformance(t, func(t *testing.T, o queue.Options) queue.Queue {
		rdb := queuetest.NewClient(t, addr)
		o.Prefix = queuetest.Prefix(t, rdb)
		return queue.NewRedis(rdb, o)
	})
}
