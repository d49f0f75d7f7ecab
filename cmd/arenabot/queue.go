package main

import (
	"context"
	"fmt"
	"io"
	"os/user"

	"github.com/spf13/pflag"

	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/queue/redisconn"
)

type queueConfig struct {
	RedisURL string
	RedisTLS redisconn.TLSFiles
	Prefix   string
	By       string
	Action   string
	Arg      string
}

const queueUsage = "usage: arenabot queue status | list | cancel <job-id> | drain <pool> [flags]"

func parseQueue(args []string, getenv func(string) string, stderr io.Writer) (queueConfig, error) {
	fs := pflag.NewFlagSet("queue", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), queueUsage+"\n\nInspects and manages the job queue the bot and the runners share.\n\nflags:")
		fs.PrintDefaults()
	}
	var c queueConfig
	by := "operator"
	if u, err := user.Current(); err == nil && u.Username != "" {
		by = u.Username
	}
	fs.StringVar(&c.RedisURL, "redis-url", getenv("ARENA_REDIS_URL"), "the queue's Redis (env ARENA_REDIS_URL)")
	redisTLSFlags(fs, getenv, &c.RedisTLS)
	fs.StringVar(&c.Prefix, "prefix", envOr(getenv, "ARENA_REDIS_PREFIX", "arena:"), "key prefix of the queue (env ARENA_REDIS_PREFIX)")
	fs.StringVar(&c.By, "by", by, "who cancels, recorded on the job")
	if err := parseFlags(fs, args); err != nil {
		return c, err
	}
	want := map[string]int{"status": 0, "list": 0, "cancel": 1, "drain": 1}
	if fs.NArg() == 0 {
		return c, fmt.Errorf("queue: no action given; %s", queueUsage)
	}
	c.Action = fs.Arg(0)
	n, ok := want[c.Action]
	if !ok {
		return c, fmt.Errorf("queue: unknown action %q; %s", c.Action, queueUsage)
	}
	if fs.NArg()-1 != n {
		return c, fmt.Errorf("queue %s: wrong number of arguments; %s", c.Action, queueUsage)
	}
	if n == 1 {
		c.Arg = fs.Arg(1)
	}
	if c.RedisURL == "" {
		return c, fmt.Errorf("queue: ARENA_REDIS_URL is not set, so the queue is the one embedded in the 'arenabot serve' process; set ARENA_REDIS_URL (or --redis-url) to the Redis the service uses")
	}
	return c, nil
}

func queueCommand(ctx context.Context, c queueConfig, stdout io.Writer) error {
	rdb, err := dialRedis(ctx, c.RedisURL, c.RedisTLS, "queue")
	if err != nil {
		return fmt.Errorf("%w; check ARENA_REDIS_URL and that redis-server runs", err)
	}
	defer rdb.Close()
	return runQueueAction(ctx, queue.NewRedis(rdb, queue.Options{Prefix: c.Prefix}), c, stdout)
}

// runQueueAction runs one operator action against any queue implementation.
func runQueueAction(ctx context.Context, q queue.Queue, c queueConfig, stdout io.Writer) error {
	switch c.Action {
	case "status":
		return queue.WriteStatus(ctx, stdout, q)
	case "list":
		return queue.WriteList(ctx, stdout, q)
	case "cancel":
		return queue.CancelJob(ctx, stdout, q, c.Arg, c.By)
	default: // drain
		return queue.DrainPool(ctx, stdout, q, c.Arg, c.By)
	}
}
