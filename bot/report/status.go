package report

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/arenabot/arenabot/md"
	"github.com/arenabot/arenabot/profile"
)

// A Phase is where a request is in its life (docs/contributing-an-entry.md, "The status comment", walks through them).
type Phase string

// The phases of a request. The last six are final.
const (
	PhaseAwaitingApproval Phase = "awaiting_approval"
	PhaseQueued           Phase = "queued"
	PhaseRunning          Phase = "running"
	PhaseDone             Phase = "done"
	PhaseFailed           Phase = "failed"
	PhaseCancelled        Phase = "cancelled"
	PhaseSuperseded       Phase = "superseded"
	PhaseExpired          Phase = "expired"
	PhaseRejected         Phase = "rejected"
)

// Phases lists every phase in lifecycle order.
var Phases = []Phase{
	PhaseAwaitingApproval, PhaseQueued, PhaseRunning, PhaseDone, PhaseFailed,
	PhaseCancelled, PhaseSuperseded, PhaseExpired, PhaseRejected,
}

// Final reports whether the phase ends the request.
func (p Phase) Final() bool {
	switch p {
	case PhaseDone, PhaseFailed, PhaseCancelled, PhaseSuperseded, PhaseExpired, PhaseRejected:
		return true
	}
	return false
}

// SupersededHow says how a request was superseded.
type SupersededHow string

// The ways a request is superseded.
const (
	// SupersededReplaced: the same requester's newer request on the same pull request
	// replaced it while it awaited approval.
	SupersededReplaced SupersededHow = "replaced"
	// SupersededDisplaced: a newer approved request on the same pull request took its place
	// in line (each pull request has one request waiting).
	SupersededDisplaced SupersededHow = "displaced"
)

// A Status is everything the status comment of one request shows. All strings except ForkNote,
// RouteNote, ApproveHow and RunnerNote are treated as untrusted and escaped; those are written by
// the bot and rendered as Markdown on one line; URLs are linked only when they are plain https
// URLs (md.URL). The status comment shows no request ID but in its hidden Marker.
type Status struct {
	RequestID string // goes into the hidden marker only
	Phase     Phase
	Command   string // the command line as written, e.g. "/benchmark -f gin --save"
	Requester string // login
	// Approver is who approved the request; in the rejected phase, who declined it unless
	// DeclinedBy says so.
	Approver string
	// CancelledBy is who cancelled the request (cancelled phase), shown as "Cancelled by
	// @login"; "" when nobody is named (an operator's drain).
	CancelledBy string
	// DeclinedBy is who declined the request (rejected phase), shown as "Declined by
	// @login"; "" falls back to Approver.
	DeclinedBy string
	// SHA is the commit that will be / was measured; the first 12 characters are shown.
	SHA string
	// HeadMoved is the new head SHA when the PR got new commits after the ack.
	HeadMoved  string
	Frameworks []string
	Tests      []string
	Rows       []profile.Row // the plan: frameworks × tests × connection counts
	Estimate   time.Duration
	Position   int           // queued: place in line, the running job's counted (1 = next)
	ETA        time.Duration // queued: expected wait
	Ahead      *Ahead        // queued: the request just ahead in line (Position > 1); nil names none
	Progress   string        // running: e.g. "baseline 4096c — 3 of 24"
	Done       int           // running (and failed): rows finished
	Total      int           // running (and failed): rows in all
	// Hosts, running, is how many hosts measure the job's rows, when it was split over
	// several (0 or 1: one); the estimate of the time left then counts them.
	Hosts int
	// Reason says why the request failed, was cancelled, expired or was rejected. It is not
	// shown when the request was superseded: SupersededHow and SupersededBy say it all (the
	// queue's reason names the newer request by its internal ID).
	Reason string
	// SupersededBy is the https URL of the newer request's status comment (superseded phase);
	// it is linked when it is a plain https URL and never shown otherwise.
	SupersededBy  string
	SupersededHow SupersededHow // superseded: how; "" says only that a newer request took its place
	ResultsURL    string        // done: link to the results comment
	CommitURL     string        // done with --save: link to the results commit
	ForkNote      string        // ack: what --save does on this fork
	RouteNote     string        // ack: the tests no live runner host can run (route.Decision.Note)
	ApproveHow    string        // optional override of the approval instructions
	// RunnerNote is a bot-written note about the runners, shown in the queued and running
	// phases: "No runner of pool `default` has been seen since 10:04 UTC; the job runs when
	// one starts."
	RunnerNote string
	Expires    time.Time // awaiting approval: when the request expires
	// Settings is what the repository's settings file in force sets, bot-written with the
	// file's values in code spans: "`.arenabot.yml` on `main`: gated on `baseline`";
	// SettingsWarning that the file on the base branch is not valid and what applies
	// instead. Gate is what the request's check is judged on (nil: profile.DefaultGate).
	Settings        string
	SettingsWarning string
	Gate            profile.Gate
}

