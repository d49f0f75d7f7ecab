package queue

import "sync"

// FailSaves makes the next n commits of d fail with err before they reach
// the file, as a full disk would.
func FailSaves(d *Disk, n int, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.store = &faultStore{memStore: d.store, n: n, err: err}
}

type faultStore struct {
	memStore
	mu  sync.Mutex
	n   int
	err error
}

func (s *faultStore) save(c *memChange) error {
	s.mu.Lock()
	fail := s.n > 0
	s.n--
	s.mu.Unlock()
	if fail {
		return s.err
	}
	return s.memStore.save(c)
}
