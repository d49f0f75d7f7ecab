package queue_test

import (
	"testing"

	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/queue/queuetest"
)

func TestMemory(t *testing.T) {
	queuetest.Conformance(t, func(t *testing.T, o queue.Options) queue.Queue {
		return queue.NewMemory(o)
	})
}
