package main

import (
	"io"
	"testing"
	"time"
)

// TestLimitFlags: the build and job limits come from their flags, else their ARENA_*
// variables, else the defaults; a bad value is refused naming the flag, the variable and
// what to give.
func TestLimitFlags(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{"ARENA_REDIS_URL": "redis://127.0.0.1:6379"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	type limits struct {
		build  time.Duration
		memory int64
		pids   int64
		job    time.Duration
		factor float64
	}
	for _, tt := range []struct {
		name    string
		getenv  func(string) string
		args    []string
		want    limits
		wantErr string
	}{
		{name: "defaults", getenv: env(), want: limits{20 * time.Minute, 8 << 30, 16384, 6 * time.Hour, 3}},
		{name: "variables", getenv: env("ARENA_BUILD_TIMEOUT", "5m", "ARENA_BUILD_MEMORY", "512MiB", "ARENA_BUILD_PIDS", "0", "ARENA_JOB_TIMEOUT", "2h", "ARENA_JOB_TIMEOUT_FACTOR", "1.5"),
			want: limits{5 * time.Minute, 512 << 20, 0, 2 * time.Hour, 1.5}},
		{name: "flags beat variables", getenv: env("ARENA_BUILD_TIMEOUT", "5m", "ARENA_JOB_TIMEOUT", "2h"),
			args: []string{"--build-timeout", "90s", "--build-memory", "none", "--job-timeout=1h", "--build-pids", "4096"},
			want: limits{90 * time.Second, -1, 4096, time.Hour, 3}},
		{name: "bad build timeout", getenv: env("ARENA_BUILD_TIMEOUT", "forever"), wantErr: `--build-timeout (ARENA_BUILD_TIMEOUT) "forever": want a positive duration such as 20m`},
		{name: "bad memory", getenv: env("ARENA_BUILD_MEMORY", "lots"), wantErr: `--build-memory (ARENA_BUILD_MEMORY) "lots": want a positive size such as 8g or 512m, or none`},
		{name: "bad pids", getenv: env("ARENA_BUILD_PIDS", "-1"), wantErr: `--build-pids (ARENA_BUILD_PIDS) "-1"`},
		{name: "bad job timeout", getenv: env("ARENA_JOB_TIMEOUT", "0s"), wantErr: `--job-timeout (ARENA_JOB_TIMEOUT) "0s": want a positive duration such as 6h`},
		{name: "bad factor", getenv: env("ARENA_JOB_TIMEOUT_FACTOR", "0.5"), wantErr: `--job-timeout-factor (ARENA_JOB_TIMEOUT_FACTOR) "0.5": want a number of at least 1`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseWork(tt.args, tt.getenv, io.Discard)
			checkParsed(t, c, err, tt.wantErr, func(t *testing.T, c workConfig) {
				got := limits{c.BuildTimeout, c.BuildMemory, c.BuildPids, c.JobTimeout, c.JobTimeoutFactor}
				if got != tt.want {
					t.Errorf("limits %+v, want %+v", got, tt.want)
				}
				cfg := c.runnerConfig(t.Context(), "")
				if cfg.BuildTimeout != tt.want.build || cfg.BuildMemory != tt.want.memory {
					t.Errorf("the runner's build limits %s, %d; want %s, %d", cfg.BuildTimeout, cfg.BuildMemory, tt.want.build, tt.want.memory)
				}
				if wc := c.workerConfig(cfg, nil); wc.JobLimitCeiling != tt.want.job || wc.JobLimitFactor != tt.want.factor || wc.Bench.BuildTimeout != tt.want.build {
					t.Errorf("the worker's job limit %s, factor %v; want %s, %v", wc.JobLimitCeiling, wc.JobLimitFactor, tt.want.job, tt.want.factor)
				}
			})
		})
	}
}
