package queue

import (
	"encoding/json"
	"testing"
	"time"
)

func TestStateTerminal(t *testing.T) {
	for s, want := range map[State]bool{
		Received: false, AwaitingApproval: false, Queued: false, Running: false,
		Done: true, Failed: true, Cancelled: true, Superseded: true, Expired: true, Rejected: true,
	} {
		if got := s.Terminal(); got != want {
			t.Errorf("%s.Terminal() = %v, want %v", s, got, want)
		}
	}
	if AwaitingApproval != "awaiting_approval" {
		t.Errorf("AwaitingApproval = %q", AwaitingApproval)
	}
}

func TestLineETA(t *testing.T) {
	now := time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)
	run := Job{ID: "r", State: Running, Started: now.Add(-3 * time.Minute), Estimate: 10 * time.Minute}
	waiting := []Job{{ID: "a", Estimate: 2 * time.Minute}, {ID: "b"}, {ID: "c", Estimate: time.Minute}}
	tests := []struct {
		name    string
		running []Job
		want    []time.Duration
	}{
		{"running", []Job{run}, []time.Duration{0, 7 * time.Minute, 9 * time.Minute, 9 * time.Minute}},
		{"idle", nil, []time.Duration{0, 2 * time.Minute, 2 * time.Minute}},
		// Two runners: a waits for the first free (r2, in 1 min), b for the next (r, in 7),
		// c for a's (1 + 2 = 3 min).
		{"two running", []Job{run, {ID: "r2", State: Running, Started: now.Add(-4 * time.Minute), Estimate: 5 * time.Minute}},
			[]time.Duration{0, 0, time.Minute, 3 * time.Minute, 3 * time.Minute}},
	}
	for _, tt := range tests {
		l := line("p", tt.running, waiting, now)
		if len(l.Places) != len(tt.want) {
			t.Fatalf("%s: %d places", tt.name, len(l.Places))
		}
		for i, p := range l.Places {
			if p.Position != i+1 || p.ETA != tt.want[i] {
				t.Errorf("%s: place %d = %d, %v; want %d, %v", tt.name, i, p.Position, p.ETA, i+1, tt.want[i])
			}
		}
		if len(l.Running()) != len(tt.running) {
			t.Errorf("%s: Running() = %v", tt.name, l.Running())
		}
	}
	overrun := run
	overrun.Started = now.Add(-time.Hour)
	if l := line("p", []Job{overrun}, waiting[:1], now); l.Places[1].ETA != 0 {
		t.Errorf("behind an overrun job: ETA %v, want 0", l.Places[1].ETA)
	}
}

func TestRecordRoundTrip(t *testing.T) {
	now := time.Date(2025, 5, 1, 12, 0, 0, 123456789, time.UTC)
	j := prepare(Job{Repo: "octo/arena", PR: 7, Frameworks: []string{"gin"}, Estimate: time.Minute, InstallationID: 1 << 40}, now)
	body := mustJSON(t, j)
	got, err := recordJob(map[string]string{
		"body": body, "state": "running", "attempt": "2", "fence": "17",
		"started": formatTime(now), "cancel": "1", "result": `{"a":1}`, "token": "secret",
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.State != Running || got.Attempt != 2 || got.Fence != 17 || !got.Started.Equal(now) || !got.CancelRequested ||
		string(got.Result) != `{"a":1}` || got.InstallationID != 1<<40 || got.Pool != DefaultPool || !got.Queued.Equal(now) {
		t.Errorf("recordJob = %+v", got)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
