package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/result"
	"github.com/arenabot/arenabot/runner/host"
	"github.com/arenabot/arenabot/runner/measure"
	"github.com/arenabot/arenabot/runner/runnertest"
)

// TestPipeline: a Pipeline builds first, then takes the host lock (saying so and pausing
// around the wait), runs the caller's check under it and prepares and measures; it leaves
// the lock alone when nothing built, gives it back when its context ends during the wait,
// and hands it to the caller when the check fails.
func TestPipeline(t *testing.T) {
	privateHostLock(t)
	p, _ := profile.Lookup("baseline")
	p.Conns = p.Conns[:1]
	good := runnertest.EntryDir(t, "piped", map[string]string{"Dockerfile": "FROM scratch\n"})
	broken := runnertest.EntryDir(t, "pipebroken", map[string]string{"README": "no Dockerfile\n"})
	errStop := errors.New("stop here")

	type run struct {
		eng    *fakeEngine
		mu     sync.Mutex
		events []string
	}
	start := func(t *testing.T, ctx context.Context, e string, locked func() error, cancel func()) (*run, []result.Row, func(), error) {
		r := &run{eng: &fakeEngine{}}
		add := func(s string) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.events = append(r.events, s)
		}
		entry := good
		if e == "broken" {
			entry = broken
		}
		b := measure.New(r.eng, measure.Config{Lite: true, SkipValidation: true, ScratchDir: t.TempDir()})
		hooks := Hooks{
			Phase: func(s string) { add(s) },
			Waiting: func(string) {
				add("another run holds the lock")
				if cancel != nil {
					cancel()
				}
			},
			LockWait: func(w bool) { add(fmt.Sprint("lock wait ", w)) },
			Locked: func() error {
				add("locked")
				return locked()
			},
		}
		rows, unlock, err := Pipeline{Bencher: b, Hooks: hooks}.Run(ctx, measure.Plan{Lite: true, Targets: []measure.Target{{Entry: entry, Profiles: []profile.Profile{p}}}})
		return r, rows, unlock, err
	}
	held := func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		unlock, err := host.LockHost(ctx, nil)
		if err != nil {
			return true
		}
		unlock()
		return false
	}

	t.Run("nothing built", func(t *testing.T) {
		other, err := host.LockHost(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer other()
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second) // a wait for the lock would block until then
		defer cancel()
		r, rows, unlock, err := start(t, ctx, "broken", func() error { return nil }, nil)
		if err != nil || unlock != nil {
			t.Fatalf("err %v, unlock %v; want the rows measured without the lock", err, unlock != nil)
		}
		if len(rows) != 1 || rows[0].Err == "" {
			t.Errorf("rows %+v; want the one row failing its build", rows)
		}
		if want := []string{"building the images"}; !slices.Equal(r.events, want) {
			t.Errorf("events %q, want %q", r.events, want)
		}
	})

	t.Run("cancelled while waiting", func(t *testing.T) {
		other, err := host.LockHost(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer other()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		r, rows, unlock, err := start(t, ctx, "good", func() error { return nil }, cancel)
		if !errors.Is(err, context.Canceled) || unlock != nil || rows != nil {
			t.Fatalf("err %v, unlock %v, %d rows; want the context's error, no lock and no rows", err, unlock != nil, len(rows))
		}
		want := []string{"building the images", "waiting for the host lock", "lock wait true", "another run holds the lock", "lock wait false"}
		if !slices.Equal(r.events, want) {
			t.Errorf("events %q, want %q", r.events, want)
		}
	})

	t.Run("check fails under the lock", func(t *testing.T) {
		var heldThen bool
		r, rows, unlock, err := start(t, t.Context(), "good", func() error { heldThen = held(); return errStop }, nil)
		if !errors.Is(err, errStop) || unlock == nil || rows != nil {
			t.Fatalf("err %v, unlock %v, %d rows; want the check's error, the lock and no rows", err, unlock != nil, len(rows))
		}
		if !heldThen || !held() {
			t.Errorf("the lock was held during the check %v, after it %v; want both until unlock", heldThen, held())
		}
		unlock()
		if held() {
			t.Error("the lock is held after unlock")
		}
		want := []string{"building the images", "waiting for the host lock", "lock wait true", "lock wait false", "locked"}
		if !slices.Equal(r.events, want) {
			t.Errorf("events %q, want %q", r.events, want)
		}
		if slices.ContainsFunc(r.eng.calls(), func(c string) bool { return c == "RemoveLabeled arenabot.managed=true" }) {
			t.Errorf("Prepare ran after the check failed: %q", r.eng.calls())
		}
	})

	t.Run("measures", func(t *testing.T) {
		r, rows, unlock, err := start(t, t.Context(), "good", func() error { return nil }, nil)
		if err != nil || unlock == nil {
			t.Fatalf("err %v, unlock %v", err, unlock != nil)
		}
		unlock()
		if len(rows) != 1 || rows[0].Entry != "piped" {
			t.Errorf("rows %+v; want piped's one row", rows)
		}
		want := []string{"building the images", "waiting for the host lock", "lock wait true", "lock wait false", "locked", "checking the load tools"}
		if !slices.Equal(r.events, want) {
			t.Errorf("events %q, want %q", r.events, want)
		}
	})
}
