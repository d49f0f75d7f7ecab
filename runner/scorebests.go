package runner

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/runner/measure"
	"github.com/arenabot/arenabot/text"
)

// resultPathRE matches a committed result file: frameworks/<entry>/results/<profile>-<conns>.json.
var resultPathRE = regexp.MustCompile(`^frameworks/([A-Za-z0-9][A-Za-z0-9._-]*)/` + result.Dir + `/(.+)-([0-9]+)\.json$`)

// scoredProfiles are the plan's profiles the arena scores (profile.Figures().Scored), each once.
func scoredProfiles(plan measure.Plan) []string {
	var out []string
	for _, t := range plan.Targets {
		for _, p := range t.Profiles {
			if p.Figures().Scored && !slices.Contains(out, p.Name) {
				out = append(out, p.Name)
			}
		}
	}
	return out
}

// sitePathRE matches a results file of today's layout: site/data/results/<slug>.json (the
// lite directory below it is not the benchmark host's).
var sitePathRE = regexp.MustCompile(`^` + regexp.QuoteMeta(result.SiteResultsDir) + `/[^/]+\.json$`)

// scoreBests reads the results every entry committed at base for the scored profiles (every
// connection count) and returns the lowest figures of each, the bests the arena's score
// measures a row against. Both layouts are read: today's files (site/data/results/*.json, every
// row) and the April layout's (frameworks/<entry>/results/), whose rows count only where
// today's has none of that entry, profile and connection count. A profile no entry committed
// a scored result of is left out; a file that does not parse is skipped, with a log line.
func (r repo) scoreBests(ctx context.Context, base string, profiles []string, scratch string, log *slog.Logger) map[string]result.Bests {
	if len(profiles) == 0 {
		return nil
	}
	out, err := r.git(ctx, nil, "ls-tree", "-r", "--name-only", base, "--", "frameworks", result.SiteResultsDir)
	if err != nil {
		log.Warn("committed results unreadable for the scores", "err", err)
		return nil
	}
	var paths, sites []string
	for _, p := range strings.Split(string(out), "\n") {
		if m := resultPathRE.FindStringSubmatch(p); m != nil && slices.Contains(profiles, m[2]) {
			paths = append(paths, p)
		}
		if sitePathRE.MatchString(p) {
			sites = append(sites, p)
		}
	}
	if len(paths)+len(sites) == 0 {
		return nil
	}
	if err := r.extract(ctx, base, scratch, append(slices.Clone(sites), paths...)...); err != nil {
		log.Warn("committed results unreadable for the scores", "err", err)
		return nil
	}
	var rows []result.Result
	seen := map[string]bool{} // entry (or, for the arena's rows, display name), profile, conns
	for _, p := range sites {
		b, err := os.ReadFile(filepath.Join(scratch, filepath.FromSlash(p)))
		var rs []result.Result
		if err == nil {
			var f result.SiteFile
			if f, err = result.DecodeSite(b); err == nil {
				rs, err = f.Rows()
			}
		}
		if err != nil {
			log.Warn("committed results skipped for the scores", "file", p, "err", err)
			continue
		}
		for _, res := range rs {
			if slices.Contains(profiles, res.Profile) {
				seen[text.Or(res.Entry, res.Framework)+" "+result.Key(res.Profile, res.Connections)] = true
				rows = append(rows, res)
			}
		}
	}
	for _, p := range paths {
		b, err := os.ReadFile(filepath.Join(scratch, filepath.FromSlash(p)))
		if err != nil {
			log.Warn("committed result unreadable for the scores", "file", p, "err", err)
			continue
		}
		res, err := result.Unmarshal(b)
		if err != nil || !slices.Contains(profiles, res.Profile) {
			log.Warn("committed result skipped for the scores", "file", p, "err", err)
			continue
		}
		entry := resultPathRE.FindStringSubmatch(p)[1]
		if !seen[entry+" "+result.Key(res.Profile, res.Connections)] {
			rows = append(rows, res)
		}
	}
	bests := map[string]result.Bests{}
	for _, res := range rows {
		best := bests[res.Profile]
		best.Lower(res)
		if best.Results > 0 {
			bests[res.Profile] = best
		}
	}
	return bests
}
