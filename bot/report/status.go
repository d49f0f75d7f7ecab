package report

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// A Phase is where a request is in its life (the README's `arenabot serve` section walks through them).
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

// A StatusRow is one planned measurement: a framework entry, a test (profile) and a connection
// count.
type StatusRow struct {
	Entry string
	Test  string
	Conns int
}

// A Status is everything the status comment of one request shows. All strings except ForkNote,
// ApproveHow and the URLs are treated as untrusted and escaped; ForkNote and ApproveHow are
// written by the bot and rendered as Markdown on one line; URLs are linked only when they are
// plain https URLs.
type Status struct {
	RequestID string // goes into the hidden marker
	Phase     Phase
	Command   string // the command line as written, e.g. "/benchmark -f gin --save"
	Requester string // login
	// Approver is who approved the request; in the rejected phase, who declined it.
	Approver string
	// SHA is the commit that will be / was measured; the first 12 characters are shown.
	SHA string
	// HeadMoved is the new head SHA when the PR got new commits after the ack.
	HeadMoved  string
	Frameworks []string
	Tests      []string
	Rows       []StatusRow // the plan: frameworks × tests × connection counts
	Estimate   time.Duration
	Position   int           // queued: place in line (1 = next)
	ETA        time.Duration // queued: expected wait
	Progress   string        // running: e.g. "baseline 4096c — 3 of 24"
	Done       int           // running (and failed): rows finished
	Total      int           // running (and failed): rows in all
	// Reason says why the request failed, was cancelled, superseded, expired or rejected.
	Reason       string
	SupersededBy string    // superseded: link (https) or id of the newer request
	ResultsURL   string    // done: link to the results comment
	CommitURL    string    // done with --save: link to the results commit
	ForkNote     string    // ack: what --save does on this fork
	ApproveHow   string    // optional override of the approval instructions
	Expires      time.Time // awaiting approval: when the request expires
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
		headline = "ℹ️ **Benchmark request** (" + codeSpan(string(s.Phase), 40, false) + ")"
	}
	b.WriteString(headline)
	if s.Phase == PhaseRunning && strings.TrimSpace(s.Progress) != "" {
		b.WriteString(": " + prose(s.Progress, 200))
	}
	b.WriteString("\n\n")

	if s.Command != "" || s.Requester != "" {
		b.WriteString("- **Command:** ")
		if s.Command != "" {
			b.WriteString(codeSpan(s.Command, 300, false))
		}
		if s.Requester != "" {
			b.WriteString(" requested by " + codeSpan(s.Requester, 60, false))
		}
		b.WriteString("\n")
	}
	if s.Approver != "" && s.Phase != PhaseAwaitingApproval && s.Phase != PhaseExpired {
		label := "Approved by"
		if s.Phase == PhaseRejected {
			label = "Declined by"
		}
		fmt.Fprintf(&b, "- **%s:** %s\n", label, codeSpan(s.Approver, 60, false))
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
		open = fmt.Sprintf("\n<details><summary>Plan: %d measurements</summary>\n\n", len(s.Rows))
		closing = "\n</details>\n"
	}
	const header = "| Framework | Test | Connections |\n|---|---|---|\n"
	const moreReserve = 64 // "… and N more measurements" line
	var b strings.Builder
	b.WriteString(open + header)
	shown := 0
	for i, g := range groups {
		line := "| " + codeSpan(g.entry, 100, true) + " | " + prose(g.test, 100) + " | " + connList(g.conns) + " |\n"
		if i >= MaxPlanLines || b.Len()+len(line)+moreReserve+len(closing) >= budget {
			break
		}
		b.WriteString(line)
		shown += len(g.conns)
	}
	if more := len(s.Rows) - shown; more > 0 {
		fmt.Fprintf(&b, "\n… and %d more measurements\n", more)
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
			add("**%s:** %s", label, prose(s.Reason, 300))
		}
	}
	switch s.Phase {
	case PhaseAwaitingApproval:
		if s.ApproveHow != "" {
			add("%s", trusted(s.ApproveHow))
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
			parts = append(parts, fmt.Sprintf("Position **%d** in line", s.Position))
		}
		if s.ETA > 0 {
			parts = append(parts, "expected wait "+formatWait(s.ETA))
		}
		if len(parts) == 0 {
			parts = append(parts, "Waiting for a runner")
		}
		add("%s.", strings.Join(parts, " · "))
	case PhaseRunning:
		if s.Total > 0 {
			add("%s measurements done", progressBar(s.Done, s.Total))
		} else {
			add("Preparing the run.")
		}
	case PhaseDone:
		var links []string
		if u := link("results", s.ResultsURL); u != "" {
			links = append(links, "**Results:** "+u)
		}
		if u := link("results commit", s.CommitURL); u != "" {
			links = append(links, "**Saved:** "+u)
		}
		if len(links) == 0 {
			links = append(links, "The results are in the reply below.")
		}
		add("%s", strings.Join(links, " · "))
	case PhaseFailed:
		reason("Reason")
		if s.Total > 0 {
			add("%s measurements done before the failure.", progressBar(s.Done, s.Total))
		}
	case PhaseCancelled:
		reason("Reason")
	case PhaseSuperseded:
		if s.SupersededBy != "" {
			by := link("the newer request", s.SupersededBy)
			if by == "" {
				by = "the newer request " + codeSpan(s.SupersededBy, 100, false)
			}
			add("A newer approved request took this one's place in the queue: %s.", by)
		}
		reason("Reason")
	case PhaseExpired:
		if !s.Expires.IsZero() {
			add("Nobody approved this request before **%s**. Comment the command again to make a new request.", formatTime(s.Expires))
		} else {
			add("Nobody approved this request in time. Comment the command again to make a new request.")
		}
		reason("Reason")
	case PhaseRejected:
		reason("Reason")
	default:
		reason("Reason")
	}
	for _, d := range details {
		b.WriteString("\n" + d + "\n")
	}
	if s.HeadMoved != "" {
		sha := "the commit shown above"
		if s.SHA != "" {
			sha = shortSHA(s.SHA)
		}
		fmt.Fprintf(&b, "\n> [!WARNING]\n> The PR got new commits after this request (head is now %s). "+
			"This request measures %s, not the new head; to benchmark the new head, make a new request.\n",
			shortSHA(s.HeadMoved), sha)
	}
	if s.ForkNote != "" {
		b.WriteString("\n> [!NOTE]\n> " + trusted(s.ForkNote) + "\n")
	}
	b.WriteString("\n" + Marker(s.RequestID))
	return b.String()
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
		parts = append(parts, codeSpan(n, 100, false))
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
func shortSHA(sha string) string {
	sha = fit(sha, 64)
	if len(sha) > 12 {
		sha = sha[:12]
		for len(sha) > 0 && !utf8.ValidString(sha) {
			sha = sha[:len(sha)-1]
		}
	}
	return codeSpan(sha, 12, false)
}

