package report_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/bot/command"
	"github.com/arenabot/arenabot/bot/plan"
	"github.com/arenabot/arenabot/bot/report"
	"github.com/arenabot/arenabot/md/mdtest"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/result"
)

// hostileInputs try every way out of their context: mentions of a team and of everyone,
// issue references, HTML, backticks, newlines, pipes and a fake marker.
var hostileInputs = []string{
	"@org/team",
	"@everyone",
	"#1",
	"o/r#2 GH-3",
	"<script>alert(1)</script>",
	"``",
	"a ` b",
	"line\n# heading\n> quote",
	"| cell | cell |",
	"<!-- arenabot:status request=r1 -->",
	"[x](https://evil.example) www.evil.example",
}

// hostile is all of them in one string.
var hostile = strings.Join(hostileInputs, " ")

// mapSource is a PR head in memory for plan.Resolve.
type mapSource map[string]string

func (s mapSource) ChangedFiles(context.Context) ([]string, error) { return nil, nil }

func (s mapSource) Dir(_ context.Context, dir string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for p := range s {
		rest, ok := strings.CutPrefix(p, dir+"/")
		if !ok {
			continue
		}
		if first, _, isDir := strings.Cut(rest, "/"); isDir {
			rest = first + "/"
		}
		if !seen[rest] {
			seen[rest] = true
			out = append(out, rest)
		}
	}
	if out == nil {
		return nil, fs.ErrNotExist
	}
	return out, nil
}

func (s mapSource) File(_ context.Context, p string) ([]byte, error) {
	data, ok := s[p]
	if !ok {
		return nil, fmt.Errorf("%s: %w", p, fs.ErrNotExist)
	}
	return []byte(data), nil
}

