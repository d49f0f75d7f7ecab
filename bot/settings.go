package bot

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/arenabot/arenabot/bot/ghapi"
	"github.com/arenabot/arenabot/md"
	"github.com/arenabot/arenabot/settings"
)

// repoSettings are the settings in force for one repository's request: its settings file
// as read from the pull request's base branch, or the last good one when that is not valid.
type repoSettings struct {
	File settings.File
	// Source names the file in force ("`.arenabot.yml` on `main`"); "" when none is (the
	// operator's defaults).
	Source string
	// Warning says that the file on the base branch is not valid, its problems and what
	// applies instead; "" when it is valid or absent.
	Warning string
}

// goodSettings remembers each repository's last valid settings file, so that a broken edit
// of it on the default branch keeps the gate that was in force instead of dropping it. It
// is the process's memory: a restarted bot facing a broken file applies the operator's
// defaults, and says so, until the file is fixed.
type goodSettings struct {
	mu   sync.Mutex
	last map[string]lastGood // by lower-case repository
}

type lastGood struct {
	file   settings.File
	source string
	read   time.Time
}

// settings reads repo's settings file at the base branch ref (never the pull request's
// head: a pull request does not loosen its own gate). A missing file is the operator's
// defaults; an unreadable one (GitHub failing) or a bad one falls back to the last good
// file, with a warning that says which applies.
func (c *core) settings(ctx context.Context, inst int64, repo, ref string) repoSettings {
	key := strings.ToLower(repo)
	where := md.Code(settings.FileName) + " on " + md.Code(ref)
	if ref == "" {
		where = md.Code(settings.FileName) + " on the default branch"
	}
	data, err := c.gh.File(ctx, inst, repo, ref, settings.FileName)
	if errors.Is(err, ghapi.ErrNotFound) {
		c.good.forget(key)
		return repoSettings{}
	}
	var problem string
	if err != nil {
		c.log.Warn("settings file", "repo", repo, "ref", ref, "err", err)
		problem = where + " could not be read from GitHub"
	} else {
		f, perr := settings.Parse(data, settings.Limits{Pools: c.cfg.Pools})
		if perr == nil {
			c.good.keep(key, lastGood{file: f, source: where, read: c.cfg.Now()})
			return repoSettings{File: f, Source: where}
		}
		problem = where + " is not valid: " + md.Text(strings.TrimPrefix(perr.Error(), settings.FileName+": "))
	}
	if g, ok := c.good.get(key); ok {
		return repoSettings{File: g.file, Source: g.source + " as last read valid, at " + g.read.UTC().Format("2006-01-02 15:04 UTC"),
			Warning: problem + ". The last valid file's settings apply until it is fixed."}
	}
	return repoSettings{Warning: problem + ". The bot's defaults apply until it is fixed."}
}

func (g *goodSettings) keep(key string, l lastGood) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.last == nil {
		g.last = map[string]lastGood{}
	}
	g.last[key] = l
}

func (g *goodSettings) get(key string) (lastGood, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	l, ok := g.last[key]
	return l, ok
}

func (g *goodSettings) forget(key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.last, key)
}

// operator is what applies where the settings file is silent.
func (c *core) operator() settings.Operator {
	return settings.Operator{Depth: c.cfg.QueueDepth, Pools: c.cfg.Pools}
}

// settingsHelp is the part of /benchmark-help that shows the settings in force.
func settingsHelp(st repoSettings, op settings.Operator) string {
	var b strings.Builder
	b.WriteString("### Settings in force\n\n")
	switch {
	case st.Source != "":
		b.WriteString("From " + st.Source + "; where it is silent, the bot's defaults.\n\n")
	case st.Warning == "":
		b.WriteString("The bot's defaults: this repository has no " + md.Code(settings.FileName) + " on the pull request's base branch.\n\n")
	}
	for _, item := range st.File.Items(op) {
		b.WriteString("- " + item + "\n")
	}
	if st.Warning != "" {
		b.WriteString("\n> [!WARNING]\n> " + md.Trusted(st.Warning) + "\n")
	}
	return b.String()
}
