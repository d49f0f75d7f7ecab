package loadgen

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/internal/deptest"

	"github.com/google/go-cmp/cmp"

	"github.com/arenabot/arenabot/profile"
)

// Profiles shaped like the arena's rows (docs/profiles.md), written out here so the
// tests do not depend on the table's current numbers.
var (
	baselineProfile = profile.Profile{Name: "baseline", Tool: profile.ToolWrk, Pipeline: 1, Scheme: "http", Port: profile.PortH1,
		Requests: []string{"get.raw", "post_cl.raw", "post_chunked.raw"}}
	pipelinedProfile = profile.Profile{Name: "pipelined", Endpoint: "pipeline", Tool: profile.ToolWrk, Pipeline: 16, Scheme: "http", Port: profile.PortH1,
		Requests: []string{"pipeline.raw"}}
	limitedProfile = profile.Profile{Name: "limited-conn", Tool: profile.ToolWrk, Pipeline: 1, RequestsPerConn: 10, Scheme: "http", Port: profile.PortH1,
		Requests: []string{"get.raw", "post_cl.raw", "post_chunked.raw"}}
	staticProfile = profile.Profile{Name: "static", Endpoint: "static", Tool: profile.ToolWrk, Pipeline: 1, Scheme: "http", Port: profile.PortH1,
		Requests: []string{"static-a.css.raw", "static-b.js.raw"}, Headers: []string{"Accept-Encoding: br;q=1, gzip;q=0.8"}}
	h2cProfile = profile.Profile{Name: "baseline-h2c", Endpoint: "h2c", Tool: profile.ToolH2load, Streams: 100, Scheme: "h2c", Port: profile.PortH2C,
		Requests: []string{"/baseline2?a=1&b=1"}}
	jsonH2cProfile = profile.Profile{Name: "json-h2c", Endpoint: "json-h2c", Tool: profile.ToolH2load, Streams: 32, Scheme: "h2c", Port: profile.PortH2C,
		Requests: []string{"json-h2c-uris.txt"}}
	staticH2Profile = profile.Profile{Name: "static-h2", Endpoint: "static-h2", Tool: profile.ToolH2load, Streams: 32, Scheme: profile.SchemeH2, Port: profile.PortTLS,
		Requests: []string{"static-h2-uris.txt"}, Headers: []string{"Accept-Encoding: br;q=1, gzip;q=0.8"}}
)

func spec(p profile.Profile, conns, threads int) Spec {
	return Spec{Profile: p, Host: "127.0.0.1", Conns: conns, Threads: threads, Duration: 5 * time.Second,
		DataDir: "/srv/arena/data", ScriptDir: "/tmp/arena-scripts"}
}

