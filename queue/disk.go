package queue

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// Disk is the embedded Queue when no Redis URL is set: Memory's state
// machine with its whole state (jobs, lines, retries, running claims with
// their tokens and lease deadlines, the fencing counter, delivery IDs, the
// event stream with its consumer groups and their pending entries, when
// runners were seen) kept in a bbolt file. Every change is committed to the
// file in one bbolt transaction, written only where it changed, before the
// method returns, so what a call acknowledged survives a crash; OpenDisk
// reads it all back. One process at a time may have the file open. The live
// runner hosts (Announce) are the exception: they live for seconds and every
// runner announces itself again within its heartbeat, so they are kept in
// memory only.
//
// When a commit fails, the method returns its error and the queue loads its
// state from the file again, so it never holds what the file does not: the
// change did not happen. If that load fails too, every later call fails
// until the file is opened again.
//
// Lease deadlines are wall-clock times: a running job whose runner stopped
// heart-beating while the process was down is lost at the first Reap after
// OpenDisk.
type Disk struct {
	*Memory
	db *bbolt.DB
}

var _ Queue = (*Disk)(nil)

// Buckets of the file. Everything the queue keeps is below queueBucket, so
// other parts of the service may keep their own buckets in the same file.
var (
	queueBucket      = []byte("queue")
	jobsBucket       = []byte("jobs")       // job ID -> memJobRecord (JSON)
	eventsBucket     = []byte("events")     // entry number (8 bytes, big-endian) -> memEntryRecord (JSON)
	deliveriesBucket = []byte("deliveries") // delivery ID -> when it is forgotten (RFC 3339)
	metaKey          = []byte("meta")       // in queueBucket: memMeta (JSON)
)

// lockTimeout is how long OpenDisk waits for another process's lock on the
// file before it gives up.
const lockTimeout = time.Second

var errClosed = errors.New("queue closed")

// OpenDisk opens (creating it if needed) the queue kept in the bbolt file
// at path. A file that another process has open gives, after about a
// second, an error that wraps bbolt's ErrTimeout. Call Close when done.
func OpenDisk(path string, o Options) (*Disk, error) {
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: lockTimeout})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("open queue %s: another arenabot process is using it (it stayed locked for %v): %w", path, lockTimeout, err)
	}
	if err != nil {
		return nil, fmt.Errorf("open queue %s: %w", path, err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		root, err := tx.CreateBucketIfNotExists(queueBucket)
		if err != nil {
			return err
		}
		for _, name := range [][]byte{jobsBucket, eventsBucket, deliveriesBucket} {
			if _, err := root.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open queue %s: %w", path, err)
	}
	d := &Disk{Memory: NewMemory(o), db: db}
	d.mu.Lock()
	d.store = diskStore{db}
	err = d.loadLocked()
	d.mu.Unlock()
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open queue %s: %w", path, err)
	}
	return d, nil
}

// DB returns the queue's bbolt database, for other buckets of the same
// file. The queue's own bucket is "queue": leave it alone.
func (d *Disk) DB() *bbolt.DB { return d.db }

// Close closes the file. Calls waiting in Claim or Events return, and every
// later call fails.
func (d *Disk) Close() error {
	d.mu.Lock()
	if d.err == nil {
		d.err = errClosed
	}
	d.life.changed()
	d.stream.woken()
	d.mu.Unlock()
	return d.db.Close()
}

// diskStore is the memStore of a Disk.
type diskStore struct{ db *bbolt.DB }

func eventKey(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }

func (s diskStore) save(c *memChange) error {
	return s.db.Update(func(tx *bbolt.Tx) error {
		root := tx.Bucket(queueBucket)
		if root == nil {
			return fmt.Errorf("bucket %s is missing", queueBucket)
		}
		jobs, events, deliveries := root.Bucket(jobsBucket), root.Bucket(eventsBucket), root.Bucket(deliveriesBucket)
		for id, r := range c.Jobs {
			if r == nil {
				if err := jobs.Delete([]byte(id)); err != nil {
					return err
				}
				continue
			}
			b, err := json.Marshal(r)
			if err != nil {
				return err
			}
			if err := jobs.Put([]byte(id), b); err != nil {
				return err
			}
		}
		for id, exp := range c.Deliveries {
			var err error
			if exp.IsZero() {
				err = deliveries.Delete([]byte(id))
			} else {
				err = deliveries.Put([]byte(id), []byte(exp.UTC().Format(time.RFC3339Nano)))
			}
			if err != nil {
				return err
			}
		}
		if c.TrimBelow > 0 {
			var gone [][]byte
			cur := events.Cursor()
			for k, _ := cur.First(); k != nil && binary.BigEndian.Uint64(k) < c.TrimBelow; k, _ = cur.Next() {
				gone = append(gone, k)
			}
			for _, k := range gone {
				if err := events.Delete(k); err != nil {
					return err
				}
			}
		}
		for _, e := range c.Events {
			b, err := json.Marshal(e)
			if err != nil {
				return err
			}
			if err := events.Put(eventKey(e.N), b); err != nil {
				return err
			}
		}
		if c.Meta != nil {
			if err := root.Put(metaKey, c.Meta); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s diskStore) load() (*memSnapshot, error) {
	snap := &memSnapshot{Jobs: make(map[string]*memJobRecord), Deliveries: make(map[string]time.Time)}
	err := s.db.View(func(tx *bbolt.Tx) error {
		root := tx.Bucket(queueBucket)
		if root == nil {
			return fmt.Errorf("bucket %s is missing", queueBucket)
		}
		err := root.Bucket(jobsBucket).ForEach(func(k, v []byte) error {
			var r memJobRecord
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("job %s: %w", k, err)
			}
			snap.Jobs[string(k)] = &r
			return nil
		})
		if err != nil {
			return err
		}
		err = root.Bucket(eventsBucket).ForEach(func(k, v []byte) error {
			var e memEntryRecord
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("event %d: %w", binary.BigEndian.Uint64(k), err)
			}
			snap.Events = append(snap.Events, e)
			return nil
		})
		if err != nil {
			return err
		}
		err = root.Bucket(deliveriesBucket).ForEach(func(k, v []byte) error {
			exp, err := time.Parse(time.RFC3339Nano, string(v))
			if err != nil {
				return fmt.Errorf("delivery %s: %w", k, err)
			}
			snap.Deliveries[string(k)] = exp
			return nil
		})
		if err != nil {
			return err
		}
		snap.Meta = append([]byte(nil), root.Get(metaKey)...) // valid only inside the transaction
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load queue state: %w", err)
	}
	return snap, nil
}
