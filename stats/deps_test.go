package stats

import (
	"testing"

	"github.com/arenabot/arenabot/internal/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.Rules{ThirdParty: []string{"gonum.org/v1/gonum", "golang.org/x/exp"}})
}
