package bot

import (
	"context"
	"log/slog"

	"github.com/arenabot/arenabot/bot/plan"
	"github.com/arenabot/arenabot/bot/route"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/queue"
)

// pickPool picks the pool of a request's plan, one of pools, from the live runner hosts
// (bot/route). When the hosts cannot be read, the request goes to the first pool and nothing
// is refused: the queue being unreachable fails the request a step later anyway, with its
// own reply.
func pickPool(ctx context.Context, q queue.Reader, pools []string, log *slog.Logger, p plan.Plan) route.Decision {
	hosts, err := q.Hosts(ctx)
	if err != nil {
		log.Warn("route: the live runner hosts could not be read; the request goes to the first pool", "pool", pools[0], "err", err)
		return route.Decision{Pool: pools[0], NoHosts: true}
	}
	var rows []profile.Row
	for _, t := range p.Targets {
		rows = append(rows, t.Rows...)
	}
	return route.Choose(pools, hosts, rows)
}
