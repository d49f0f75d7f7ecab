package measure

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/runner/loadgen"
	"github.com/arenabot/arenabot/text"
)

// load prepares a session's load for conns connections from its profile's row: the
// profile's own requests, each carrying the Bearer token when the row names one, and its
// Writes beside them (production-stack's reads and writes).
func (tl *tools) load(s *session, p profile.Profile, conns int) error {
	lp, token := p, ""
	if p.Bearer != "" {
		var err error
		if token, err = tl.bearer(p.Bearer); err != nil {
			return err
		}
		lp.Headers = append(slices.Clone(p.Headers), token)
	}
	if w := p.Writes; w != nil {
		wp := p
		wp.Requests, wp.Body, wp.Streams, wp.Writes = []string{w.Requests}, w.Body, w.Streams, nil
		wp.Headers = slices.Clone(w.Headers)
		if token != "" {
			wp.Headers = append(wp.Headers, token)
		}
		wconns := w.Conns(conns)
		s.writes = &session{tool: s.tool}
		var err error
		if s.writes.spec, s.writes.args, err = tl.spec(s.tool.tool, wp, wconns); err != nil {
			return err
		}
		s.writes.spec.OutDir = "" // one request log per run: the reads'
		s.writes.spec.Threads = min(w.Threads, wconns)
		if s.writes.args, err = s.tool.tool.Args(s.writes.spec); err != nil {
			return err
		}
	}
	var err error
	s.spec, s.args, err = tl.spec(s.tool.tool, lp, conns)
	return err
}

// bearer is the Authorization header with the token of file in the arena data.
func (tl *tools) bearer(file string) (string, error) {
	tok, err := os.ReadFile(filepath.Join(tl.cfg.DataDir, file))
	if err != nil {
		return "", fmt.Errorf("the arena's token: %w; remove the arena data directory so the runner writes it anew", err)
	}
	return "Authorization: Bearer " + strings.TrimSpace(string(tok)), nil
}

// runWithWrites runs a session's load and its write load in parallel inside one cgroup
// window. The run's counts are both loads' sums and its RPS both 2xx counts ÷ the first
// load's duration (the arena's rule); its latency is the first load's; each load's own
// counts are kept in Parts.
func (tl *tools) runWithWrites(ctx context.Context, s *session) (result.Run, error) {
	tool := s.tool.tool
	win, err := s.group.Begin()
	if err != nil {
		return result.Run{}, fmt.Errorf("cgroup: %w", err)
	}
	if err := tool.ClearLog(s.spec); err != nil {
		win.End()
		return result.Run{}, err
	}
	type out struct {
		b   []byte
		err error
	}
	wc := make(chan out, 1)
	go func() {
		b, err := tl.exec(ctx, tool, s.writes.args, s.writes.spec.Duration)
		wc <- out{b, err}
	}()
	rb, rerr := tl.exec(ctx, tool, s.args, s.spec.Duration)
	w := <-wc
	usage, uerr := win.End()
	if err := cmpErr(rerr, w.err, uerr); err != nil {
		return result.Run{}, err
	}
	reads, err := tool.Parse(rb)
	if err != nil {
		return result.Run{}, fmt.Errorf("%s output (reads): %w (last output: %s)", tool.Name, err, text.LastLine(string(rb)))
	}
	writes, err := tool.Parse(w.b)
	if err != nil {
		return result.Run{}, fmt.Errorf("%s output (writes): %w (last output: %s)", tool.Name, err, text.LastLine(string(w.b)))
	}
	if err := tool.ReadLog(s.spec, &reads); err != nil {
		return result.Run{}, err
	}
	parts := []result.Part{part("reads", reads), part("writes", writes)}
	sum := reads
	sum.Requests += writes.Requests
	sum.Status2xx += writes.Status2xx
	sum.Bytes += writes.Bytes
	sum.Errors.Connect += writes.Errors.Connect
	sum.Errors.Read += writes.Errors.Read
	sum.Errors.Write += writes.Errors.Write
	sum.Errors.Timeout += writes.Errors.Timeout
	run := toRun(sum, usage)
	run.Parts = parts
	if err := successful(run); err != nil {
		return run, err
	}
	// A run whose writes got no 2xx measured the reads alone, not the profile's mix.
	if writes.Status2xx == 0 {
		return run, &NoSuccessError{Run: toRun(writes, usage), Part: "writes"}
	}
	return run, nil
}

func part(name string, m loadgen.Measurement) result.Part {
	return result.Part{Name: name, Requests: m.Requests, Status2xx: m.Status2xx, DurationS: m.Duration.Seconds(), RPS: m.RPS()}
}

func cmpErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
