package bot

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/arenabot/arenabot/bot/command"
	"github.com/arenabot/arenabot/bot/plan"
)

// A Request is a benchmark request waiting for approval.
type Request struct {
	ID              string // also the queue job id and the status comment's marker key
	Repo            string
	PR              int
	Installation    int64
	Requester       string
	CommentID       int64 // the command comment
	StatusCommentID int64
	Command         command.Command
	Plan            plan.Plan
	SHA             string // the head SHA shown in the ack; approval measures it
	HeadMoved       string // the PR's new head when it moved after the ack
	ForkNote        string // said in the ack when --save cannot push to the PR's fork
	Created         time.Time
	Expires         time.Time
	ETag            string // of the status comment's reactions, for conditional polling
}

// Pending stores the requests waiting for approval, at most one per pull request.
//
// MemoryPending keeps them in process, so a restart forgets them (their status
// comments stay at "awaiting approval"); RedisPending keeps them next to the queue,
// and serve uses it whenever ARENA_REDIS_URL is set.
type Pending interface {
	// Put adds or replaces the request of r's pull request.
	Put(ctx context.Context, r Request) error
	// Get returns the request of a pull request.
	Get(ctx context.Context, repo string, pr int) (Request, bool, error)
	// List returns every request, oldest first.
	List(ctx context.Context) ([]Request, error)
	// Delete removes the request with id and reports whether it was there.
	Delete(ctx context.Context, id string) (bool, error)
}

// MemoryPending is the in-process Pending.
type MemoryPending struct {
	mu   sync.Mutex
	reqs map[string]Request // by prKey
}

// NewMemoryPending returns an empty MemoryPending.
func NewMemoryPending() *MemoryPending { return &MemoryPending{reqs: map[string]Request{}} }

func prKey(repo string, pr int) string {
	return strings.ToLower(repo) + "#" + strconv.Itoa(pr)
}

// Put implements Pending.
func (m *MemoryPending) Put(_ context.Context, r Request) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reqs[prKey(r.Repo, r.PR)] = r
	return nil
}

// Get implements Pending.
func (m *MemoryPending) Get(_ context.Context, repo string, pr int) (Request, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.reqs[prKey(repo, pr)]
	return r, ok, nil
}

// List implements Pending.
func (m *MemoryPending) List(context.Context) ([]Request, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Request, 0, len(m.reqs))
	for _, r := range m.reqs {
		out = append(out, r)
	}
	sortRequests(out)
	return out, nil
}

// sortRequests orders requests oldest first, ties by id: the order List promises.
func sortRequests(rs []Request) {
	slices.SortFunc(rs, func(a, b Request) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// Delete implements Pending.
func (m *MemoryPending) Delete(_ context.Context, id string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, r := range m.reqs {
		if r.ID == id {
			delete(m.reqs, k)
			return true, nil
		}
	}
	return false, nil
}