// link renders a Markdown link to u when u is a plain https URL, else "".
func link(text, u string) string {
	if !strings.HasPrefix(u, "https://") || len(u) > 2000 || strings.ContainsAny(u, " \t\r\n<>()[]\"'`|\\") {
		return ""
	}
	for _, r := range u {
		if r < 0x20 || r >= 0x7f {
			return ""
		}
	}
	return "[" + text + "](" + u + ")"
}

// fit cleans s and clips it to limit bytes; huge input is cut before it is cleaned.
func fit(s string, limit int) string {
	if len(s) > 4*limit+16 {
		s = s[:4*limit+16] // a cut rune is dropped by clean
	}
	return clip(clean(s), limit)
}

// clean drops control and bidi formatting characters (newlines become spaces) and trims.
func clean(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			return ' '
		case r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			return -1 // also drops zero-width and bidi override characters
		}
		return r
	}, s)
	return strings.TrimSpace(s)
}

// clip cuts s to at most n bytes on a rune boundary, marking the cut with "…".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

var proseReplacer = strings.NewReplacer(
	"\\", "\\\\", "&", "&amp;", "<", "&lt;", ">", "&gt;", "|", "\\|", "*", "\\*", "_", "\\_",
	"`", "\\`", "[", "\\[", "]", "\\]", "~", "\\~", "!", "\\!",
	// Break mentions, issue references and autolinks with a zero-width space.
	"@", "@\u200b", "#", "#\u200b", "://", ":\u200b//",
)

var wwwRE = regexp.MustCompile(`(?i)www\.`)

// prose makes untrusted text safe as one line of Markdown: the first line only, capped at limit
// bytes, with no HTML, emphasis, links, autolinks, table cells, @-mentions or issue references.
func prose(s string, limit int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	s = proseReplacer.Replace(fit(s, limit))
	return wwwRE.ReplaceAllStringFunc(s, func(m string) string { return m[:3] + "\u200b." })
}

// codeSpan renders untrusted text as an inline code span, capped at limit bytes: Markdown, HTML,
// links and mentions are inert inside it; backticks become quotes, and "@" and "<!--" get a
// zero-width space so that neither a copy of the text nor a search for a marker finds them.
// In a table cell, pipes are escaped.
func codeSpan(s string, limit int, inTable bool) string {
	s = fit(s, limit)
	r := strings.NewReplacer("`", "'", "@", "@\u200b", "<!--", "<\u200b!--")
	s = strings.TrimSpace(r.Replace(s))
	if inTable {
		s = strings.ReplaceAll(s, "|", "\\|")
	}
	if s == "" {
		return "—"
	}
	return "`" + s + "`"
}

// trusted renders bot-written Markdown on one line; "<!--" is escaped so that it can neither
// hide the rest of the comment nor fake a marker.
func trusted(s string) string {
	s = fit(s, 2000)
	return strings.ReplaceAll(s, "<!--", "&lt;!--")
}
