package measure

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestPoll: the readiness poll tries until ready, stops at a halt with its error, gives
// expired the last try's error once the deadline passed, and ends with ctx's error before
// it looks at a halt.
func TestPoll(t *testing.T) {
	quick := pace{first: time.Millisecond, most: 2 * time.Millisecond}
	never := func(error) error { t.Error("expired called"); return nil }
	far := time.Now().Add(time.Minute)

	tries := 0
	err := poll(t.Context(), far, quick, func() error {
		if tries++; tries < 4 {
			return fmt.Errorf("try %d", tries)
		}
		return nil
	}, never)
	if err != nil || tries != 4 {
		t.Errorf("ready on the 4th try: err %v after %d tries", err, tries)
	}

	exited := errors.New("exited")
	tries = 0
	err = poll(t.Context(), far, quick, func() error {
		if tries++; tries < 3 {
			return errors.New("not yet")
		}
		return halt{exited}
	}, never)
	if err != exited || tries != 3 {
		t.Errorf("halt on the 3rd try: err %v after %d tries, want %v", err, tries, exited)
	}

	tries = 0
	start := time.Now()
	err = poll(t.Context(), start.Add(30*time.Millisecond), quick, func() error {
		tries++
		return fmt.Errorf("refused %d", tries)
	}, func(last error) error { return fmt.Errorf("not ready (last error: %w)", last) })
	if want := fmt.Sprintf("not ready (last error: refused %d)", tries); err == nil || err.Error() != want || tries < 2 {
		t.Errorf("expired: %v after %d tries, want %q", err, tries, want)
	}
	if d := time.Since(start); d < 30*time.Millisecond || d > 10*time.Second {
		t.Errorf("expired after %s, want the deadline's 30ms", d)
	}

	ctx, cancel := context.WithCancel(t.Context())
	err = poll(ctx, far, quick, func() error { cancel(); return halt{exited} }, never)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("ended ctx: %v, want context.Canceled before the halt", err)
	}
}
