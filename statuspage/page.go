// Package statuspage serves the queue's status page, serve's GET /: every pool's running
// and waiting job, the requests awaiting approval, the runners' last heartbeats, the live
// runner hosts of each pool and the last finished requests, as HTML for a browser (it refreshes itself from a fragment of
// the same page), as JSON (?format=json) and as the operator's text page (?format=text,
// or Accept: text/plain).
//
// It reads the queue through queue.Reader only and links to GitHub by URL; it imports
// neither the bot nor the runner, so serve can show it whatever else it runs.
package statuspage

import (
	"bytes"
	"context"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"log/slog"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/arenabot/arenabot/queue"
)

// Finished is how many finished requests the page lists, the latest first.
const Finished = 20

// A Config says what the page shows and how it links.
type Config struct {
	Queue queue.Reader
	// LeaseTTL judges the runners as the text page does: a pool's runner not seen for
	// more than twice it is not live. 0 means the queue's default, 30s.
	LeaseTTL time.Duration
	// WebURL is the web root PR and comment links point at; "" means https://github.com/.
	WebURL string
	// Pools are the pools the bot routes requests to, in its order (ARENA_POOLS): each is
	// listed under Hosts, live hosts or not, before the pools only runners name. nil: not
	// known, and every pool with a live host is shown as routed.
	Pools []string
	// Refresh is how often the page fetches its fragment again; 0 means 5s.
	Refresh time.Duration
	Now     func() time.Time // nil means time.Now
	Logger  *slog.Logger     // nil discards
}

func (c Config) withDefaults() Config {
	if c.LeaseTTL <= 0 {
		c.LeaseTTL = 30 * time.Second
	}
	if c.WebURL == "" {
		c.WebURL = "https://github.com/"
	}
	if !strings.HasSuffix(c.WebURL, "/") {
		c.WebURL += "/"
	}
	if c.Refresh <= 0 {
		c.Refresh = 5 * time.Second
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

//go:embed page.html
var files embed.FS

var tmpl = template.Must(template.New("page.html").ParseFS(files, "page.html"))

// Handler serves the page. The format is chosen by the query's format (html, fragment,
// json, text) or, without one, by an Accept header that asks for text/plain.
func Handler(c Config) http.Handler {
	c = c.withDefaults()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		format := r.URL.Query().Get("format")
		if format == "" && wantsText(r.Header.Get("Accept")) {
			format = "text"
		}
		w.Header().Set("Cache-Control", "no-store")
		switch format {
		case "text":
			c.serveText(w, r)
		case "json":
			c.serveJSON(w, r)
		case "", "html", "fragment":
			c.serveHTML(w, r, format == "fragment")
		default:
			http.Error(w, "format is html, fragment, json or text", http.StatusBadRequest)
		}
	})
}

// wantsText reports whether an Accept header prefers text/plain to HTML: it names
// text/plain and not text/html.
func wantsText(accept string) bool {
	plain, html := false, false
	for part := range strings.SplitSeq(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		plain = plain || mt == "text/plain"
		html = html || mt == "text/html"
	}
	return plain && !html
}