func TestArgs(t *testing.T) {
	const req = "/srv/arena/data/requests/"
	lookup := func(name string) profile.Profile { p, _ := profile.Lookup(name); return p }
	tests := []struct {
		name string
		tool Tool
		spec Spec
		want []string
	}{
		{"wrk baseline", Wrk(), spec(baselineProfile, 512, 64), []string{
			"-t", "64", "-c", "512", "-d", "5s", "--timeout", "2s", "-s", "/tmp/arena-scripts/arena.lua", "http://127.0.0.1:8080", "--",
			req + "get.raw", req + "post_cl.raw", req + "post_chunked.raw", "connections=512", "threads=64", "pipeline=1", "requests_per_conn=0"}},
		{"wrk pipelined", Wrk(), spec(pipelinedProfile, 4096, 64), []string{
			"-t", "64", "-c", "4096", "-d", "5s", "--timeout", "2s", "-s", "/tmp/arena-scripts/arena.lua", "http://127.0.0.1:8080", "--",
			req + "pipeline.raw", "connections=4096", "threads=64", "pipeline=16", "requests_per_conn=0"}},
		{"wrk limited-conn", Wrk(), spec(limitedProfile, 512, 64), []string{
			"-t", "64", "-c", "512", "-d", "5s", "--timeout", "2s", "-s", "/tmp/arena-scripts/arena.lua", "http://127.0.0.1:8080", "--",
			req + "get.raw", req + "post_cl.raw", req + "post_chunked.raw", "connections=512", "threads=64", "pipeline=1", "requests_per_conn=10"}},
		{"wrk static with headers", Wrk(), spec(staticProfile, 1024, 64), []string{
			"-t", "64", "-c", "1024", "-d", "5s", "--timeout", "2s", "-s", "/tmp/arena-scripts/arena.lua", "http://127.0.0.1:8080", "--",
			req + "static-a.css.raw", req + "static-b.js.raw", "connections=1024", "threads=64", "pipeline=1", "requests_per_conn=0",
			"header=Accept-Encoding: br;q=1, gzip;q=0.8"}},
		{"wrk threads capped, timeout, IPv6, https", Wrk(), func() Spec {
			s := spec(baselineProfile, 2, 8)
			s.Profile.Scheme, s.Profile.Port, s.Host, s.Timeout, s.Duration = "https", profile.PortH1TLS, "::1", 10*time.Second, time.Minute
			s.Profile.Requests = s.Profile.Requests[:1]
			return s
		}(), []string{
			"-t", "2", "-c", "2", "-d", "60s", "--timeout", "10s", "-s", "/tmp/arena-scripts/arena.lua", "https://[::1]:8081", "--",
			req + "get.raw", "connections=2", "threads=2", "pipeline=1", "requests_per_conn=0"}},
		{"h2load h2c", H2load(), spec(h2cProfile, 256, 64), []string{
			"-c", "256", "-t", "64", "-m", "100", "-D", "5s", "-p", "h2c", "http://127.0.0.1:8082/baseline2?a=1&b=1"}},
		{"h2load h2c uri file", H2load(), spec(jsonH2cProfile, 1024, 64), []string{
			"-c", "1024", "-t", "64", "-m", "32", "-D", "5s", "-p", "h2c", "-i", req + "json-h2c-uris.txt", "-B", "http://127.0.0.1:8082"}},
		{"h2load h2 over TLS with header", H2load(), spec(staticH2Profile, 256, 64), []string{
			"-c", "256", "-t", "64", "-m", "32", "-D", "5s", "-H", "Accept-Encoding: br;q=1, gzip;q=0.8",
			"-i", req + "static-h2-uris.txt", "-B", "https://127.0.0.1:8443"}},
		// A compose stack's edge is named localhost (SNI and :authority), as the arena
		// names it, and reached on 127.0.0.1; on another host it keeps its address.
		{"h2load gateway-64 edge", H2load(), spec(lookup("gateway-64"), 64, 4), []string{
			"-c", "64", "-t", "4", "-m", "32", "-D", "5s", "-H", "Accept-Encoding: br;q=1, gzip;q=0.8",
			"--connect-to", "127.0.0.1:8443", "-i", req + "gateway-64-uris.txt", "-B", "https://localhost:8443"}},
		{"h2load gateway-64 edge elsewhere", H2load(), func() Spec { s := spec(lookup("gateway-64"), 64, 4); s.Host = "10.0.0.2"; return s }(), []string{
			"-c", "64", "-t", "4", "-m", "32", "-D", "5s", "-H", "Accept-Encoding: br;q=1, gzip;q=0.8",
			"-i", req + "gateway-64-uris.txt", "-B", "https://10.0.0.2:8443"}},
		{"h2load h2 path with request log", H2load(), func() Spec {
			s := spec(profile.Profile{Name: "baseline-h2", Tool: profile.ToolH2load, Streams: 100, Scheme: profile.SchemeH2, Port: profile.PortTLS,
				Path: "/baseline2?a=1&b=1"}, 512, 2)
			s.OutDir = "/tmp/arena-out"
			return s
		}(), []string{"-c", "512", "-t", "2", "-m", "100", "-D", "5s", "--log-file", "/tmp/arena-out/h2load-requests.log",
			"https://127.0.0.1:8443/baseline2?a=1&b=1"}},
		{"h2load h1 over TLS", H2load(), spec(profile.Profile{Name: "h1tls", Tool: profile.ToolH2load, Pipeline: 1, Scheme: profile.SchemeHTTPS,
			Port: profile.PortH1TLS, Path: "/json/1?m=1"}, 4, 4), []string{"-c", "4", "-t", "4", "-m", "1", "-D", "5s", "--h1", "https://127.0.0.1:8081/json/1?m=1"}},
		{"h2load h1 pipelined, threads capped", H2load(), func() Spec {
			s := spec(profile.Profile{Name: "h1", Tool: profile.ToolH2load, Pipeline: 16, Scheme: "http", Port: 8080, Requests: []string{"/pipeline"}}, 4, 64)
			return s
		}(), []string{"-c", "4", "-t", "4", "-m", "16", "-D", "5s", "--h1", "http://127.0.0.1:8080/pipeline"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.tool.Args(tt.spec)
			if err != nil {
				t.Fatalf("Args: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Args mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestArgsErrors(t *testing.T) {
	with := func(s Spec, f func(*Spec)) Spec { f(&s); return s }
	base, h2c := spec(baselineProfile, 512, 64), spec(h2cProfile, 256, 64)
	tests := []struct {
		name string
		tool Tool
		spec Spec
		want string // in the error
	}{
		{"wrk no connections", Wrk(), with(base, func(s *Spec) { s.Conns = 0 }), "connections"},
		{"wrk no threads", Wrk(), with(base, func(s *Spec) { s.Threads = 0 }), "threads"},
		{"wrk no host", Wrk(), with(base, func(s *Spec) { s.Host = "" }), "host"},
		{"wrk no port", Wrk(), with(base, func(s *Spec) { s.Profile.Port = 0 }), "port"},
		{"wrk fractional duration", Wrk(), with(base, func(s *Spec) { s.Duration = 1500 * time.Millisecond }), "whole number of seconds"},
		{"wrk zero duration", Wrk(), with(base, func(s *Spec) { s.Duration = 0 }), "whole number of seconds"},
		{"wrk fractional timeout", Wrk(), with(base, func(s *Spec) { s.Timeout = 500 * time.Millisecond }), "timeout"},
		{"wrk h2c", Wrk(), with(base, func(s *Spec) { s.Profile.Scheme = "h2c" }), `not "h2c"`},
		{"wrk no request files", Wrk(), with(base, func(s *Spec) { s.Profile.Requests = nil }), "no request files"},
		{"wrk request outside requests/", Wrk(), with(base, func(s *Spec) { s.Profile.Requests = []string{"../etc/passwd"} }), "not a file name"},
		{"wrk no data dir", Wrk(), with(base, func(s *Spec) { s.DataDir = "" }), "no data directory"},
		{"wrk no script dir", Wrk(), with(base, func(s *Spec) { s.ScriptDir = "" }), "no script directory"},
		{"wrk header with newline", Wrk(), with(base, func(s *Spec) { s.Profile.Headers = []string{"A: b\r\nC: d"} }), "header"},
		{"wrk negative pipeline", Wrk(), with(base, func(s *Spec) { s.Profile.Pipeline = -1 }), "negative"},
		{"h2load ws", H2load(), with(h2c, func(s *Spec) { s.Profile.Scheme = "ws" }), `scheme "ws"`},
		{"h2load grpc without script dir", H2load(), with(h2c, func(s *Spec) { s.Profile.Scheme = "grpc"; s.ScriptDir = "" }), "no script directory"},
		{"h2load two requests", H2load(), with(h2c, func(s *Spec) { s.Profile.Requests = []string{"/a", "/b"} }), "exactly one request"},
		{"h2load no requests", H2load(), with(h2c, func(s *Spec) { s.Profile.Requests = nil }), "exactly one request"},
		{"h2load header without colon", H2load(), with(h2c, func(s *Spec) { s.Profile.Headers = []string{"nocolon"} }), "header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.tool.Args(tt.spec)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Args = %q, %v; want an error mentioning %q", got, err, tt.want)
			}
		})
	}
}

func TestWriteFiles(t *testing.T) {
	dir := t.TempDir()
	s := spec(baselineProfile, 4, 2)
	s.ScriptDir = dir
	if err := Wrk().WriteFiles(s); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, WrkScript))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, arenaLua) || !bytes.Contains(got, []byte("function request()")) {
		t.Errorf("%s holds %d bytes, want the embedded arena.lua (%d bytes)", WrkScript, len(got), len(arenaLua))
	}
	if bytes.Contains(arenaLua, []byte("function response(")) {
		t.Error("arena.lua defines response(): wrk would call Lua for every response")
	}
	s.ScriptDir = ""
	if err := Wrk().WriteFiles(s); err == nil {
		t.Error("WriteFiles without a script directory succeeded")
	}
	s.ScriptDir = filepath.Join(dir, "missing")
	if err := Wrk().WriteFiles(s); err == nil {
		t.Error("WriteFiles into a missing directory succeeded")
	}
	if err := H2load().WriteFiles(Spec{}); err != nil {
		t.Errorf("H2load.WriteFiles: %v", err)
	}
}