// Ahead is the request just ahead of a queued one in its line: "behind `octo/arena` PR
// 12's running job".
type Ahead struct {
	Repo    string // its repository, untrusted: shown as code; "" for an operator's job
	PR      int    // its pull request; 0 for an operator's job
	Running bool   // it runs now
	ThisPR  bool   // it is of the same pull request as the queued one
}

// MaxStatusBytes bounds a rendered status comment; GitHub's limit is 65,536 characters.
const MaxStatusBytes = 60_000

// MaxPlanLines bounds the plan table shown in a status comment, for readability; the byte
// budget may cut it shorter.
const MaxPlanLines = 100

const (
	markerPrefix = "<!-- arenabot:status request="
	markerSuffix = " -->"
	barWidth     = 20
)

// Marker is the hidden HTML comment that identifies the status comment of a request:
// "<!-- arenabot:status request=<id> -->". The bot finds its comment again by it. Bytes of the
// id outside [A-Za-z0-9._/-] are percent-encoded, and an id that would encode to more than
// 128 bytes is replaced by "~sha256-<hex>" of the id, so the marker is always short, always one
// line, and distinct ids give distinct markers.
func Marker(requestID string) string {
	return markerPrefix + markerID(requestID) + markerSuffix
}

func markerID(id string) string {
	if len(id) > 128 {
		return hashID(id)
	}
	var b strings.Builder
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._/-", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	if b.Len() > 128 {
		return hashID(id)
	}
	return b.String()
}

// hashID names a long id; '~' is always encoded, so no short id gives this.
func hashID(id string) string {
	sum := sha256.Sum256([]byte(id))
	return "~sha256-" + hex.EncodeToString(sum[:])
}

var phaseHead = map[Phase]string{
	PhaseAwaitingApproval: "👀 **Benchmark request awaiting approval**",
	PhaseQueued:           "📋 **Benchmark queued**",
	PhaseRunning:          "⏳ **Benchmark running**",
	PhaseDone:             "✅ **Benchmark done**",
	PhaseFailed:           "❌ **Benchmark failed**",
	PhaseCancelled:        "🚫 **Benchmark cancelled**",
	PhaseSuperseded:       "⏭️ **Benchmark superseded** by a newer request",
	PhaseExpired:          "⌛ **Benchmark request expired** without approval",
	PhaseRejected:         "⛔ **Benchmark request declined**",
}

// RenderStatus renders the status comment of a request: a headline with an emoji per phase,
// what runs (command, requester, commit, frameworks, tests, the plan and its estimate), the
// details of the phase, the head-moved warning, the fork note and, as the last line, the
// hidden Marker. The result is always under MaxStatusBytes: the plan table is cut short with
// "… and N more measurements" when needed.
func RenderStatus(s Status) string {
	head := statusHead(s)
	tail := statusTail(s)
	plan := statusPlan(s, MaxStatusBytes-1-len(head)-len(tail))
	return head + plan + tail
}

