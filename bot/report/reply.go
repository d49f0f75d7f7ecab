package report

import (
	"strings"

	"github.com/arenabot/arenabot/md"
)

// Reply returns the whole body of a reply to requester: the mention (md.Mention: "@alice",
// or the login as code when it is not a valid one) alone on the first line, a blank line,
// then body. So a body that starts with a heading still renders it; body is bot-written
// Markdown and is not escaped. With no requester it is body alone.
func Reply(requester, body string) string {
	body = strings.TrimLeft(body, "\r\n")
	m := md.Mention(requester)
	if m == "" {
		return body
	}
	return m + "\n\n" + body
}

// RenderProblem renders the body of a reply to a command that cannot run: the command line
// as written (in a code span), the problem and the fix. problem and fix are Markdown on one
// line each, as command.UsageError and plan.ResolveError give them (every name and command
// in them is already a code span); they are kept to one line and cannot open an HTML
// comment. The body starts with the command, not a heading, so Reply or a "@user " prefix
// both render.
func RenderProblem(line, problem, fix string) string {
	var b strings.Builder
	if strings.TrimSpace(line) != "" {
		b.WriteString(md.Code(line) + "\n\n")
	}
	b.WriteString("**Problem:** " + md.Trusted(problem))
	if strings.TrimSpace(fix) != "" {
		b.WriteString("\n\n**Fix:** " + md.Trusted(fix))
	}
	return b.String()
}

// An Outcome is how a request ended without results, for RenderEnding.
type Outcome string

// The outcomes of RenderEnding.
const (
	OutcomeDeclined   Outcome = "declined"   // a collaborator declined it
	OutcomeExpired    Outcome = "expired"    // nobody approved it in time
	OutcomeCancelled  Outcome = "cancelled"  // cancelled before it measured anything
	OutcomeSuperseded Outcome = "superseded" // a newer request took its place
	OutcomeFailed     Outcome = "failed"     // the job failed before any row
	OutcomeLost       Outcome = "lost"       // the runner stopped responding, twice
)

// An Ending is the final reply of a request that ended without results to show (a request
// with rows gets RenderResults instead).
type Ending struct {
	RequestID string // goes into the hidden EndingMarker only
	Requester string // login, mentioned on the first line
	Command   string // the command line as written
	Outcome   Outcome
	// By is who declined (OutcomeDeclined) or cancelled (OutcomeCancelled) the request, a
	// login; "" names nobody.
	By string
	// SupersededBy is the https URL of the newer request's status comment
	// (OutcomeSuperseded); SupersededHow says how it took this one's place.
	SupersededBy  string
	SupersededHow SupersededHow
	// Reason is the runner's reason (OutcomeFailed, OutcomeLost): untrusted, escaped.
	Reason    string
	StatusURL string // link to the status comment
}

// EndingMarker is the hidden marker of a request's final reply without results,
// "<!-- arenabot:ending request=<id> -->" (the id encoded as in Marker), by which a retried
// post finds the reply it already posted. It differs from every Marker and ResultsMarker.
func EndingMarker(requestID string) string {
	return "<!-- arenabot:ending request=" + markerID(requestID) + " -->"
}

// endingTitle is the title of each outcome.
var endingTitle = map[Outcome]string{
	OutcomeDeclined:   "Benchmark request declined",
	OutcomeExpired:    "Benchmark request expired",
	OutcomeCancelled:  "Benchmark cancelled",
	OutcomeSuperseded: "Benchmark request superseded",
	OutcomeFailed:     "Benchmark failed",
	OutcomeLost:       "Benchmark lost",
}

// RenderEnding renders the final reply of a request that ended without results: the
// requester's mention alone on the first line, a title per outcome ("## Benchmark request
// declined", "## Benchmark request expired", "## Benchmark cancelled", "## Benchmark request
// superseded", "## Benchmark failed", "## Benchmark lost"), what happened to the command (in
// a code span), what to do next, a link to the status comment and, last, the hidden
// EndingMarker. No request ID is visible; the same Ending always gives the same body.
func RenderEnding(e Ending) string {
	title, ok := endingTitle[e.Outcome]
	if !ok {
		title = "Benchmark request ended"
	}
	cmd := "The request"
	if strings.TrimSpace(e.Command) != "" {
		cmd = "The request " + md.Code(e.Command)
	}
	by := md.Mention(md.Clip(e.By, 60))
	reason := strings.TrimRight(md.Text(md.Clip(e.Reason, 500)), ".")

	var what, next string
	switch e.Outcome {
	case OutcomeDeclined:
		what = cmd + " was declined"
		if by != "" {
			what += " by " + by
		}
		what += ", so it will not run."
		next = "If it should run after all, ask a maintainer what to change, then comment the command again."
	case OutcomeExpired:
		what = cmd + " expired: nobody with write access approved it in time, so it will not run."
		next = "To try again, comment the command again and ask a maintainer to approve it " +
			"(👍 on its status comment, or `/benchmark-approve`)."
	case OutcomeCancelled:
		what = cmd + " was cancelled"
		if by != "" {
			what += " by " + by
		}
		what += " before anything was measured."
		next = "To run it after all, comment the command again."
	case OutcomeSuperseded:
		what = supersededText(e.SupersededHow, e.SupersededBy) + " " + cmd + " will not run."
		switch e.SupersededHow {
		case SupersededReplaced:
			next = "Nothing to do: the newer request runs instead."
		case SupersededDisplaced:
			next = "Each pull request has one request waiting in line, its newest approved one; other pull requests' requests keep their places. " +
				"To measure this one as well, comment the command again once the newer request has run."
		default:
			next = "To measure this one as well, comment the command again once the newer request has run."
		}
	case OutcomeFailed:
		what = cmd + " failed before any measurement"
		if reason != "" {
			what += ": " + reason
		}
		what += "."
		next = "If the failure is not caused by this pull request, comment the command again to retry; " +
			"otherwise push a fix first."
	case OutcomeLost:
		what = cmd + " was lost: the runner stopped responding and the job was not retried again"
		if reason != "" {
			what += " (" + reason + ")"
		}
		what += "."
		next = "Comment the command again to retry; if it happens again, tell the maintainers of the benchmark runner."
	default:
		what = cmd + " ended without results."
		if reason != "" {
			what = cmd + " ended without results: " + reason + "."
		}
		next = "Comment the command again to make a new request."
	}

	var b strings.Builder
	b.WriteString("## " + title + "\n\n")
	b.WriteString(what + "\n\n" + next + "\n")
	if l := md.Link("status comment", e.StatusURL); l != "" {
		b.WriteString("\n**Status:** " + l + "\n")
	}
	b.WriteString("\n" + EndingMarker(e.RequestID))
	return Reply(e.Requester, b.String())
}