func TestParseVersion(t *testing.T) {
	tests := []struct {
		name               string
		tool               Tool
		out                string
		full, upstream     string
		wantErr, wantWrong bool
	}{
		{name: "wrk debian", tool: Wrk(), out: "wrk debian/4.1.0-3+b2 [epoll] Copyright (C) 2012 Will Glozer\nUsage: wrk <options> <url>\n",
			full: "debian/4.1.0-3+b2", upstream: "4.1.0"},
		{name: "wrk upstream build", tool: Wrk(), out: "wrk 4.1.0 [epoll] Copyright (C) 2012 Will Glozer\n", full: "4.1.0", upstream: "4.1.0"},
		{name: "wrk wrong version", tool: Wrk(), out: "wrk 4.2.0 [epoll] Copyright (C) 2012 Will Glozer\n", full: "4.2.0", upstream: "4.2.0", wantWrong: true},
		{name: "wrk2 is not wrk 4.1.0", tool: Wrk(), out: "wrk 4.0.0 [epoll] Copyright (C) 2012 Will Glozer\n", full: "4.0.0", upstream: "4.0.0", wantWrong: true},
		{name: "wrk missing", tool: Wrk(), out: "bash: wrk: command not found\n", wantErr: true},
		{name: "wrk no number", tool: Wrk(), out: "wrk debian/unknown [epoll]\n", full: "debian/unknown", wantErr: true},
		{name: "h2load", tool: H2load(), out: "h2load nghttp2/1.52.0\n", full: "nghttp2/1.52.0", upstream: "1.52.0"},
		{name: "h2load wrong version", tool: H2load(), out: "h2load nghttp2/1.59.0\n", full: "nghttp2/1.59.0", upstream: "1.59.0", wantWrong: true},
		{name: "h2load prerelease", tool: H2load(), out: "h2load nghttp2/1.52.0-DEV\n", full: "nghttp2/1.52.0-DEV", upstream: "1.52.0"},
		{name: "h2load garbage", tool: H2load(), out: "Usage: h2load [OPTIONS]... [URI]...\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			full, upstream, err := tt.tool.ParseVersion(tt.out)
			if (err != nil) != tt.wantErr || full != tt.full || upstream != tt.upstream {
				t.Fatalf("ParseVersion(%q) = %q, %q, %v; want %q, %q, error %v", tt.out, full, upstream, err, tt.full, tt.upstream, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			got, err := CheckVersion(tt.tool, tt.out)
			if errors.Is(err, ErrWrongVersion) != tt.wantWrong || got != tt.full {
				t.Errorf("CheckVersion(%q) = %q, %v; want %q, wrong version %v", tt.out, got, err, tt.full, tt.wantWrong)
			}
		})
	}
}

// TestInstalledVersions checks the tools on PATH are the pinned ones (CI has them).
func TestInstalledVersions(t *testing.T) {
	for _, tool := range All() {
		t.Run(tool.Name, func(t *testing.T) {
			path := needTool(t, tool.Binary)
			full, ok, err := CheckBinaryVersion(tool, path) // ghz: its build information
			if !ok {
				out, _ := exec.Command(path, tool.VersionArgs...).CombinedOutput() // wrk -v exits 1
				full, err = CheckVersion(tool, string(out))
			}
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			t.Logf("%s %s", tool.Binary, full)
		})
	}
}

func TestForProfile(t *testing.T) {
	for _, tt := range []struct {
		tool, want string
	}{
		{profile.ToolWrk, "wrk"},
		{profile.ToolH2load, "h2load"},
		{profile.ToolGhz, "ghz"},
	} {
		got, err := ForProfile(profile.Profile{Name: "x", Tool: tt.tool})
		if err != nil || got.Name != tt.want || got.Binary != tt.want {
			t.Errorf("ForProfile(tool %q) = %v, %v; want the %s adapter", tt.tool, got, err, tt.want)
		}
	}
	for _, tool := range []string{profile.ToolH2loadH3, "gcannon", ""} {
		got, err := ForProfile(profile.Profile{Name: "x", Tool: tool})
		if !errors.Is(err, ErrUnknownTool) || got.Adapter != nil {
			t.Errorf("ForProfile(tool %q) = %v, %v; want ErrUnknownTool", tool, got, err)
		}
	}
	seen := map[string]bool{}
	for _, tool := range All() {
		if seen[tool.Name] {
			t.Errorf("All() lists %s twice", tool.Name)
		}
		seen[tool.Name] = true
		if tool.PinnedVersion == "" || len(tool.VersionArgs) == 0 {
			t.Errorf("%s: no pinned version or version args", tool.Name)
		}
	}
}

// TestDeps keeps the package a leaf: only the standard library, profile and result (whose
// latency and socket-error types a Measurement carries).
func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.Rules{Module: []string{"profile", "result"}, StdOnly: true})
}
