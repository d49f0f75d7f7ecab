package measure

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/runner/build"
	"github.com/arenabot/arenabot/runner/docker"
	"github.com/arenabot/arenabot/runner/host"
	"github.com/arenabot/arenabot/text"
)

// LabelSidecar is on the containers of the sidecars, with the sidecar's name.
const LabelSidecar = "arenabot.sidecar"

// A SidecarError is a sidecar (Postgres, Redis) that did not come up: its image is not on the
// host, its port is taken, it exited, or it was not ready in time. It fails the rows (and the
// validation) of the profiles that need it; nothing in the entry is at fault.
type SidecarError struct {
	Name    string // "postgres"
	Image   string // the image it ran, or was to run, from
	Msg     string // what went wrong and the fix
	LogTail string // the end of the container's log on one line; "" when it never started
	Cell    string // the table cell: "postgres not ready after 60s"
}

func (e *SidecarError) Error() string {
	if e.LogTail == "" {
		return e.Msg
	}
	return e.Msg + "; container log: " + e.LogTail
}

// Short is the table cell.
func (e *SidecarError) Short() string { return e.Cell }

// A sidecar is one running sidecar container.
type sidecar struct {
	sc      profile.Sidecar
	image   string // the image it runs from: sc.Image or its stand-in
	c       docker.Container
	version string // "postgres 15.18 (arenabot/postgres:local)"
}

// Sidecars are the running sidecars of one row or one validation.
type sidecars struct {
	srv     *servers
	ctx     context.Context
	running []*sidecar
}

// env is what the server gets from the running sidecars.
func (s *sidecars) env() []string {
	var env []string
	for _, r := range s.running {
		env = append(env, r.sc.ServerEnv...)
	}
	return env
}

// versions are the running sidecars' versions, with their images, for the results.
func (s *sidecars) versions() []string {
	var vs []string
	for _, r := range s.running {
		vs = append(vs, r.version)
	}
	return vs
}

// stop removes the running sidecars, even after ctx has ended.
func (s *sidecars) stop() {
	for _, r := range slices.Backward(s.running) {
		s.srv.remove(s.ctx, r.c.ID)
	}
	s.running = nil
}

// A sidecarStarter starts the sidecars (Postgres, Redis) a profile needs, from their images
// or their local stand-ins.
type sidecarStarter struct {
	eng       Engine
	cfg       Config
	images    *build.Builder // finds the sidecars' images as it finds base images
	srv       *servers
	out       *reporter
	table     map[string]profile.Sidecar // profile.Sidecars; tests change it
	seedItems int64                      // rows of the items table once the Postgres seed is in
	noted     map[string]bool            // sidecar images whose stand-in was announced
}

// startAll starts the named sidecars, each ready before the next starts, for an entry's
// profile. On an error (a *SidecarError, or ctx's) the ones already started are removed; else
// the caller stops them when the row is done.
func (st *sidecarStarter) startAll(ctx context.Context, e frameworks.Entry, p profile.Profile, names []string) (*sidecars, error) {
	s := &sidecars{srv: st.srv, ctx: ctx}
	for _, name := range names {
		r, err := st.start(ctx, e, p, name)
		if err != nil {
			s.stop()
			return nil, err
		}
		s.running = append(s.running, r)
	}
	return s, nil
}

// start starts one sidecar on the host network and waits until it is ready: Postgres
// with its seed loaded, Redis answering PONG.
func (st *sidecarStarter) start(ctx context.Context, e frameworks.Entry, p profile.Profile, name string) (*sidecar, error) {
	sc, ok := st.table[name]
	if !ok {
		return nil, fmt.Errorf("profile %s needs sidecar %q, which the runner does not know (known: %s)", p.Name, name, strings.Join(slices.Sorted(maps.Keys(st.table)), ", "))
	}
	image, err := st.image(ctx, sc)
	if err != nil {
		return nil, err
	}
	fail := func(msg, cell string) error { return &SidecarError{Name: sc.Name, Image: image, Msg: msg, Cell: cell} }
	if busy, who := portInUse(sc.Port); busy {
		return nil, fail(fmt.Sprintf("the %s sidecar cannot start: port %d is in use on this host (%s); stop it (%s): the sidecar listens on the host network", sc.Name, sc.Port, who, stopHint(sc.Name)),
			fmt.Sprintf("port %d in use", sc.Port))
	}
	var mounts []docker.Mount
	for _, m := range sc.Mounts {
		src := filepath.Join(st.cfg.DataDir, m.Source)
		if _, err := os.Stat(src); err != nil {
			return nil, fail(fmt.Sprintf("the %s sidecar needs %s of the arena data, which %s lacks (%v); remove that directory and run again, the runner writes the arena data anew", sc.Name, m.Source, st.cfg.DataDir, err),
				fmt.Sprintf("%s: no %s", sc.Name, m.Source))
		}
		mounts = append(mounts, docker.Mount{Source: src, Target: m.Target, ReadOnly: true})
	}
	cpus := st.cpus(sc)
	start := time.Now()
	o := docker.RunOptions{
		Name:        "arenabot-sidecar-" + sc.Name,
		Image:       image,
		Cmd:         sc.Args,
		Env:         sc.Env,
		HostNetwork: true,
		CPUSet:      cpus,
		Nofile:      st.cfg.Nofile,
		Mounts:      mounts,
		Tmpfs:       sc.Tmpfs,
		Labels:      docker.Labels(st.cfg.Labels, build.LabelManaged, "true", build.LabelEntry, e.Name, LabelProfile, p.Name, LabelSidecar, sc.Name),
	}
	confine(&o, sidecarCaps[sc.Name], DefaultSidecarMemory, st.cfg.PidsLimit)
	c, err := st.eng.Start(ctx, o)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fail(fmt.Sprintf("the %s sidecar did not start from %s: %v", sc.Name, image, err), sc.Name+" did not start")
	}
	r := &sidecar{sc: sc, image: image, c: c}
	if err := st.wait(ctx, r); err != nil {
		st.srv.remove(ctx, c.ID)
		return nil, err
	}
	st.cfg.Log.Info("sidecar ready", "sidecar", sc.Name, "version", r.version, "cpus", text.Or(cpus, "—"), "duration", time.Since(start).Round(time.Millisecond))
	return r, nil
}

