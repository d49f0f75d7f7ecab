package redisconn_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/arenabot/arenabot/queue"
	"github.com/arenabot/arenabot/queue/queuetest"
	"github.com/arenabot/arenabot/queue/redisconn"
)

// roleRule matches a role's ACL rule in deploy/compose.yaml, its password left out.
var roleRule = regexp.MustCompile(`(?m)^\s*--user (bot|runner) (on) '>\$\{[A-Z_]+:\?\}' (.*)$`)

// composeUsers reads the ACL rules of the bot and the runner from deploy/compose.yaml, so
// that the rules tested are the ones deployed, with a password made for the test each.
func composeUsers(t *testing.T) (rules []string, passwords map[string]string) {
	t.Helper()
	b, err := os.ReadFile("../../deploy/compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	passwords = map[string]string{}
	for _, m := range roleRule.FindAllStringSubmatch(string(b), -1) {
		var pw [12]byte
		_, _ = rand.Read(pw[:])
		passwords[m[1]] = hex.EncodeToString(pw[:])
		words := strings.Fields(m[3])
		for i, w := range words {
			words[i] = strings.Trim(w, "'")
		}
		rules = append(rules, fmt.Sprintf("%s %s >%s %s", m[1], m[2], passwords[m[1]], strings.Join(words, " ")))
	}
	if len(passwords) != 2 {
		t.Fatalf("deploy/compose.yaml has rules for %d of the roles bot and runner: %v", len(passwords), rules)
	}
	return rules, passwords
}

// tlsServer starts a redis-server that serves TLS only with compose.yaml's users.
func tlsServer(t *testing.T) (*queuetest.Server, map[string]string) {
	t.Helper()
	rules, passwords := composeUsers(t)
	return queuetest.StartRedis(t, queuetest.TLS(), queuetest.Users(rules...)), passwords
}

// dial connects as user over TLS, with the test's client certificate when cert is set.
func dial(t *testing.T, s *queuetest.Server, user, password string, cert bool) *redis.Client {
	t.Helper()
	files := redisconn.TLSFiles{CA: s.TLS.CA}
	if cert {
		files.Cert, files.Key = s.TLS.ClientCert, s.TLS.ClientKey
	}
	rdb, err := redisconn.Dial(t.Context(), fmt.Sprintf("rediss://%s:%s@%s/0", user, password, s.Addr), files)
	if err != nil {
		t.Fatalf("dial as %s: %v", user, err)
	}
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

func noPerm(err error) bool { return err != nil && strings.HasPrefix(err.Error(), "NOPERM") }

// TestRunnerUser: the runner's user claims, heart-beats, publishes and finishes a job the
// bot's user queued, over TLS with a client certificate; it is refused a key outside the
// queue's (another prefix, the bot's webhook inbox), commands it does not need, and the
// bot's reads of the event stream.
func TestRunnerUser(t *testing.T) {
	s, pw := tlsServer(t)
	ctx := t.Context()
	bot := queue.NewRedis(dial(t, s, "bot", pw["bot"], false), queue.Options{Prefix: "arena:"})
	rdb := dial(t, s, "runner", pw["runner"], true)
	runner := queue.NewRedis(rdb, queue.Options{Prefix: "arena:"})

	j, _, err := bot.Enqueue(ctx, queuetest.Job(1, ""))
	if err != nil {
		t.Fatalf("bot Enqueue: %v", err)
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	l, err := runner.Claim(cctx, "")
	if err != nil || l.Job.ID != j.ID {
		t.Fatalf("runner Claim = %s, %v; want %s", l.Job.ID, err, j.ID)
	}
	if cancelled, err := runner.Heartbeat(ctx, l); err != nil || cancelled {
		t.Fatalf("runner Heartbeat = %v, %v", cancelled, err)
	}
	if err := runner.Publish(ctx, queue.Event{Job: j.ID, Kind: "progress", Data: []byte(`{"done":1}`)}); err != nil {
		t.Fatalf("runner Publish: %v", err)
	}
	done, err := runner.Finish(ctx, l, queue.Outcome{State: queue.Done, Result: []byte(`{}`)})
	if err != nil || done.State != queue.Done {
		t.Fatalf("runner Finish = %s, %v", done.State, err)
	}
	if got, err := bot.Get(ctx, j.ID); err != nil || got.State != queue.Done {
		t.Errorf("the bot reads the job as %s, %v; want done", got.State, err)
	}
	// The runner announces its host; the bot (the status page) lists it.
	if err := runner.Announce(ctx, queue.Host{Pool: "default", Name: "bench-1", CPU: "test CPU"}, time.Minute); err != nil {
		t.Fatalf("runner Announce: %v", err)
	}
	if hosts, err := bot.Hosts(ctx); err != nil || len(hosts) != 1 || hosts[0].Name != "bench-1" {
		t.Errorf("the bot lists the hosts as %+v, %v; want bench-1", hosts, err)
	}

	for _, c := range []struct {
		what string
		err  error
	}{
		{"SET outside the prefix", rdb.Set(ctx, "other:key", "x", 0).Err()},
		{"GET outside the prefix", rdb.Get(ctx, "other:key").Err()},
		{"LPUSH to the bot's webhook inbox", rdb.LPush(ctx, "arena:inbox", "x").Err()},
		{"SET of a delivery id", rdb.Set(ctx, "arena:delivery:1", "1", 0).Err()},
		{"FLUSHALL", rdb.FlushAll(ctx).Err()},
		{"CONFIG GET", rdb.ConfigGet(ctx, "*").Err()},
		{"KEYS", rdb.Keys(ctx, "arena:*").Err()},
		{"XREADGROUP of the events", rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "bot", Consumer: "x", Streams: []string{"arena:events", ">"}, Count: 1, Block: -1}).Err()},
		{"EVAL", rdb.Eval(ctx, "return 1", nil).Err()},
	} {
		if !noPerm(c.err) {
			t.Errorf("runner %s: %v; want NOPERM", c.what, c.err)
		}
	}
}

// TestBotUser: the bot's user passes the queue's conformance suite (every operation of the
// bot, and of serve --runner's runner, on keys under arena:), works the webhook inbox, and is
// refused what no role needs.
func TestBotUser(t *testing.T) {
	s, pw := tlsServer(t)
	rdb := dial(t, s, "bot", pw["bot"], false)
	var n atomic.Int64
	queuetest.Conformance(t, func(t *testing.T, o queue.Options) queue.Queue {
		o.Prefix = fmt.Sprintf("arena:t%d:", n.Add(1))
		return queue.NewRedis(rdb, o)
	})
	ctx := context.Background()
	if err := rdb.LPush(ctx, "arena:inbox", "delivery").Err(); err != nil {
		t.Errorf("bot LPUSH inbox: %v", err)
	}
	if err := rdb.LMove(ctx, "arena:inbox", "arena:inbox-processing", "RIGHT", "LEFT").Err(); err != nil {
		t.Errorf("bot LMOVE inbox: %v", err)
	}
	for _, c := range []struct {
		what string
		err  error
	}{
		{"SET outside the prefix", rdb.Set(ctx, "other:key", "x", 0).Err()},
		{"FLUSHALL", rdb.FlushAll(ctx).Err()},
		{"CONFIG SET", rdb.ConfigSet(ctx, "appendonly", "no").Err()},
		{"ACL LIST", rdb.Do(ctx, "acl", "list").Err()},
	} {
		if !noPerm(c.err) {
			t.Errorf("bot %s: %v; want NOPERM", c.what, c.err)
		}
	}
}

// TestTLSOnly: the TLS-only server refuses a plain-text client, and a TLS client that does
// not trust its CA, and the default user is off.
func TestTLSOnly(t *testing.T) {
	s, _ := tlsServer(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if rdb, err := redisconn.Dial(ctx, "redis://"+s.Addr, redisconn.TLSFiles{}); err == nil {
		rdb.Close()
		t.Error("a plain-text client got an answer from the TLS-only server")
	} else {
		t.Logf("plain text: %v", err)
	}
	if rdb, err := redisconn.Dial(ctx, "rediss://"+s.Addr, redisconn.TLSFiles{}); err == nil {
		rdb.Close()
		t.Error("a client that does not trust the server's CA connected")
	} else if !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without the CA: %v; want a certificate error", err)
	}
	if rdb, err := redisconn.Dial(ctx, "rediss://"+s.Addr, redisconn.TLSFiles{CA: s.TLS.CA}); err == nil {
		rdb.Close()
		t.Error("the default user, without a password, was let in")
	} else {
		t.Logf("default user: %v", err)
	}
}

func TestOptions(t *testing.T) {
	dir := t.TempDir()
	notPEM := dir + "/ca.crt"
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		url   string
		files redisconn.TLSFiles
		want  string
	}{
		{"redis://h:6379", redisconn.TLSFiles{CA: notPEM}, "use rediss://"},
		{"rediss://h:6379", redisconn.TLSFiles{Cert: "c.crt"}, "both its certificate and its key"},
		{"rediss://h:6379", redisconn.TLSFiles{CA: notPEM}, "holds no PEM certificate"},
		{"rediss://h:6379", redisconn.TLSFiles{CA: dir + "/missing"}, "no such file"},
		{"http://h:6379", redisconn.TLSFiles{}, "want redis://"},
	} {
		if _, err := redisconn.Options(c.url, c.files); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Options(%s, %+v) = %v; want an error with %q", c.url, c.files, err, c.want)
		}
	}
	o, err := redisconn.Options("rediss://u:p@h:6380/2", redisconn.TLSFiles{})
	if err != nil || o.TLSConfig == nil || o.TLSConfig.ServerName != "h" || o.TLSConfig.MinVersion == 0 || o.Username != "u" || o.DB != 2 {
		t.Errorf("Options(rediss://u:p@h:6380/2) = %+v, %v", o, err)
	}
	if o, err := redisconn.Options("redis://h:6379", redisconn.TLSFiles{}); err != nil || o.TLSConfig != nil {
		t.Errorf("Options(redis://) = TLS %v, %v; want none", o.TLSConfig, err)
	}
}
