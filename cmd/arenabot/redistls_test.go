package main

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/queue/queuetest"
	"github.com/arenabot/arenabot/queue/redisconn"
)

// TestRedisTLSFlags: ARENA_REDIS_CA, ARENA_REDIS_CERT and ARENA_REDIS_KEY (and their flags)
// reach work, serve, serve --runner's runner and queue.
func TestRedisTLSFlags(t *testing.T) {
	vars := map[string]string{"ARENA_REDIS_URL": "rediss://runner:pw@redis.example:6379/0", "ARENA_WEBHOOK_SECRET": "s", "ARENA_GITHUB_TOKEN": "tok",
		"ARENA_REDIS_CA": "/tls/ca.crt", "ARENA_REDIS_CERT": "/tls/c.crt", "ARENA_REDIS_KEY": "/tls/c.key"}
	getenv := func(k string) string { return vars[k] }
	want := redisconn.TLSFiles{CA: "/tls/ca.crt", Cert: "/tls/c.crt", Key: "/tls/c.key"}
	w, err := parseWork(nil, getenv, io.Discard)
	if err != nil || w.RedisTLS != want {
		t.Errorf("work: %+v, %v; want %+v", w.RedisTLS, err, want)
	}
	s, err := parseServe([]string{"--runner", "--listen", "127.0.0.1:9"}, getenv, io.Discard)
	if err != nil || s.RedisTLS != want || s.Work.RedisTLS != want {
		t.Errorf("serve --runner: %+v and its runner %+v, %v; want %+v", s.RedisTLS, s.Work.RedisTLS, err, want)
	}
	q, err := parseQueue([]string{"status", "--redis-ca", "/other/ca.crt"}, getenv, io.Discard)
	if want := (redisconn.TLSFiles{CA: "/other/ca.crt", Cert: "/tls/c.crt", Key: "/tls/c.key"}); err != nil || q.RedisTLS != want {
		t.Errorf("queue --redis-ca: %+v, %v; want %+v", q.RedisTLS, err, want)
	}
}

// TestQueueCommandTLS: `arenabot queue status` reaches a TLS-only Redis with ACL users as
// its user, trusting ARENA_REDIS_CA; without the CA, or with a redis:// URL, it says why not
// in one line.
func TestQueueCommandTLS(t *testing.T) {
	srv := queuetest.StartRedis(t, queuetest.TLS(), queuetest.Users("ops on >ops-pw ~arena:* -@all +@read +@transaction +ping +hello +evalsha +eval"))
	cmd := func(env map[string]string) (string, error) {
		var out, errb bytes.Buffer
		err := run(t.Context(), []string{"queue", "status"}, func(k string) string { return env[k] }, &out, &errb)
		return out.String(), err
	}
	url := "rediss://ops:ops-pw@" + srv.Addr + "/0"
	if out, err := cmd(map[string]string{"ARENA_REDIS_URL": url, "ARENA_REDIS_CA": srv.TLS.CA}); err != nil {
		t.Errorf("queue status over TLS: %v\n%s", err, out)
	}
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"ARENA_REDIS_URL": url}, "certificate"},
		{map[string]string{"ARENA_REDIS_URL": "redis://" + srv.Addr, "ARENA_REDIS_CA": srv.TLS.CA}, "use rediss://"},
		{map[string]string{"ARENA_REDIS_URL": url, "ARENA_REDIS_CA": srv.TLS.CA, "ARENA_REDIS_CERT": srv.TLS.ClientCert}, "both its certificate and its key"},
	} {
		if _, err := cmd(c.env); err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("queue status with %v: %v; want one line with %q", c.env, err, c.want)
		}
	}
}
