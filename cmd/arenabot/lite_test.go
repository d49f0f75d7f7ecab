package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"testing"

	"github.com/arenabot/arenabot/bot/command"
	"github.com/arenabot/arenabot/bot/plan"
	"github.com/arenabot/arenabot/runner"
)

// TestParseServeLite: serve takes the runners' mode from --lite or ARENA_LITE, with or
// without --runner, and hands it to the bot; work takes it too.
func TestParseServeLite(t *testing.T) {
	base := map[string]string{"ARENA_WEBHOOK_SECRET": "s", "ARENA_GITHUB_TOKEN": "tok", "ARENA_STATE_DIR": t.TempDir(), "ARENA_CACHE_DIR": t.TempDir()}
	with := func(kv ...string) func(string) string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, tt := range []struct {
		name    string
		getenv  func(string) string
		args    []string
		want    bool
		wantErr string
	}{
		{name: "default", getenv: with(), want: false},
		{name: "variable", getenv: with("ARENA_LITE", "true"), want: true},
		{name: "variable, runner", getenv: with("ARENA_LITE", "1"), args: []string{"--runner"}, want: true},
		{name: "flag", getenv: with(), args: []string{"--lite"}, want: true},
		{name: "flag, runner", getenv: with(), args: []string{"--runner", "--lite"}, want: true},
		{name: "flag beats variable", getenv: with("ARENA_LITE", "true"), args: []string{"--lite=false"}, want: false},
		{name: "bad variable", getenv: with("ARENA_LITE", "maybe"), wantErr: `ARENA_LITE "maybe": want true or false`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseServe(tt.args, tt.getenv, io.Discard)
			checkParsed(t, c, err, tt.wantErr, func(t *testing.T, c serveConfig) {
				if c.Work.Lite != tt.want || c.botConfig().Lite != tt.want {
					t.Errorf("runner lite %v, bot lite %v; want %v for both", c.Work.Lite, c.botConfig().Lite, tt.want)
				}
			})
		})
	}
	w, err := parseWork(nil, with("ARENA_REDIS_URL", "redis://127.0.0.1:6379", "ARENA_LITE", "true"), io.Discard)
	if err != nil || !w.Lite {
		t.Errorf("work with ARENA_LITE=true: lite %v, %v", w.Lite, err)
	}
	if _, err := parseWork(nil, with("ARENA_REDIS_URL", "redis://127.0.0.1:6379", "ARENA_LITE", "yes please"), io.Discard); err == nil {
		t.Error("work accepted ARENA_LITE=yes please")
	}
}

// repoSource is a plan.Source over this repository's own checkout.
type repoSource struct{ root string }

func (s repoSource) ChangedFiles(context.Context) ([]string, error) { return nil, nil }

func (s repoSource) Dir(_ context.Context, dir string) ([]string, error) {
	des, err := os.ReadDir(filepath.Join(s.root, filepath.FromSlash(dir)))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range des {
		if d.IsDir() {
			out = append(out, d.Name()+"/")
		} else {
			out = append(out, d.Name())
		}
	}
	return out, nil
}

func (s repoSource) File(_ context.Context, p string) ([]byte, error) {
	if !fs.ValidPath(p) {
		return nil, fs.ErrNotExist
	}
	return os.ReadFile(filepath.Join(s.root, filepath.FromSlash(path.Clean(p))))
}

// TestPlanLiteDrift is the drift of issue 13: with serve --runner --lite the ack listed the
// full connection counts while the runner measured the lite ones. The bot now plans in the
// mode serve hands it, and its plan's rows are the runner's own selection in the runner's
// mode (the rows a job without rows gets); with them the job carries its rows, which the
// runner measures as they are (TestWorkerMeasuresTheJobsRows).
func TestPlanLiteDrift(t *testing.T) {
	env := map[string]string{"ARENA_WEBHOOK_SECRET": "s", "ARENA_GITHUB_TOKEN": "tok", "ARENA_STATE_DIR": t.TempDir(), "ARENA_CACHE_DIR": t.TempDir()}
	for _, args := range [][]string{{"--runner", "--lite"}, {"--runner"}, {"--lite"}} {
		c, err := parseServe(args, func(k string) string { return env[k] }, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		bc := c.botConfig()
		src := repoSource{root: filepath.Join("..", "..")}
		for _, line := range []string{"/benchmark -f nethttp -t baseline", "/benchmark-multiple -f fasthttp,nethttp", "/benchmark -f nethttp -t json,baseline,upload"} {
			cmd, _, err := command.Parse(line)
			if err != nil {
				t.Fatal(err)
			}
			ack, err := plan.Options{Lite: bc.Lite}.Resolve(t.Context(), src, cmd)
			if err != nil {
				t.Fatalf("%v %s: %v", args, line, err)
			}
			var acked []string
			for _, tg := range ack.Targets {
				for _, r := range tg.Rows {
					acked = append(acked, fmt.Sprintf("%s/%s/%d", tg.Entry, r.Test, r.Conns))
				}
			}
			// The runner's mode is the worker's Bench.Lite, which newWorker sets from c.Work.Lite.
			measured, err := runner.NewPlan(filepath.Join("..", "..", "frameworks"), cmd.Frameworks, cmd.Tests, c.Work.Lite)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tg := range measured.Targets {
				for _, p := range tg.Profiles {
					for _, n := range p.ConnCounts(measured.Lite) {
						got = append(got, fmt.Sprintf("%s/%s/%d", tg.Entry.Name, p.Name, n))
					}
				}
			}
			if !slices.Equal(acked, got) {
				t.Errorf("serve %v, %s: the ack lists %v, the runner measures %v", args, line, acked, got)
			}
			if lite := slices.Contains(args, "--lite"); ack.Lite != lite {
				t.Errorf("serve %v: the plan's Lite is %v, want %v", args, ack.Lite, lite)
			}
		}
	}
}

var _ plan.Source = repoSource{}
