package bot

import "strings"

// serves reports whether the bot acts on repo: Config.Repos holds it (case aside, as GitHub
// compares names), or Repos is empty.
func (c *core) serves(repo string) bool {
	if len(c.cfg.Repos) == 0 {
		return true
	}
	for _, r := range c.cfg.Repos {
		if strings.EqualFold(r, repo) {
			return true
		}
	}
	return false
}

// foreign reports whether an event of delivery comes from a repository the bot does not
// serve; such an event is logged and counted (arena_webhook_foreign_total), and the caller
// drops it before any GitHub call or queue write.
func (in *Intake) foreign(delivery, event, repo string) bool {
	if in.serves(repo) {
		return false
	}
	in.foreignSeen.Add(1)
	in.log.Warn("delivery from a repository this bot does not serve ignored; add it to ARENA_REPOS to serve it", "delivery", delivery, "event", event, "repo", repo, "served", in.cfg.Repos)
	return true
}
