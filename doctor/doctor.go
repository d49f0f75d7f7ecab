package doctor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"
)

// Status is a check's verdict.
type Status int

const (
	OK   Status = iota // the host is as needed
	Warn               // it works, but something is degraded or optional is missing
	Fail               // a job would fail here
)

func (s Status) String() string {
	switch s {
	case OK:
		return "ok"
	case Warn:
		return "warn"
	}
	return "FAIL"
}

// Result is what one check found: Value is the measured fact ("API 1.41 (Docker
// 20.10.24)"), Fix what to do when Status is not OK.
type Result struct {
	Status Status
	Value  string
	Fix    string
}

// A Check measures one precondition.
type Check struct {
	Name string // "docker", "port 8080"
	Run  func(ctx context.Context) Result
}

// Line is one printed check: the status, the name, the value and the fix, separated by
// tabs (Print aligns them).
type Line struct {
	Name string
	Result
}

func (l Line) String() string {
	s := fmt.Sprintf("%-4s  %s  %s", l.Status, l.Name, l.Value)
	if l.Fix != "" {
		s += ": " + l.Fix
	}
	return s
}

// RunAll runs the checks in order.
func RunAll(ctx context.Context, checks []Check) []Line {
	lines := make([]Line, len(checks))
	for i, c := range checks {
		lines[i] = Line{Name: c.Name, Result: c.Run(ctx)}
	}
	return lines
}

// Print writes one aligned line per check and reports whether any failed.
func Print(w io.Writer, lines []Line) (failed bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, l := range lines {
		v := l.Value
		if l.Fix != "" {
			v += ": " + l.Fix
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", l.Status, l.Name, v)
		failed = failed || l.Status == Fail
	}
	tw.Flush()
	return failed
}

// ErrFailed is what Gate's error matches (errors.Is) when a check failed.
var ErrFailed = errors.New("host check failed")

type gateError struct{ lines string }

func (e *gateError) Error() string {
	return "the host is not ready (arenabot doctor --runner shows every check):\n" + e.lines
}
func (e *gateError) Is(target error) bool { return target == ErrFailed }

// Gate runs checks as a command does before it starts: each warn is logged, and the
// error, matching ErrFailed, holds the aligned line of every failed check.
func Gate(ctx context.Context, checks []Check, log *slog.Logger) error {
	var failed []Line
	for _, l := range RunAll(ctx, checks) {
		switch l.Status {
		case Warn:
			log.Warn("host check", "check", l.Name, "value", l.Value, "fix", l.Fix)
		case Fail:
			failed = append(failed, l)
		}
	}
	if failed == nil {
		return nil
	}
	var b strings.Builder
	Print(&b, failed)
	return &gateError{strings.TrimSuffix(b.String(), "\n")}
}

func ok(format string, a ...any) Result { return Result{Status: OK, Value: fmt.Sprintf(format, a...)} }
func warn(value, fix string) Result     { return Result{Status: Warn, Value: value, Fix: fix} }
func fail(value, fix string) Result     { return Result{Status: Fail, Value: value, Fix: fix} }