// cpus is a sidecar's cpuset: its own on the benchmark host, none in --lite or on a
// host that lacks its CPUs.
func (st *sidecarStarter) cpus(sc profile.Sidecar) string {
	if st.cfg.Lite || sc.CPUs == "" || !host.CPUSetFits(sc.CPUs, host.NumCPU()) {
		return ""
	}
	return sc.CPUs
}

// image finds a sidecar's image as a base image is found: on the host, pulled, its
// stand-in in ARENA_IMAGE_MAP, or else arenabot/<name>:local. Without any of them it is a
// *SidecarError that names the fix.
func (st *sidecarStarter) image(ctx context.Context, sc profile.Sidecar) (string, error) {
	src, err := st.images.FindImage(ctx, sc.Image)
	if err != nil {
		return "", err
	}
	if src.PullErr == "" {
		return sc.Image, nil
	}
	where := fmt.Sprintf("the %s sidecar's image %s is not on this host and cannot be pulled (%s)", sc.Name, sc.Image, src.PullErr)
	makes := "deploy/base-images.sh makes arenabot/postgres:local and arenabot/redis:local and prints the map"
	if src.Pair != "" && !src.LocalOK {
		return "", &SidecarError{Name: sc.Name, Image: sc.Image, Cell: "stand-in missing: " + src.Local,
			Msg: fmt.Sprintf("%s, and its stand-in %s (ARENA_IMAGE_MAP %s) is not on this host either; make it (%s) or load it (docker load)", where, src.Local, src.Pair, makes)}
	}
	if src.Pair != "" {
		if !st.noted[sc.Image] {
			st.out.note(fmt.Sprintf("sidecar image %s is not on this host and cannot be pulled; starting %s from %s instead (ARENA_IMAGE_MAP %s)", sc.Image, sc.Name, src.Local, src.Pair))
			st.noted[sc.Image] = true
		}
		return src.Local, nil
	}
	// Unmapped: the stand-in deploy/base-images.sh makes, by the arenabot/<name>:local
	// convention, as for a base image taken from a build argument.
	local := build.LocalBase(sc.Image)
	if ok, err := st.images.HaveLocal(ctx, local); err != nil {
		return "", err
	} else if ok {
		if !st.noted[sc.Image] {
			st.out.note(fmt.Sprintf("sidecar image %s is not on this host and cannot be pulled; starting %s from its local stand-in %s", sc.Image, sc.Name, local))
			st.noted[sc.Image] = true
		}
		return local, nil
	}
	local = "<local image>"
	return "", &SidecarError{Name: sc.Name, Image: sc.Image, Cell: "sidecar image missing: " + sc.Image,
		Msg: fmt.Sprintf("%s; load it (docker load) or map it to a local image with ARENA_IMAGE_MAP=%s=%s (%s)", where, build.MapPattern(sc.Image), local, makes)}
}

// sidecarPoll bounds the backoff between two readiness checks of a sidecar.
const sidecarPoll = 250 * time.Millisecond

