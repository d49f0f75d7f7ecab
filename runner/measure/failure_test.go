package measure

import (
	"errors"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/result"
)

// TestNoSuccess: a run without a 2xx response fails its row, with a cell that says what
// came back and a reason that names the counts and the fix; a run with one passes.
func TestNoSuccess(t *testing.T) {
	if err := successful(result.Run{Requests: 10, Status2xx: 1, NonSuccess: 9}); err != nil {
		t.Errorf("a run with a 2xx response: %v", err)
	}
	for _, c := range []struct {
		run  result.Run
		cell string
	}{
		{result.Run{Requests: 1200, NonSuccess: 1200}, "no 2xx response (1200 not 2xx)"},
		{result.Run{Errors: result.SocketErrors{Connect: 512}}, "no response"},
	} {
		err := successful(c.run)
		var ns *NoSuccessError
		if !errors.As(err, &ns) {
			t.Fatalf("%+v: err %v, want a *NoSuccessError", c.run, err)
		}
		if got := ShortReason(err); got != c.cell {
			t.Errorf("%+v: cell %q, want %q", c.run, got, c.cell)
		}
		if msg := err.Error(); !strings.Contains(msg, "arenabot validate") || !strings.Contains(msg, "socket errors") {
			t.Errorf("reason %q does not name the counts and the fix", msg)
		}
	}
}
