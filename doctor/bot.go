package doctor

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/arenabot/arenabot/queue/redisconn"
)

// BotConfig is what serve would use, from its flags and variables.
type BotConfig struct {
	Listen   string // ":8080"
	RedisURL string // "": the embedded store in StateDir
	RedisTLS redisconn.TLSFiles
	StateDir string
}

// BotChecks are the checks of the webhook service's host. The secret and the GitHub
// credentials are read from ARENA_WEBHOOK_SECRET, ARENA_GITHUB_TOKEN (with ARENA_REPOS),
// ARENA_GITHUB_APP_ID and ARENA_GITHUB_PRIVATE_KEY_FILE.
func BotChecks(c BotConfig, env Env) []Check {
	return []Check{
		{"webhook secret", func(ctx context.Context) Result { return checkSecret(env) }},
		{"github", func(ctx context.Context) Result { return checkGitHub(env) }},
		{"queue", func(ctx context.Context) Result { return checkQueue(ctx, c) }},
		{"listen " + c.Listen, func(ctx context.Context) Result { return checkListen(env, c.Listen) }},
	}
}

func checkSecret(env Env) Result {
	if env.Getenv("ARENA_WEBHOOK_SECRET") == "" {
		return fail("ARENA_WEBHOOK_SECRET unset", "set it to the secret of the GitHub App's webhook (or give serve --webhook-secret-file): serve refuses to start without it")
	}
	return ok("ARENA_WEBHOOK_SECRET set") // never its value or length
}

func checkGitHub(env Env) Result {
	if env.Getenv("ARENA_GITHUB_TOKEN") != "" {
		if env.Getenv("ARENA_REPOS") == "" {
			return fail("ARENA_GITHUB_TOKEN set without ARENA_REPOS", "set ARENA_REPOS to the repositories the bot serves, e.g. ARENA_REPOS=octo/arena: with a token serve refuses to start without it")
		}
		return ok("ARENA_GITHUB_TOKEN set, serving %s", env.Getenv("ARENA_REPOS"))
	}
	id, file := env.Getenv("ARENA_GITHUB_APP_ID"), env.Getenv("ARENA_GITHUB_PRIVATE_KEY_FILE")
	if id == "" && file == "" {
		return fail("no credentials", "set ARENA_GITHUB_TOKEN, or ARENA_GITHUB_APP_ID and ARENA_GITHUB_PRIVATE_KEY_FILE")
	}
	if id == "" || file == "" {
		return fail("App id or private key file unset", "set both ARENA_GITHUB_APP_ID and ARENA_GITHUB_PRIVATE_KEY_FILE")
	}
	b, err := env.ReadFile(file)
	if err != nil {
		return fail("private key: "+firstLine(err.Error()), "make the file readable for serve's user")
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return fail(file+" is not PEM", "download the App's private key (.pem) again from its settings page")
	}
	if _, err := x509.ParsePKCS1PrivateKey(blk.Bytes); err != nil {
		if _, err := x509.ParsePKCS8PrivateKey(blk.Bytes); err != nil {
			return fail(file+": PEM without a private key ("+blk.Type+")", "download the App's private key (.pem) again from its settings page")
		}
	}
	return ok("App %s, key %s", id, file)
}

// checkQueue pings the Redis serve would use, with its TLS files, or checks that the
// embedded store's directory is writable.
func checkQueue(ctx context.Context, c BotConfig) Result {
	if c.RedisURL != "" {
		opts, err := redisconn.Options(c.RedisURL, c.RedisTLS)
		if err != nil {
			return fail(firstLine(err.Error()), "fix ARENA_REDIS_URL or ARENA_REDIS_CA/CERT/KEY")
		}
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		rdb, err := redisconn.Dial(ctx, c.RedisURL, c.RedisTLS)
		if err != nil {
			return fail(firstLine(err.Error()), "start Redis or fix ARENA_REDIS_URL (and ARENA_REDIS_CA/CERT/KEY for rediss://)")
		}
		rdb.Close()
		tls := ""
		if opts.TLSConfig != nil {
			tls = " over TLS"
		}
		return ok("Redis at %s answers PING%s", opts.Addr, tls)
	}
	if c.StateDir == "" {
		return fail("no ARENA_REDIS_URL and no state dir", "set ARENA_REDIS_URL or ARENA_STATE_DIR")
	}
	if err := os.MkdirAll(c.StateDir, 0o700); err != nil {
		return fail("state dir: "+firstLine(err.Error()), "make ARENA_STATE_DIR writable for serve's user")
	}
	f, err := os.CreateTemp(c.StateDir, ".doctor-")
	if err != nil {
		return fail("state dir: "+firstLine(err.Error()), "make ARENA_STATE_DIR writable for serve's user")
	}
	f.Close()
	os.Remove(f.Name())
	return ok("embedded store, %s writable", c.StateDir)
}

// checkListen binds serve's address, unless another arenabot run holds the host lock: then
// its servers may be about to listen on that port, so it is only looked up.
func checkListen(env Env, addr string) Result {
	port := -1
	if _, p, err := net.SplitHostPort(addr); err == nil {
		if n, err := strconv.Atoi(p); err == nil {
			port = n
		}
	}
	if holder, held := env.lockHolder(); held && port >= 0 {
		if owner, found := env.findOwner("tcp", port); found {
			return fail("taken by "+owner+" (pid "+holder+" holds the host lock)", "serve and the benchmarked servers need different ports: set ARENA_LISTEN (--listen)")
		}
		return warn("not probed while pid "+holder+" holds the host lock", "run doctor again when no measurement runs")
	}
	l, err := env.Listen("tcp", addr)
	if err != nil {
		owner := "another process"
		if port >= 0 {
			owner = env.portOwner("tcp", port)
		}
		return fail("taken by "+owner, "stop it or set ARENA_LISTEN (--listen) to a free address")
	}
	l.Close()
	return ok("free")
}
