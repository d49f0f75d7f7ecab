package measure

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/runner/build"
	"github.com/arenabot/arenabot/runner/docker"
	"github.com/arenabot/arenabot/validate"
)

// TestRowAsReported: a row carries the entry's and the profile's names and kinds, its
// advisories as WARN lines, and for a failure the error's text and cell; a failed build's
// row carries its log's tail and, when the log file goes with the workspace, points at the
// tail instead of the file.
func TestRowAsReported(t *testing.T) {
	e := frameworks.Entry{Name: "gin", Dir: "/w/frameworks/gin"}
	e.Meta.DisplayName = "Gin"
	p := profile.Profile{Name: "echo-ws", WebSocket: true, Bandwidth: true}
	warn := validate.Outcome{Profile: "echo-ws", Check: "malformed", Status: validate.Warn, Tier: validate.Advisory, Request: "GET …", Expected: "a 4xx", Got: "200"}
	row := newRow(e, p, 64, []validate.Outcome{warn})
	if row.Entry != "gin" || row.Display != "Gin" || row.Profile != "echo-ws" || row.Conns != 64 || !row.WebSocket || !row.Bandwidth ||
		!slices.Equal(row.Advisories, []string{warn.String()}) || row.Err != "" || row.Short != "" {
		t.Errorf("row %+v", row)
	}

	fail := validate.Outcome{Profile: "echo-ws", Check: "GET sum 13+42", Status: validate.Fail}
	if r := FailedRow(e, p, 64, &ValidationFailure{Outcome: fail}); r.Short != "validation: GET sum 13+42" || r.Err != (&ValidationFailure{Outcome: fail}).Error() || r.BuildLog != nil {
		t.Errorf("validation failure: %q (%q), log %q", r.Err, r.Short, r.BuildLog)
	}

	tail := []string{"step 3/4", "COPY missing-file: not found"}
	for _, c := range []struct {
		limit   time.Duration
		logGoes bool
		err     string
		short   string
	}{
		{0, false, "wrapped: build of gin failed: COPY failed; fix its Dockerfile or source and run again (full log: /s/gin.log)", "build failed"},
		{0, true, "build failed: COPY failed; fix the Dockerfile or the source (the build log's tail is below the table)", "build failed"},
		{time.Second, false, "wrapped: COPY failed (ARENA_BUILD_TIMEOUT); make it build faster, or raise the limit if it needs more (full log: /s/gin.log)", "build timed out"},
		{time.Second, true, "COPY failed (the runner's build limit, ARENA_BUILD_TIMEOUT); make it build faster (the build log's tail is below the table)", "build timed out"},
	} {
		bf := &build.BuildFailure{Entry: "gin", Err: &docker.BuildError{Tag: "arenabot/gin:local", Msg: "COPY failed", Tail: tail}, LogPath: "/s/gin.log", Limit: c.limit}
		r := newRow(e, p, 64, nil)
		failRow(&r, fmt.Errorf("wrapped: %w", bf), c.logGoes)
		if r.Err != c.err || r.Short != c.short || !slices.Equal(r.BuildLog, tail) {
			t.Errorf("limit %s, log goes %v: %q (%q), log %q; want %q (%q) and the tail", c.limit, c.logGoes, r.Err, r.Short, r.BuildLog, c.err, c.short)
		}
	}
}
