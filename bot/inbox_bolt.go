package bot

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.etcd.io/bbolt"

	"github.com/arenabot/arenabot/bot/hook"
)

// BoltInbox is the durable Inbox in a bbolt file, the embedded store that serve keeps
// without Redis (the queue's file: the inbox has a bucket of its own in it). Its bucket
// "bot-inbox" holds two buckets of deliveries as JSON, keyed by a sequence number that
// Push takes (big-endian, so key order is push order):
//
//	waiting     Push adds at the end; Pop takes the first
//	processing  popped and not acked; Pop moves a delivery here in the same
//	            transaction, under the same key; ack deletes it
//
// Recover moves what processing holds back to waiting under its own key: since keys only
// grow, the recovered deliveries come first, the oldest popped first, as with RedisInbox.
// A bbolt file is open in one process at a time, so no other process pops from it; within
// the process, a Pop that waits is woken by Push.
type BoltInbox struct {
	db *bbolt.DB

	mu   sync.Mutex
	wake chan struct{} // closed (and replaced) by each Push
}

var (
	_ Inbox     = (*BoltInbox)(nil)
	_ Recoverer = (*BoltInbox)(nil)
)

var (
	boltInboxBucket  = []byte("bot-inbox")
	boltWaiting      = []byte("waiting")
	boltProcessing   = []byte("processing")
	errBoltNoBuckets = errors.New("inbox: the bucket bot-inbox is missing")
)

// NewBoltInbox returns the Inbox in db, creating its buckets when they are missing. The
// caller owns db and closes it after the last use of the inbox.
func NewBoltInbox(db *bbolt.DB) (*BoltInbox, error) {
	err := db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(boltInboxBucket)
		if err != nil {
			return err
		}
		if _, err := b.CreateBucketIfNotExists(boltWaiting); err != nil {
			return err
		}
		_, err = b.CreateBucketIfNotExists(boltProcessing)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("inbox: create buckets in %s: %w", db.Path(), err)
	}
	return &BoltInbox{db: db, wake: make(chan struct{})}, nil
}

// boltBuckets returns the waiting and processing buckets of tx.
func boltBuckets(tx *bbolt.Tx) (waiting, processing *bbolt.Bucket, err error) {
	b := tx.Bucket(boltInboxBucket)
	if b == nil {
		return nil, nil, errBoltNoBuckets
	}
	waiting, processing = b.Bucket(boltWaiting), b.Bucket(boltProcessing)
	if waiting == nil || processing == nil {
		return nil, nil, errBoltNoBuckets
	}
	return waiting, processing, nil
}

// signal returns the channel the next Push closes.
func (bi *BoltInbox) signal() <-chan struct{} {
	bi.mu.Lock()
	defer bi.mu.Unlock()
	return bi.wake
}

// notify wakes the Pops that wait.
func (bi *BoltInbox) notify() {
	bi.mu.Lock()
	defer bi.mu.Unlock()
	close(bi.wake)
	bi.wake = make(chan struct{})
}

// Push implements Inbox. The delivery is on disk (the transaction synced) when Push
// returns nil.
func (bi *BoltInbox) Push(ctx context.Context, d hook.Delivery) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	v, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("inbox: encode %s: %w", d.ID, err)
	}
	err = bi.db.Update(func(tx *bbolt.Tx) error {
		waiting, _, err := boltBuckets(tx)
		if err != nil {
			return err
		}
		seq, err := waiting.NextSequence()
		if err != nil {
			return err
		}
		return waiting.Put(binary.BigEndian.AppendUint64(nil, seq), v)
	})
	if err != nil {
		return fmt.Errorf("inbox: push %s: %w", d.ID, err)
	}
	bi.notify()
	return nil
}

// Pop implements Inbox. A Pop that waits returns as soon as a Push stores a delivery, and
// ctx's error when ctx is done first.
func (bi *BoltInbox) Pop(ctx context.Context, block time.Duration) (hook.Delivery, func(context.Context) error, error) {
	var timeout <-chan time.Time
	for {
		if err := ctx.Err(); err != nil {
			return hook.Delivery{}, nil, err
		}
		// Taken before looking, so a Push between the look and the wait is not missed.
		wake := bi.signal()
		d, ack, err := bi.popOnce()
		if !errors.Is(err, ErrInboxEmpty) || block <= 0 {
			return d, ack, err
		}
		if timeout == nil {
			t := time.NewTimer(block)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-wake:
		case <-timeout:
			return hook.Delivery{}, nil, ErrInboxEmpty
		case <-ctx.Done():
			return hook.Delivery{}, nil, ctx.Err()
		}
	}
}

// popOnce moves the first waiting delivery to processing, or returns ErrInboxEmpty.
func (bi *BoltInbox) popOnce() (hook.Delivery, func(context.Context) error, error) {
	var key, val []byte
	err := bi.db.Update(func(tx *bbolt.Tx) error {
		waiting, processing, err := boltBuckets(tx)
		if err != nil {
			return err
		}
		k, v := waiting.Cursor().First()
		if k == nil {
			return ErrInboxEmpty
		}
		// k and v live in the transaction's pages: copy them out.
		key, val = append([]byte(nil), k...), append([]byte(nil), v...)
		if err := waiting.Delete(key); err != nil {
			return err
		}
		return processing.Put(key, val)
	})
	if errors.Is(err, ErrInboxEmpty) {
		return hook.Delivery{}, nil, ErrInboxEmpty
	}
	if err != nil {
		return hook.Delivery{}, nil, fmt.Errorf("inbox: pop: %w", err)
	}
	ack := func(ctx context.Context) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := bi.db.Update(func(tx *bbolt.Tx) error {
			_, processing, err := boltBuckets(tx)
			if err != nil {
				return err
			}
			return processing.Delete(key)
		})
		if err != nil {
			return fmt.Errorf("inbox: ack: %w", err)
		}
		return nil
	}
	var d hook.Delivery
	if err := json.Unmarshal(val, &d); err != nil {
		// Not a delivery: drop it, or it would come back after every Recover.
		_ = ack(context.Background())
		return hook.Delivery{}, nil, fmt.Errorf("inbox: decode: %w", err)
	}
	return d, ack, nil
}

// Recover implements Recoverer: it moves every delivery of processing back to waiting,
// ahead of the deliveries that were never popped, in one transaction.
func (bi *BoltInbox) Recover(ctx context.Context) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	n := 0
	err := bi.db.Update(func(tx *bbolt.Tx) error {
		waiting, processing, err := boltBuckets(tx)
		if err != nil {
			return err
		}
		var keys [][]byte
		err = processing.ForEach(func(k, v []byte) error {
			keys = append(keys, append([]byte(nil), k...))
			return waiting.Put(append([]byte(nil), k...), append([]byte(nil), v...))
		})
		if err != nil {
			return err
		}
		for _, k := range keys {
			if err := processing.Delete(k); err != nil {
				return err
			}
		}
		n = len(keys)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("inbox: recover: %w", err)
	}
	if n > 0 {
		bi.notify()
	}
	return n, nil
}

// Len returns the number of deliveries waiting and being processed.
func (bi *BoltInbox) Len() (waiting, processing int, err error) {
	err = bi.db.View(func(tx *bbolt.Tx) error {
		w, p, err := boltBuckets(tx)
		if err != nil {
			return err
		}
		waiting, processing = count(w), count(p)
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("inbox: len: %w", err)
	}
	return waiting, processing, nil
}

func count(b *bbolt.Bucket) int {
	n := 0
	c := b.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		n++
	}
	return n
}