func (c Config) serveText(w http.ResponseWriter, r *http.Request) {
	var b bytes.Buffer
	if err := queue.WriteOperatorPage(r.Context(), &b, c.Queue, c.Now(), c.LeaseTTL); err != nil {
		c.unavailable(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write(b.Bytes())
}

func (c Config) serveJSON(w http.ResponseWriter, r *http.Request) {
	v, err := c.view(r.Context())
	if err != nil {
		c.unavailable(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

func (c Config) serveHTML(w http.ResponseWriter, r *http.Request, fragment bool) {
	v, err := c.view(r.Context())
	if err != nil {
		c.unavailable(w, err)
		return
	}
	var b bytes.Buffer
	// The fragment runs nothing of its own; once swapped in, the page's policy holds for it.
	name, csp := "live", "default-src 'none'"
	if !fragment {
		name = "page.html"
		v.Nonce = nonce()
		v.RefreshMillis = c.Refresh.Milliseconds()
		// Only the page's own script and style run: an injected element, were one to slip
		// through the escaping, would not.
		csp = fmt.Sprintf("default-src 'none'; script-src 'nonce-%s'; style-src 'nonce-%[1]s'; connect-src 'self'; "+
			"base-uri 'none'; form-action 'none'; frame-ancestors 'none'", v.Nonce)
	}
	w.Header().Set("Content-Security-Policy", csp)
	if err := tmpl.ExecuteTemplate(&b, name, v); err != nil {
		c.Logger.Error("status page", "err", err)
		http.Error(w, "status page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write(b.Bytes())
}

func (c Config) unavailable(w http.ResponseWriter, err error) {
	c.Logger.Warn("status page: queue unavailable", "err", err)
	http.Error(w, "queue unavailable", http.StatusServiceUnavailable)
}

func nonce() string {
	b := make([]byte, 16)
	rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// A View is what the page shows, also its JSON form.
type View struct {
	Now      time.Time `json:"now"`
	Counts   Counts    `json:"counts"`
	Pools    []Pool    `json:"pools"`
	Awaiting []Job     `json:"awaiting"`
	Runners  []Runner  `json:"runners"`
	Hosts    []Hosts   `json:"hosts"`    // per pool its live hosts: the routed pools in the bot's order, then the others by name
	Splits   []Split   `json:"splits"`   // running jobs split over hosts, sweeps among them
	Finished []Job     `json:"finished"` // the latest first, at most Finished

	LiveFor       string `json:"live_for"` // a runner is live when seen within this ("1m0s")
	Nonce         string `json:"-"`
	RefreshMillis int64  `json:"-"`
}

// Counts are the page's totals.
type Counts struct {
	Running     int `json:"running"`
	Waiting     int `json:"waiting"`
	Awaiting    int `json:"awaiting_approval"`
	Finished    int `json:"finished"`
	Runners     int `json:"runners"`
	LiveRunners int `json:"live_runners"`
	Hosts       int `json:"hosts"` // live runner hosts
}

// A Pool is one pool's line: its running jobs (one per runner host that took one) and the
// jobs waiting behind them; the shares of split jobs are under Splits.
type Pool struct {
	Name    string `json:"name"`
	Running []Job  `json:"running"`
	Waiting []Job  `json:"waiting"`
}

// A Split is a running job split into shares over its pool's hosts (a sweep always is):
// how far its shares got. A share's rows count as done once it ended with its report.
type Split struct {
	Job     Job     `json:"job"`
	Rows    int     `json:"rows"`
	Done    int     `json:"done"`
	Percent int     `json:"percent"`
	Shares  []Share `json:"shares"`
}

// A Share is one share of a split job.
type Share struct {
	ID    string `json:"id"`
	State string `json:"state"`
	Host  string `json:"host,omitempty"` // the live host running it; "" none
	Rows  int    `json:"rows"`
	Done  int    `json:"done"` // rows its report has, once it ended
}

// A Job is one request as the page shows it. Every string but the URLs is shown as
// text; the URLs are built from the record (repository, PR, comment ID), never taken
// from a user.
type Job struct {
	ID         string     `json:"id"`
	State      string     `json:"state"` // the queue's word: "running", "awaiting_approval", "done", …
	Repo       string     `json:"repo"`
	PR         int        `json:"pr"`
	PRURL      string     `json:"pr_url"`
	Requester  string     `json:"requester"`
	Command    string     `json:"command"`
	Frameworks []string   `json:"frameworks"` // empty: none named
	Tests      []string   `json:"tests"`      // empty: every subscribed test
	Rows       int        `json:"rows,omitempty"`
	Plan       string     `json:"plan"` // "gin, fiber × baseline (4 rows)"
	Position   int        `json:"position,omitempty"`
	Progress   *Progress  `json:"progress,omitempty"`
	ETA        string     `json:"eta,omitempty"` // waiting: "starts in ~4m"; running: "ends in ~2m"
	Attempt    int        `json:"attempt,omitempty"`
	Note       string     `json:"note,omitempty"` // "cancel requested", the reason a job ended
	Age        string     `json:"age,omitempty"`  // since the request, "12m"
	Expires    string     `json:"expires,omitempty"`
	Finished   *time.Time `json:"finished,omitempty"`
	Ago        string     `json:"ago,omitempty"`      // since it finished
	Duration   string     `json:"duration,omitempty"` // finished: "ran 4m12s", or "never ran"
	ReplyURL   string     `json:"reply_url,omitempty"`
	ReplyLabel string     `json:"-"`
}

// Progress is a running job's time against its estimate: the record carries no step
// count, so the fraction is the elapsed time over the planned duration, held below 100%.
type Progress struct {
	Elapsed  string `json:"elapsed"`
	Estimate string `json:"estimate,omitempty"` // "" when the job has none
	Percent  int    `json:"percent"`            // 0 without an estimate
	Over     bool   `json:"over,omitempty"`     // ran past its estimate
}

// A Runner is a pool's runner: when it was last seen and what the page judges of it.
type Runner struct {
	Pool  string     `json:"pool"`
	Seen  *time.Time `json:"seen,omitempty"`
	Ago   string     `json:"ago"`   // "12s ago", "never"
	Jobs  int        `json:"jobs"`  // in the pool's line
	State string     `json:"state"` // "live", "no live runner" or "idle", the text page's words
	Live  bool       `json:"live"`
}

// Hosts are a pool's live runner hosts, sorted by name.
type Hosts struct {
	Pool string `json:"pool"`
	// Routed is whether the bot sends requests to the pool (Config.Pools); a pool only its
	// runners name gets none.
	Routed bool   `json:"routed"`
	Hosts  []Host `json:"hosts"`
}

// A Host is a live runner host as its runner announced it (queue.Host): the machine, the
// CPU split of its measurements and the job it runs.
type Host struct {
	Name        string    `json:"name"`
	CPU         string    `json:"cpu"`
	Cores       string    `json:"cores"`
	Threads     string    `json:"threads"`
	Kernel      string    `json:"kernel"`
	Docker      string    `json:"docker"`
	ServerCPUs  string    `json:"server_cpus"`  // "" unpinned
	LoadgenCPUs string    `json:"loadgen_cpus"` // "" unpinned
	Lite        bool      `json:"lite"`         // measures with --lite: runs any row, scaled down
	Job         string    `json:"job"`          // "" idle
	Seen        time.Time `json:"seen"`
	Ago         string    `json:"ago"` // "4s ago"
}

var terminal = []queue.State{queue.Done, queue.Failed, queue.Cancelled, queue.Superseded, queue.Expired, queue.Rejected}

// view reads the queue once for everything the page shows.
func (c Config) view(ctx context.Context) (View, error) {
	now := c.Now()
	lines, err := c.Queue.Status(ctx)
	if err != nil {
		return View{}, err
	}
	awaiting, err := c.Queue.List(ctx, queue.Filter{States: []queue.State{queue.AwaitingApproval}})
	if err != nil {
		return View{}, err
	}
	ended, err := c.Queue.List(ctx, queue.Filter{States: terminal})
	if err != nil {
		return View{}, err
	}
	runners, err := c.Queue.Runners(ctx)
	if err != nil {
		return View{}, err
	}
	hosts, err := c.Queue.Hosts(ctx)
	if err != nil {
		return View{}, err
	}
	v := View{Now: now, LiveFor: (2 * c.LeaseTTL).String(), Splits: []Split{}}
	inLine := map[string]int{}
	for _, l := range lines {
		inLine[l.Pool] = len(l.Places)
		p := Pool{Name: l.Pool, Running: []Job{}, Waiting: []Job{}}
		for _, pl := range l.Places {
			if pl.Job.Parent != "" {
				continue // a share shows under its job's split
			}
			j := c.job(pl.Job, now)
			j.Position = pl.Position
			if pl.Job.State == queue.Running {
				j.Progress, j.ETA = progress(pl.Job, now)
				p.Running = append(p.Running, j)
				v.Counts.Running++
				if pl.Job.Parent == "" {
					if sp, ok := c.split(ctx, pl.Job, j, hosts); ok {
						v.Splits = append(v.Splits, sp)
					}
				}
				continue
			}
			j.ETA = "next"
			if pl.ETA > 0 {
				j.ETA = "starts in ~" + round(pl.ETA)
			}
			p.Waiting = append(p.Waiting, j)
			v.Counts.Waiting++
		}
		v.Pools = append(v.Pools, p)
	}

	slices.SortStableFunc(awaiting, func(a, b queue.Job) int { return a.Created.Compare(b.Created) })
	v.Awaiting = []Job{}
	for _, aj := range awaiting {
		j := c.job(aj, now)
		j.Expires = "never"
		if !aj.Expires.IsZero() {
			j.Expires = "in " + round(max(aj.Expires.Sub(now), 0))
		}
		v.Awaiting = append(v.Awaiting, j)
	}
	v.Counts.Awaiting = len(v.Awaiting)

	ended = slices.DeleteFunc(ended, func(j queue.Job) bool { return j.Parent != "" })
	slices.SortStableFunc(ended, func(a, b queue.Job) int { return b.Finished.Compare(a.Finished) })
	v.Finished = []Job{}
	for _, ej := range ended[:min(len(ended), Finished)] {
		v.Finished = append(v.Finished, c.finished(ej, now))
	}
	v.Counts.Finished = len(v.Finished)

	seen := map[string]time.Time{}
	for _, r := range runners {
		seen[r.Pool] = r.Seen
	}
	pools := map[string]bool{}
	for p := range inLine {
		pools[p] = true
	}
	for p := range seen {
		pools[p] = true
	}
	v.Runners = []Runner{}
	for _, name := range slices.Sorted(maps.Keys(pools)) {
		r := Runner{Pool: name, Jobs: inLine[name], Ago: "never"}
		if t := seen[name]; !t.IsZero() {
			r.Seen, r.Ago = &t, round(max(now.Sub(t), 0))+" ago"
		}
		// The text page's judgement (queue.WriteOperatorPage): live within twice the lease.
		switch {
		case r.Seen != nil && now.Sub(*r.Seen) <= 2*c.LeaseTTL:
			r.State, r.Live = "live", true
			v.Counts.LiveRunners++
		case r.Jobs > 0:
			r.State = "no live runner"
		default:
			r.State = "idle"
		}
		v.Runners = append(v.Runners, r)
	}
	v.Counts.Runners = len(v.Runners)

	v.Hosts, v.Counts.Hosts = []Hosts{}, len(hosts)
	for _, p := range c.Pools {
		v.Hosts = append(v.Hosts, Hosts{Pool: p, Routed: true, Hosts: []Host{}})
	}
	for _, h := range hosts { // sorted by pool, then name
		i := slices.IndexFunc(v.Hosts, func(p Hosts) bool { return p.Pool == h.Pool })
		if i < 0 {
			v.Hosts, i = append(v.Hosts, Hosts{Pool: h.Pool, Routed: len(c.Pools) == 0, Hosts: []Host{}}), len(v.Hosts)
		}
		v.Hosts[i].Hosts = append(v.Hosts[i].Hosts, Host{
			Name: h.Name, CPU: h.CPU, Cores: h.Cores, Threads: h.Threads, Kernel: h.Kernel, Docker: h.Docker,
			ServerCPUs: h.ServerCPUs, LoadgenCPUs: h.LoadgenCPUs, Lite: h.Lite, Job: h.Job, Seen: h.Seen,
			Ago: round(max(now.Sub(h.Seen), 0)) + " ago",
		})
	}
	return v, nil
}

// split reads the shares of a running job (queue.ShareID 1, 2, … until one is missing);
// false when it has none.
func (c Config) split(ctx context.Context, q queue.Job, j Job, hosts []queue.Host) (Split, bool) {
	sp := Split{Job: j, Rows: len(q.Rows), Shares: []Share{}}
	for n := 1; ; n++ {
		s, err := c.Queue.Get(ctx, queue.ShareID(q.ID, n))
		if err != nil {
			break
		}
		sh := Share{ID: s.ID, State: string(s.State), Rows: len(s.Rows)}
		for _, h := range hosts {
			if h.Job == s.ID {
				sh.Host = h.Name
			}
		}
		var rep struct {
			Rows []json.RawMessage `json:"rows"`
		}
		if s.State.Terminal() && json.Unmarshal(s.Result, &rep) == nil {
			sh.Done = len(rep.Rows)
			sp.Done += sh.Done
		}
		sp.Shares = append(sp.Shares, sh)
	}
	if len(sp.Shares) == 0 {
		return Split{}, false
	}
	if sp.Rows > 0 {
		sp.Percent = min(100*sp.Done/sp.Rows, 100)
	}
	return sp, true
}

// job is what every part of the page shows of a record.
func (c Config) job(q queue.Job, now time.Time) Job {
	j := Job{
		ID: q.ID, State: string(q.State), Repo: q.Repo, PR: q.PR, Requester: q.Requester, Command: q.Command,
		Frameworks: q.Frameworks, Tests: q.Tests, Rows: len(q.Rows), Attempt: q.Attempt,
	}
	if j.Frameworks == nil {
		j.Frameworks = []string{}
	}
	if j.Tests == nil {
		j.Tests = []string{}
	}
	if q.Repo != "" && q.PR > 0 {
		j.PRURL = fmt.Sprintf("%s%s/pull/%d", c.WebURL, q.Repo, q.PR)
	}
	j.Plan = plan(q)
	if !q.Created.IsZero() {
		j.Age = round(max(now.Sub(q.Created), 0))
	}
	if q.CancelRequested {
		j.Note = "cancel requested"
	}
	return j
}

// finished adds how a record ended: its outcome's reason, how long it ran, and where the
// bot answered. The record keeps the bot's status comment, which the final reply edits to
// the final phase and links from; a record without one links the PR.
func (c Config) finished(q queue.Job, now time.Time) Job {
	j := c.job(q, now)
	j.Note = ending(q)
	if !q.Finished.IsZero() {
		t := q.Finished
		j.Finished, j.Ago = &t, round(max(now.Sub(t), 0))+" ago"
	}
	switch {
	case !q.Started.IsZero() && !q.Finished.IsZero():
		j.Duration = "ran " + round(max(q.Finished.Sub(q.Started), 0))
	default:
		j.Duration = "never ran"
	}
	switch {
	case q.StatusCommentID != 0 && j.PRURL != "":
		j.ReplyURL, j.ReplyLabel = fmt.Sprintf("%s#issuecomment-%d", j.PRURL, q.StatusCommentID), "reply"
	case j.PRURL != "":
		j.ReplyURL, j.ReplyLabel = j.PRURL, "PR"
	}
	return j
}

// ending is why a record ended, in a few words.
func ending(q queue.Job) string {
	switch {
	case q.Reason != "":
		return q.Reason
	case q.SupersededBy != "":
		return "superseded by " + q.SupersededBy
	case q.CancelledBy != "":
		return "cancelled by " + q.CancelledBy
	case q.RejectedBy != "":
		return "rejected by " + q.RejectedBy
	}
	return ""
}

// plan is a record's frameworks × tests, with its rows when it carries them.
func plan(q queue.Job) string {
	fw, tests := "no framework named", "every subscribed test"
	if len(q.Frameworks) > 0 {
		fw = strings.Join(q.Frameworks, ", ")
	}
	if len(q.Tests) > 0 {
		tests = strings.Join(q.Tests, ", ")
	}
	s := fw + " × " + tests
	if n := len(q.Rows); n > 0 {
		s += fmt.Sprintf(" (%d %s)", n, map[bool]string{true: "row", false: "rows"}[n == 1])
	}
	return s
}

// progress is a running job's elapsed time against its estimate, and when it should end.
func progress(q queue.Job, now time.Time) (*Progress, string) {
	elapsed := max(now.Sub(q.Started), 0)
	p := &Progress{Elapsed: round(elapsed)}
	if q.Started.IsZero() {
		p.Elapsed = "-"
	}
	if q.Estimate <= 0 || q.Started.IsZero() {
		return p, ""
	}
	p.Estimate = round(q.Estimate)
	p.Percent = min(int(100*elapsed/q.Estimate), 99)
	left := q.Estimate - elapsed
	if left <= 0 {
		p.Over = true
		return p, "over its estimate by " + round(-left)
	}
	return p, "ends in ~" + round(left)
}

// round is d to the second, or to the minute past an hour.
func round(d time.Duration) string {
	if d >= time.Hour {
		return d.Round(time.Minute).String()
	}
	return d.Round(time.Second).String()
}
