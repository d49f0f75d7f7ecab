package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/pflag"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/arenabot/arenabot/bot"
	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/queue/redisconn"
)

// A store is where serve keeps its state: the queue (with the requests awaiting approval)
// and the webhook inbox, on Redis or in the embedded file.
type store struct {
	q     queue.Queue
	inbox bot.Inbox
	where string // for the log: "redis" or the file's path
	close func() error
}

// openQueue opens the Redis queue when a URL is set, else the embedded store: the file
// arenabot.db in StateDir (created 0700), which one process at a time may hold.
func openQueue(ctx context.Context, c serveConfig, log *slog.Logger) (store, error) {
	opts := queue.Options{Prefix: c.Prefix, Depth: c.Depth, Logger: log.With("component", "queue")}
	if c.Runner {
		opts.LeaseTTL = c.Work.LeaseTTL
	}
	if c.RedisURL != "" {
		rdb, err := dialRedis(ctx, c.RedisURL, c.RedisTLS, "serve")
		if err != nil {
			return store{}, err
		}
		return store{
			q: queue.NewRedis(rdb, opts), inbox: bot.NewRedisInbox(rdb, c.Prefix),
			where: "redis", close: rdb.Close,
		}, nil
	}
	if err := os.MkdirAll(c.StateDir, 0o700); err != nil {
		return store{}, fmt.Errorf("serve: state directory: %w; set ARENA_STATE_DIR (or --state-dir) to a directory serve may write", err)
	}
	path := filepath.Join(c.StateDir, stateFile)
	d, err := queue.OpenDisk(path, opts)
	if errors.Is(err, bolterrors.ErrTimeout) {
		return store{}, fmt.Errorf("serve: the embedded store %s is in use by another process (another arenabot serve?); stop it, or give this one another ARENA_STATE_DIR (or --state-dir)", path)
	}
	if err != nil {
		return store{}, fmt.Errorf("serve: embedded store %s: %w", path, err)
	}
	inbox, err := bot.NewBoltInbox(d.DB())
	if err != nil {
		d.Close()
		return store{}, fmt.Errorf("serve: embedded store %s: %w", path, err)
	}
	return store{q: d, inbox: inbox, where: path, close: d.Close}, nil
}

// stateFile is the embedded store's file in the state directory.
const stateFile = "arenabot.db"

// defaultStateDir is ARENA_STATE_DIR, else $XDG_STATE_HOME/arenabot, else
// ~/.local/state/arenabot; "" when there is no home directory either.
func defaultStateDir(getenv func(string) string) string {
	if v := getenv("ARENA_STATE_DIR"); v != "" {
		return v
	}
	if v := getenv("XDG_STATE_HOME"); filepath.IsAbs(v) {
		return filepath.Join(v, "arenabot")
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".local", "state", "arenabot")
}

// redisTLSFlags registers the files of a TLS connection to the queue's Redis, for a
// rediss:// URL.
func redisTLSFlags(fs *pflag.FlagSet, getenv func(string) string, f *redisconn.TLSFiles) {
	fs.StringVar(&f.CA, "redis-ca", getenv("ARENA_REDIS_CA"), "PEM file of the CA that signed the Redis server's certificate, for a rediss:// URL; default: the system's roots (ARENA_REDIS_CA)")
	fs.StringVar(&f.Cert, "redis-cert", getenv("ARENA_REDIS_CERT"), "PEM file of the client certificate for a Redis that asks for one (ARENA_REDIS_CERT)")
	fs.StringVar(&f.Key, "redis-key", getenv("ARENA_REDIS_KEY"), "PEM file of that certificate's private key (ARENA_REDIS_KEY)")
}

// dialRedis connects to the Redis at url, over TLS for rediss:// with files, and checks that
// it answers.
func dialRedis(ctx context.Context, url string, files redisconn.TLSFiles, cmd string) (*redis.Client, error) {
	rdb, err := redisconn.Dial(ctx, url, files)
	if err != nil {
		return nil, fmt.Errorf("%s: ARENA_REDIS_URL: %w", cmd, err)
	}
	return rdb, nil
}
