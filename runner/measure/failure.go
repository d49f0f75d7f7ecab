package measure

import (
	"context"
	"errors"
	"fmt"

	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/text"
)

// ShortMax is about how long a failed row's table cell may be; the whole reason goes under
// the table.
const ShortMax = 80

// A ReadyError is a server that did not answer its readiness probe: it exited first, or
// did not answer in time.
type ReadyError struct {
	Msg   string // the whole reason, with the container's log tail
	Cell  string // "not ready after 30s", "exited with status 2 before answering"
	Cause error  // the probe's last error, if any
}

func (e *ReadyError) Error() string { return e.Msg }

// Short is the table cell.
func (e *ReadyError) Short() string { return e.Cell }

func (e *ReadyError) Unwrap() error { return e.Cause }

// ShortReason returns the table cell for a row's error, at most about ShortMax characters:
// "validation: GET sum 13+42", "build failed", "not ready after 30s", "cancelled", or the
// error's first words.
func ShortReason(err error) string {
	if err == nil {
		return ""
	}
	var s interface{ Short() string }
	if errors.As(err, &s) {
		return text.Clip(s.Short(), ShortMax)
	}
	if errors.Is(err, context.Canceled) {
		return "cancelled"
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timed out"
	}
	return text.Clip(err.Error(), ShortMax)
}

// A NoSuccessError is a run in which the server gave no response the profile counts (no
// 2xx, no echo): its row fails rather than report 0 requests per second.
type NoSuccessError struct {
	Run  result.Run // the run, or the part's counts when Part is set
	Part string     // "" for the whole run, else the load that got none ("writes")
}

func (e *NoSuccessError) Error() string {
	r := e.Run
	in := "the run"
	if e.Part != "" {
		in = "the run's " + e.Part
	}
	return fmt.Sprintf("no successful response in %s: %d response(s), %d not 2xx, socket errors: %d connect, %d read, %d write, %d timeout; check that the server answers the profile's requests (arenabot validate shows what it answers)",
		in, r.Requests, r.NonSuccess, r.Errors.Connect, r.Errors.Read, r.Errors.Write, r.Errors.Timeout)
}

// Short is the row's cell.
func (e *NoSuccessError) Short() string {
	short := "no response"
	if e.Run.Requests > 0 {
		short = fmt.Sprintf("no 2xx response (%d not 2xx)", e.Run.NonSuccess)
	}
	if e.Part != "" {
		short = e.Part + ": " + short
	}
	return short
}
