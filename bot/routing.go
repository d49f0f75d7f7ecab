package bot

import (
	"context"
	"strings"

	"github.com/arenabot/arenabot/bot/plan"
	"github.com/arenabot/arenabot/bot/route"
	"github.com/arenabot/arenabot/profile"
)

// route picks the pool of a request's plan from the live runner hosts (bot/route). When the
// hosts cannot be read, the request goes to the first pool and nothing is refused: the queue
// being unreachable fails the request a step later anyway, with its own reply.
func (in *Intake) route(ctx context.Context, p plan.Plan) route.Decision {
	hosts, err := in.q.Hosts(ctx)
	if err != nil {
		in.log.Warn("route: the live runner hosts could not be read; the request goes to the first pool", "pool", in.cfg.Pools[0], "err", err)
		return route.Decision{Pool: in.cfg.Pools[0], NoHosts: true}
	}
	var rows []profile.Row
	for _, t := range p.Targets {
		rows = append(rows, t.Rows...)
	}
	return route.Choose(in.cfg.Pools, hosts, rows)
}

// refusals is the refused tests' reasons, for a request none of whose rows runs.
func refusals(d route.Decision) string {
	var rs []string
	for _, f := range d.Refused {
		rs = append(rs, f.Reason())
	}
	return strings.Join(rs, "; ")
}
