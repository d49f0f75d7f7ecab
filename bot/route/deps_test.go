package route

import (
	"testing"

	"github.com/arenabot/arenabot/internal/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.Rules{Module: []string{"md", "text", "profile", "queue"}})
}