// wait polls a sidecar with a short backoff until it is ready (and sets its version),
// the container exits, or the sidecar's Ready time passes.
func (st *sidecarStarter) wait(ctx context.Context, r *sidecar) error {
	check := st.checkRedis
	if r.sc.Name == profile.SidecarPostgres {
		check = func(ctx context.Context, r *sidecar) (string, error) { return st.checkPostgres(ctx, r, st.seedItems) }
	}
	return poll(ctx, time.Now().Add(r.sc.Ready), pace{first: 20 * time.Millisecond, most: sidecarPoll}, func() error {
		version, err := check(ctx, r)
		if err == nil {
			r.version = fmt.Sprintf("%s %s (%s)", r.sc.Name, version, r.image)
			return nil
		}
		if running, code, serr := st.eng.State(ctx, r.c.ID); serr == nil && !running {
			return halt{&SidecarError{Name: r.sc.Name, Image: r.image, LogTail: st.srv.logTail(ctx, r.c.ID),
				Msg:  fmt.Sprintf("the %s sidecar (%s) exited with status %d before it was ready%s", r.sc.Name, r.image, code, exitHint(r.sc)),
				Cell: fmt.Sprintf("%s exited with status %d", r.sc.Name, code)}}
		}
		return err
	}, func(last error) error {
		return &SidecarError{Name: r.sc.Name, Image: r.image, LogTail: st.srv.logTail(ctx, r.c.ID),
			Msg:  fmt.Sprintf("the %s sidecar (%s) was not ready after %s (%s)%s", r.sc.Name, r.image, r.sc.Ready, strings.Join(strings.Fields(last.Error()), " "), readyHint(r.sc)),
			Cell: fmt.Sprintf("%s not ready after %s", r.sc.Name, r.sc.Ready)}
	})
}

// checkPostgres connects as the server will (DATABASE_URL) and answers the server's version
// once the items table holds all items of the seed.
func (st *sidecarStarter) checkPostgres(ctx context.Context, r *sidecar, items int64) (string, error) {
	cfg, err := pgx.ParseConfig(envValue(r.sc.ServerEnv, "DATABASE_URL"))
	if err != nil {
		return "", fmt.Errorf("DATABASE_URL: %w", err)
	}
	cfg.ConnectTimeout = 2 * time.Second
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(qctx, cfg)
	if err != nil {
		return "", err
	}
	defer conn.Close(context.WithoutCancel(qctx))
	var n int64
	if err := conn.QueryRow(qctx, "SELECT count(*) FROM items").Scan(&n); err != nil {
		return "", err
	}
	if n != items {
		return "", fmt.Errorf("SELECT count(*) FROM items is %d, want %d", n, items)
	}
	var version string
	if err := conn.QueryRow(qctx, "SHOW server_version").Scan(&version); err != nil {
		return "", err
	}
	return firstField(version), nil // "15.18 (Debian 15.18-0+deb12u1)"
}

// checkRedis connects as the server will (REDIS_URL) and answers the server's version once
// PING gives PONG.
func (st *sidecarStarter) checkRedis(ctx context.Context, r *sidecar) (string, error) {
	opt, err := redis.ParseURL(envValue(r.sc.ServerEnv, "REDIS_URL"))
	if err != nil {
		return "", fmt.Errorf("REDIS_URL: %w", err)
	}
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = 2*time.Second, 2*time.Second, 2*time.Second
	opt.MaxRetries = -1
	opt.DisableIdentity = true
	opt.PoolSize = 1
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	pong, err := rdb.Ping(qctx).Result()
	if err != nil {
		return "", err
	}
	if pong != "PONG" {
		return "", fmt.Errorf("PING answered %q, want PONG", pong)
	}
	info, err := rdb.Info(qctx, "server").Result()
	if err != nil {
		return "", err
	}
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			return v, nil
		}
	}
	return "", errors.New("INFO server has no redis_version")
}

// portInUse reports whether a process on this host listens on the TCP port, and who that
// probably is.
func portInUse(port int) (bool, string) {
	l, err := net.Listen("tcp", ":"+strconv.Itoa(port))
	if err == nil {
		l.Close()
		return false, ""
	}
	if !errors.Is(err, syscall.EADDRINUSE) {
		return false, ""
	}
	switch port {
	case profile.PortPostgres:
		return true, "a system PostgreSQL?"
	case profile.PortRedis:
		return true, "a system Redis?"
	}
	return true, "another service?"
}

func stopHint(name string) string {
	switch name {
	case profile.SidecarPostgres:
		return "systemctl stop postgresql"
	case profile.SidecarRedis:
		return "systemctl stop redis-server"
	}
	return "whatever listens there"
}

// exitHint says what ends a sidecar before it is ready.
func exitHint(sc profile.Sidecar) string {
	if len(sc.Mounts) == 0 {
		return ""
	}
	return fmt.Sprintf("; its entrypoint loads the seed %s of the arena data at its start and stops at the first error: check the seed, or remove the arena data directory so the runner writes it anew", sc.Mounts[0].Source)
}

// readyHint says what a sidecar that is slow to be ready may mean.
func readyHint(sc profile.Sidecar) string {
	if len(sc.Mounts) == 0 {
		return "; check that the host can run the image (docker run " + sc.Image + ")"
	}
	return fmt.Sprintf("; the seed %s of the arena data should fill the items table; check the seed and the container log", sc.Mounts[0].Source)
}

// envValue is the value of KEY in a list of KEY=value.
func envValue(env []string, key string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

func firstField(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return s
}