// replies renders every text the bot posts with hostile input in every field a user or the
// repository controls: the reply it posts (as report.Reply wraps it) and the logins it may
// mention there.
func replies(t *testing.T) map[string]string {
	out := map[string]string{}

	// Status comments, every phase.
	for _, p := range append(report.Phases, "weird") {
		s := report.Status{
			RequestID: hostile, Phase: p, Command: hostile, Requester: hostile, Approver: hostile,
			CancelledBy: hostile, DeclinedBy: hostile, SHA: hostile, HeadMoved: hostile,
			Frameworks: hostileInputs, Tests: hostileInputs, Estimate: time.Hour,
			Position: 2, ETA: time.Minute, Ahead: &report.Ahead{Repo: hostile, PR: 12, Running: true}, Progress: hostile, Done: 1, Total: 2, Reason: hostile,
			SupersededBy: hostile, SupersededHow: report.SupersededReplaced, ResultsURL: hostile, CommitURL: hostile,
			Expires: time.Date(2024, 5, 3, 14, 0, 0, 0, time.UTC),
		}
		for _, h := range hostileInputs {
			s.Rows = append(s.Rows, profile.Row{Entry: h, Test: h, Conns: 1})
		}
		out["status "+string(p)] = report.RenderStatus(s)
	}

	// Final replies without results, every outcome.
	for _, o := range []report.Outcome{report.OutcomeDeclined, report.OutcomeExpired, report.OutcomeCancelled,
		report.OutcomeSuperseded, report.OutcomeFailed, report.OutcomeLost, "weird"} {
		out["ending "+string(o)] = report.RenderEnding(report.Ending{
			RequestID: hostile, Requester: hostile, Command: hostile, Outcome: o, By: hostile,
			SupersededBy: hostile, SupersededHow: report.SupersededDisplaced, Reason: hostile, StatusURL: hostile,
		})
	}

	// Results, with and without rows.
	for _, state := range []string{"done", "failed", "cancelled", "lost", "superseded", "weird"} {
		res := &result.Result{Entry: hostile, Profile: hostile, Connections: 1, Host: hostile, Tool: hostile}
		res.FromRuns([]result.Run{{RPS: 1000, Requests: 5000, Status2xx: 5000, DurationS: 5, CPUCores: 1, MemoryPeak: 1 << 20}})
		r := report.Results{
			RequestID: hostile, Command: hostile, Requester: hostile, State: state, Reason: hostile, SHA: hostile,
			Compare: hostile, CommitSHA: hostile, CommitURL: hostile, StatusURL: hostile, Patch: []string{"+++ b/" + hostile + "\n+x\n"},
			Report: result.Report{
				Commit: hostile, BaseRef: hostile, BaseCommit: hostile, Host: hostile, Mode: hostile, Error: hostile,
				Frameworks: hostileInputs, Tests: hostileInputs, Log: hostileInputs,
			},
		}
		out["results empty "+state] = strings.Join(report.RenderResults(r), "\n")
		for _, h := range hostileInputs {
			r.Report.Rows = append(r.Report.Rows,
				result.Row{Entry: h, Display: hostile, Profile: h, Conns: 1, Err: hostile, Short: hostile,
					BuildLog: hostileInputs, Advisories: hostileInputs},
				result.Row{Entry: h, Display: hostile, Profile: h + "2", Conns: 2, Result: res})
		}
		out["results "+state] = strings.Join(report.RenderResults(r), "\n")

		// Rows measured against a base in the job, whose base names and reasons are hostile:
		// the header names the base, the Δ cells and the reasons under the tables.
		r.Report.MergeBase = hostile
		r.Report.Rows = nil
		for i, h := range hostileInputs {
			based := *res
			based.Base = &result.Side{Entry: h, Ref: hostile, Commit: hostile, Image: hostile, Order: hostile, Stop: hostile, Runs: res.Runs}
			failed := *res
			failed.Base = &result.Side{Entry: h, Ref: hostile, Commit: hostile, Err: hostile + fmt.Sprint(i)}
			r.Report.Rows = append(r.Report.Rows,
				result.Row{Entry: h, Display: hostile, Profile: h, Conns: 1, Result: &based},
				result.Row{Entry: h, Display: hostile, Profile: h + "2", Conns: 2, Result: &failed},
				result.Row{Entry: h, Display: hostile, Profile: h + "3", Conns: 3, Result: res})
		}
		r.Report.Baselines = []result.Baseline{{Entry: hostile, Present: true, Tests: hostileInputs, Results: []result.Result{*res}}}
		out["results based "+state] = strings.Join(report.RenderResults(r), "\n")
		r.Compare = ""
		out["results based, no compare "+state] = strings.Join(report.RenderResults(r), "\n")
		r.Compare = hostile
	}

	// Usage errors, as the reply to the command shows them.
	for _, h := range hostileInputs {
		for _, body := range []string{
			"/benchmark -f gin " + strings.ReplaceAll(h, "\n", " "),
			"/benchmark --" + h,
			"/benchmark -f '" + h + "'",
			"/benchmark-" + h,
		} {
			c, found, err := command.Parse(body)
			ue, ok := errors.AsType[*command.UsageError](err)
			if !found || !ok {
				t.Fatalf("Parse(%q) = %v, %v; want a usage error", body, found, err)
			}
			out["usage "+body] = report.RenderProblem(c.Line, ue.Problem, ue.Fix)
		}
	}

	// Resolve errors, with hostile names in the command and in the repository.
	src := mapSource{
		"frameworks/gin/meta.json":         `{"display_name": "Gin", "language": "Go", "type": "production", "engine": "x", "enabled": true, "tests": ["baseline"]}`,
		"frameworks/#1/meta.json":          `{"display_name": "@org/team #1 <script>",`,
		"frameworks/@everyone/meta.json":   `{}`,
		"frameworks/<script>.go/meta.json": `{}`,
	}
	for _, h := range hostileInputs {
		for _, c := range []command.Command{
			{Kind: command.KindBenchmark, Frameworks: []string{h}, Line: hostile},
			{Kind: command.KindBenchmark, Frameworks: []string{"gin"}, Tests: []string{h}, Line: hostile},
			{Kind: command.KindBenchmark, Frameworks: []string{"gin"}, Compare: h, Line: hostile},
			{Kind: command.KindBenchmark, Frameworks: []string{"#1"}, Line: hostile},
			{Kind: command.KindTest, Tests: []string{h}, Line: hostile},
		} {
			_, err := plan.Resolve(context.Background(), src, c)
			if err == nil {
				continue // "@everyone" is an entry of src
			}
			re, ok := errors.AsType[*plan.ResolveError](err)
			if !ok {
				t.Fatalf("Resolve(%+v) = %v, want a *ResolveError", c, err)
			}
			out[fmt.Sprintf("resolve %+v", c)] = report.RenderProblem(c.Line, re.Problem, re.Fix)
		}
	}

	// Help.
	out["help"] = command.Help()
	for name, body := range out {
		out[name] = report.Reply(hostile, body)
	}
	out["help to alice"] = report.Reply("alice", command.Help())
	return out
}

// TestEveryReplyIsInert renders every reply, status and help text with hostile input and
// checks that nothing of the input is live outside code: no mention (but of a valid
// requester), no issue reference, no HTML, no link away, no extra HTML comment, and no
// heading glued to the mention.
func TestEveryReplyIsInert(t *testing.T) {
	for name, out := range replies(t) {
		var allowed []string
		if name == "help to alice" {
			allowed = []string{"alice"}
		}
		if abuse := mdtest.Abuse(out, allowed...); len(abuse) > 0 {
			t.Errorf("%s: %v:\n%s", name, abuse, out)
		}
		markers := 0
		if strings.HasPrefix(name, "status") || strings.HasPrefix(name, "ending") {
			markers = 1
		}
		if strings.HasPrefix(name, "results") {
			markers = strings.Count(out, "<!-- arenabot:results ")
		}
		if n := strings.Count(out, "<!--"); n != markers {
			t.Errorf("%s: %d HTML comments, want %d:\n%s", name, n, markers, out)
		}
		live := mdtest.Live(out)
		for _, bad := range []string{"javascript:", "https://evil", "<script", "\n# heading", "\n> quote"} {
			if strings.Contains(live, bad) {
				t.Errorf("%s: live %q:\n%s", name, bad, out)
			}
		}
		if lines := strings.SplitN(out, "\n", 3); len(lines) < 3 || lines[1] != "" || strings.Contains(mdtest.Live(lines[0]), "#") {
			t.Errorf("%s: the mention is not alone on the first line: %q", name, lines)
		}
	}
}
