package main

import (
	"io"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/profile"
)

// TestRunnerListenFree: serve --runner's default port is in no profile's or stack's ports, so
// the bot never holds a port a measurement on the same host listens on.
func TestRunnerListenFree(t *testing.T) {
	port := listenPort(runnerListen)
	if port == 0 {
		t.Fatalf("runnerListen %q has no port", runnerListen)
	}
	for _, h := range profile.HostPorts() {
		if h.Port == port {
			t.Errorf("runnerListen %s is port %d, which %s listens on", runnerListen, port, h.Who())
		}
	}
}

// TestServeRunnerRefusesProfilePorts: with --runner, a listen address given on purpose on a
// port some profile or stack listens on is refused with the port, its users and the fix; the
// default moves to runnerListen; without --runner (serve on its own machine) it is kept.
func TestServeRunnerRefusesProfilePorts(t *testing.T) {
	env := map[string]string{"ARENA_WEBHOOK_SECRET": "s3cret", "ARENA_GITHUB_TOKEN": "tok"}
	getenv := func(k string) string { return env[k] }
	for _, tt := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"--runner", "--listen", ":9090"}, "serve --runner: ARENA_LISTEN :9090 is port 9090, which a measurement on this host listens on (production-stack's authsvc); set ARENA_LISTEN (--listen) to a port no profile or stack uses, e.g. :9300 (the default)"},
		{[]string{"--runner", "--listen", "127.0.0.1:6379"}, "port 6379, which a measurement on this host listens on (crud's redis sidecar; production-stack's cache)"},
		{[]string{"--runner", "--listen", "[::1]:8443"}, "proxy of gateway-64 and gateway-h3; production-stack's edge"},
	} {
		_, err := parseServe(tt.args, getenv, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("parseServe(%q) = %v, want an error with %q", tt.args, err, tt.wantErr)
		}
	}
	env["ARENA_LISTEN"] = ":9090"
	if c, err := parseServe(nil, getenv, io.Discard); err != nil || c.Listen != ":9090" {
		t.Errorf("serve without --runner on :9090 = %q, %v; want it kept (no measurement on that host)", c.Listen, err)
	}
	delete(env, "ARENA_LISTEN")
	if c, err := parseServe([]string{"--runner"}, getenv, io.Discard); err != nil || c.Listen != runnerListen {
		t.Errorf("serve --runner by default = %q, %v; want %s", c.Listen, err, runnerListen)
	}
}
