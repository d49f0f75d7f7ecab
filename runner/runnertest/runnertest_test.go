package runnertest

import (
	"testing"

	"github.com/arenabot/arenabot/runner/host"
)

// TestJobLabel: a test's job label is a valid job ID held live while the test runs (so a
// runner's sweep spares its images), the same on every call, and free once the test ends.
func TestJobLabel(t *testing.T) {
	var id string
	t.Run("a sub/test with spaces", func(t *testing.T) {
		id = JobLabel(t)
		if id != "TestJobLabel-a_sub-test_with_spaces" {
			t.Errorf("JobLabel = %q; want the test's name with / made -", id)
		}
		if again := JobLabel(t); again != id {
			t.Errorf("second JobLabel = %q; want %q", again, id)
		}
		if !host.JobLive(id) {
			t.Errorf("job %s is not live while its test runs", id)
		}
	})
	if host.JobLive(id) {
		t.Errorf("job %s is still live after its test ended", id)
	}
}