// statusHead renders the headline and the summary list.
func statusHead(s Status) string {
	var b strings.Builder
	headline, ok := phaseHead[s.Phase]
	if !ok {
		headline = "ℹ️ **Benchmark request** (" + md.Code(md.Clip(string(s.Phase), 40)) + ")"
	}
	b.WriteString(headline)
	if s.Phase == PhaseRunning && strings.TrimSpace(s.Progress) != "" {
		b.WriteString(": " + md.Text(md.Clip(s.Progress, 200)))
	}
	b.WriteString("\n\n")

	if s.Command != "" || s.Requester != "" {
		b.WriteString("- **Command:** ")
		if s.Command != "" {
			b.WriteString(md.Code(s.Command))
		}
		if s.Requester != "" {
			b.WriteString(" requested by " + md.Code(md.Clip(s.Requester, 60)))
		}
		b.WriteString("\n")
	}
	if s.Approver != "" && s.Phase != PhaseAwaitingApproval && s.Phase != PhaseExpired && s.Phase != PhaseRejected {
		fmt.Fprintf(&b, "- **Approved by:** %s\n", md.Code(md.Clip(s.Approver, 60)))
	}
	if s.SHA != "" {
		b.WriteString("- **Commit:** " + shortSHA(s.SHA) + "\n")
	}
	if len(s.Frameworks) > 0 {
		b.WriteString("- **Frameworks:** " + nameList(s.Frameworks) + "\n")
	}
	if len(s.Tests) > 0 {
		b.WriteString("- **Tests:** " + nameList(s.Tests) + "\n")
	}
	if s.Settings != "" {
		b.WriteString("- **Settings:** " + md.Trusted(s.Settings) + "\n")
	}
	if len(s.Rows) > 0 || s.Estimate > 0 {
		b.WriteString("- **Measurements:** ")
		if len(s.Rows) > 0 {
			b.WriteString(strconv.Itoa(len(s.Rows)))
			if s.Estimate > 0 {
				b.WriteString(", ")
			}
		}
		if s.Estimate > 0 {
			b.WriteString("estimated " + formatWait(s.Estimate))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// statusPlan renders the plan table in at most budget bytes: one line per run of rows with
// the same entry and test, their connection counts joined. Outside the approval phase the
// table is folded into a <details> block.
func statusPlan(s Status, budget int) string {
	if len(s.Rows) == 0 {
		return ""
	}
	type group struct {
		entry, test string
		conns       []int
	}
	var groups []group
	for _, r := range s.Rows {
		if n := len(groups); n > 0 && groups[n-1].entry == r.Entry && groups[n-1].test == r.Test {
			groups[n-1].conns = append(groups[n-1].conns, r.Conns)
			continue
		}
		groups = append(groups, group{r.Entry, r.Test, []int{r.Conns}})
	}

	open, closing := "\n", ""
	if s.Phase != PhaseAwaitingApproval {
		open = "\n<details><summary>Plan: " + md.Plural(len(s.Rows), "measurement", "measurements") + "</summary>\n\n"
		closing = "\n</details>\n"
	}
	const header = "| Framework | Test | Connections |\n|---|---|---|\n"
	const moreReserve = 64 // "… and N more measurements" line
	var b strings.Builder
	b.WriteString(open + header)
	shown := 0
	for i, g := range groups {
		line := "| " + md.CodeCell(md.Clip(g.entry, 100)) + " | " + md.Cell(md.Clip(g.test, 100)) + " | " + connList(g.conns) + " |\n"
		if i >= MaxPlanLines || b.Len()+len(line)+moreReserve+len(closing) >= budget {
			break
		}
		b.WriteString(line)
		shown += len(g.conns)
	}
	if more := len(s.Rows) - shown; more > 0 {
		fmt.Fprintf(&b, "\n… and %d more %s\n", more, measurementsWord(more))
	}
	b.WriteString(closing)
	if b.Len() >= budget {
		return "" // cannot happen: head and tail are bounded well below the budget
	}
	return b.String()
}

// statusTail renders the phase details, the warnings and the marker.
func statusTail(s Status) string {
	var b strings.Builder
	var details []string
	add := func(format string, args ...any) { details = append(details, fmt.Sprintf(format, args...)) }
	reason := func(label string) {
		if strings.TrimSpace(s.Reason) != "" {
			add("**%s:** %s", label, md.Text(md.Clip(s.Reason, 300)))
		}
	}
	switch s.Phase {
	case PhaseAwaitingApproval:
		if s.HeadMoved != "" && s.SHA != "" {
			add("A collaborator with write access approves by commenting %s; 👎 declines.", md.Code("/benchmark-approve "+shortRaw(s.SHA)))
		} else if s.ApproveHow != "" {
			add("%s", md.Trusted(s.ApproveHow))
		} else {
			add("A collaborator with write access approves by reacting 👍 to this comment or by commenting `/benchmark-approve`; 👎 declines.")
		}
		if s.SHA != "" {
			add("Approval binds to commit %s: exactly that commit is measured.", shortSHA(s.SHA))
		}
		if !s.Expires.IsZero() {
			add("The request expires on **%s** if nobody approves it.", formatTime(s.Expires))
		}
	case PhaseQueued:
		var parts []string
		switch {
		case s.Position == 1:
			parts = append(parts, "**Next** in line")
		case s.Position > 1:
			parts = append(parts, "**"+Ordinal(s.Position)+"** in line"+behind(s.Ahead))
		}
		if s.ETA > 0 {
			parts = append(parts, "expected wait "+formatWait(s.ETA))
		}
		if len(parts) == 0 {
			parts = append(parts, "Waiting for a runner")
		}
		add("%s.", strings.Join(parts, " · "))
	case PhaseRunning:
		if s.Total > 0 && s.Hosts > 1 {
			line := fmt.Sprintf("%s %s done on %d hosts", progressBar(s.Done, s.Total), measurementsWord(s.Total), s.Hosts)
			if s.Estimate > 0 {
				left := s.Estimate * time.Duration(s.Total-s.Done) / time.Duration(s.Total) / time.Duration(s.Hosts)
				line += " · " + formatWait(left) + " left"
			}
			add("%s", line)
		} else if s.Total > 0 {
			add("%s %s done", progressBar(s.Done, s.Total), measurementsWord(s.Total))
		} else {
			add("Preparing the run.")
		}
	case PhaseDone:
		var links []string
		if u := md.Link("results", s.ResultsURL); u != "" {
			links = append(links, "**Results:** "+u)
		}
		if u := md.Link("results commit", s.CommitURL); u != "" {
			links = append(links, "**Saved:** "+u)
		}
		if len(links) == 0 {
			links = append(links, "The results are in the reply below.")
		}
		add("%s", strings.Join(links, " · "))
	case PhaseFailed:
		reason("Reason")
		if s.Total > 0 {
			add("%s %s done before the failure.", progressBar(s.Done, s.Total), measurementsWord(s.Total))
		}
	case PhaseCancelled:
		if by := md.Mention(s.CancelledBy); by != "" {
			add("Cancelled by %s.", by)
		}
		reason("Reason")
	case PhaseSuperseded:
		add("%s", supersededText(s.SupersededHow, s.SupersededBy))
	case PhaseExpired:
		if !s.Expires.IsZero() {
			add("Nobody approved this request before **%s**. Comment the command again to make a new request.", formatTime(s.Expires))
		} else {
			add("Nobody approved this request in time. Comment the command again to make a new request.")
		}
		reason("Reason")
	case PhaseRejected:
		by := s.DeclinedBy
		if by == "" {
			by = s.Approver
		}
		if by := md.Mention(by); by != "" {
			add("Declined by %s.", by)
		}
		reason("Reason")
	default:
		reason("Reason")
	}
	if (s.Phase == PhaseQueued || s.Phase == PhaseRunning) && strings.TrimSpace(s.RunnerNote) != "" {
		add("%s", md.Trusted(s.RunnerNote))
	}
	for _, d := range details {
		b.WriteString("\n" + d + "\n")
	}
	if s.HeadMoved != "" && s.SHA != "" && s.Phase == PhaseAwaitingApproval {
		fmt.Fprintf(&b, "\n> [!WARNING]\n> The head of this pull request moved from %s to %s since this request was acknowledged, "+
			"so a 👍 on this comment no longer approves it: \"Files changed\" now shows %s, not the commit this request measures. "+
			"%s (by a user with write access) approves measuring the acknowledged commit %s; to measure the new head, make a new request.\n",
			shortSHA(s.SHA), shortSHA(s.HeadMoved), shortSHA(s.HeadMoved), md.Code("/benchmark-approve "+shortRaw(s.SHA)), shortSHA(s.SHA))
	} else if s.HeadMoved != "" {
		sha := "the commit shown above"
		if s.SHA != "" {
			sha = shortSHA(s.SHA)
		}
		fmt.Fprintf(&b, "\n> [!WARNING]\n> The PR got new commits after this request (head is now %s). "+
			"This request measures %s, not the new head; to benchmark the new head, make a new request.\n",
			shortSHA(s.HeadMoved), sha)
	}
	if s.ForkNote != "" {
		b.WriteString("\n> [!NOTE]\n> " + md.Trusted(s.ForkNote) + "\n")
	}
	if s.RouteNote != "" {
		b.WriteString("\n> [!NOTE]\n> " + md.Trusted(s.RouteNote) + "\n")
	}
	if s.SettingsWarning != "" {
		b.WriteString("\n> [!WARNING]\n> " + md.Trusted(s.SettingsWarning) + "\n")
	}
	b.WriteString("\n" + Marker(s.RequestID))
	return b.String()
}

// supersededText says how a request was superseded, linking to the newer request's status
// comment when url is a plain https URL: "Replaced by your newer request: [newer
// request](…)." It never shows the newer request's ID.
func supersededText(how SupersededHow, url string) string {
	var s string
	switch how {
	case SupersededReplaced:
		s = "Replaced by your newer request"
	case SupersededDisplaced:
		s = "A newer approved request on this pull request took its place in line"
	default:
		s = "A newer request took this one's place"
	}
	if l := md.Link("newer request", url); l != "" {
		return s + ": " + l + "."
	}
	return s + "."
}

// behind names the request ahead in line: ", behind `octo/arena` PR 12's running job";
// "" when a is nil.
func behind(a *Ahead) string {
	if a == nil {
		return ""
	}
	job := "job"
	if a.Running {
		job = "running job"
	}
	switch {
	case a.ThisPR:
		if a.Running {
			return ", behind this pull request's running job"
		}
		return ", behind this pull request's earlier request"
	case a.Repo == "" || a.PR <= 0:
		return ", behind an operator's " + job
	}
	return fmt.Sprintf(", behind %s PR %d's %s", md.Code(md.Clip(a.Repo, 100)), a.PR, job)
}

// Ordinal writes n as an English ordinal: 1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st, 22nd.
func Ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return strconv.Itoa(n) + suffix
}

// measurementsWord is the noun for n measurements when the number is written apart.
func measurementsWord(total int) string {
	if total == 1 {
		return "measurement"
	}
	return "measurements"
}

// progressBar renders `▓▓▓░░░ 3/24`.
func progressBar(done, total int) string {
	done = min(max(done, 0), total)
	filled := done * barWidth / total
	return "`" + strings.Repeat("▓", filled) + strings.Repeat("░", barWidth-filled) + " " +
		strconv.Itoa(done) + "/" + strconv.Itoa(total) + "`"
}

// nameList renders up to 20 names as code spans.
func nameList(names []string) string {
	const maxNames = 20
	var parts []string
	for i, n := range names {
		if i == maxNames {
			parts = append(parts, fmt.Sprintf("… and %d more", len(names)-maxNames))
			break
		}
		parts = append(parts, md.Code(md.Clip(n, 100)))
	}
	return strings.Join(parts, ", ")
}

// connList renders up to 12 connection counts.
func connList(conns []int) string {
	const maxConns = 12
	var parts []string
	for i, c := range conns {
		if i == maxConns {
			parts = append(parts, fmt.Sprintf("… +%d", len(conns)-maxConns))
			break
		}
		parts = append(parts, strconv.Itoa(c))
	}
	return strings.Join(parts, ", ")
}

// formatWait renders a duration for people: "under a minute", "about 12 min", "about 1 h 5 min".
func formatWait(d time.Duration) string {
	if d < time.Minute {
		return "under a minute"
	}
	m := int((d + time.Minute - 1) / time.Minute)
	switch {
	case m < 60:
		return fmt.Sprintf("about %d min", m)
	case m%60 == 0:
		return fmt.Sprintf("about %d h", m/60)
	default:
		return fmt.Sprintf("about %d h %d min", m/60, m%60)
	}
}

func formatTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

// shortSHA renders the first 12 characters of a commit SHA as code.
func shortSHA(sha string) string { return md.Code(shortRaw(sha)) }

// shortRaw returns the first 12 characters of a commit SHA, not yet escaped.
func shortRaw(sha string) string {
	sha = md.Clip(sha, 64)
	if len(sha) > 12 {
		sha = sha[:12]
		for len(sha) > 0 && !utf8.ValidString(sha) {
			sha = sha[:len(sha)-1]
		}
	}
	return sha
}
