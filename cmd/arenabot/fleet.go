package main

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/arenabot/arenabot/queue"
)

// parsePools reads ARENA_POOLS: names separated by commas or spaces, each once; none means
// the runner's pool. With --runner, the runner's pool must be one of them.
func parsePools(s, runnerPool string, runner bool) ([]string, error) {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		if err := queue.CheckPool(f); err != nil {
			return nil, fmt.Errorf("serve: ARENA_POOLS: %w", err)
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	switch {
	case len(out) == 0:
		out = []string{cmp.Or(runnerPool, queue.DefaultPool)}
	case runner && !slices.Contains(out, runnerPool):
		return nil, fmt.Errorf("serve --runner: its runner takes jobs from pool %q (ARENA_POOL), which ARENA_POOLS (%s) does not route to; add it to ARENA_POOLS", runnerPool, strings.Join(out, ","))
	}
	return out, nil
}

// defaultReplica names this process: its hostname and pid.
func defaultReplica() string {
	h, _ := os.Hostname()
	return fmt.Sprintf("%s-%d", cmp.Or(h, "serve"), os.Getpid())
}
