package measure

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/arenabot/arenabot/arenadata"
	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/runner/build"
	"github.com/arenabot/arenabot/runner/docker"
	"github.com/arenabot/arenabot/runner/host"
	"github.com/arenabot/arenabot/validate/protocol"

	"github.com/arenabot/arenabot/internal/clock"
)

// servers start the entries' server containers and wait until they answer, remove
// containers, and wait for a Docker daemon that does not answer.
type servers struct {
	eng        Engine
	cfg        Config
	out        *reporter
	engineGone error // set when EngineWait passed without an answer
}

// options is how every server runs: host network, the server CPU set, a raised
// nofile limit, the arena data mounted read-only, labels for cleanup, confined (confine).
func (sv *servers) options(image string, e frameworks.Entry, p profile.Profile) docker.RunOptions {
	cpus := sv.cfg.ServerCPUs
	if p.ServerCPUs != profile.ServerCPUsStd && !sv.cfg.Lite && host.CPUSetFits(p.ServerCPUs, host.NumCPU()) {
		cpus = p.ServerCPUs
	}
	if sv.cfg.Lite {
		cpus = ""
	}
	mounts := []docker.Mount{
		{Source: filepath.Join(sv.cfg.DataDir, arenadata.DatasetFile), Target: "/data/dataset.json", ReadOnly: true},
		{Source: filepath.Join(sv.cfg.DataDir, arenadata.StaticDir), Target: "/data/static", ReadOnly: true},
		{Source: filepath.Join(sv.cfg.DataDir, arenadata.CertsDir), Target: "/certs", ReadOnly: true},
	}
	// The large files (download, static-large), where the data directory has them:
	// arenadata.Ensure writes them; a hand-made data directory may not.
	if large := filepath.Join(sv.cfg.DataDir, arenadata.LargeDir); isDir(large) {
		mounts = append(mounts, docker.Mount{Source: large, Target: "/data/large", ReadOnly: true})
	}
	o := docker.RunOptions{
		Name:        "arenabot-bench-" + e.Name,
		Image:       image,
		HostNetwork: true,
		CPUSet:      cpus,
		Nofile:      sv.cfg.Nofile,
		Mounts:      mounts,
		Labels:      docker.Labels(sv.cfg.Labels, build.LabelManaged, "true", build.LabelEntry, e.Name, LabelProfile, p.Name),
	}
	confine(&o, serverCaps, sv.cfg.serverMemory(p), sv.cfg.PidsLimit)
	return o
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// A started server: its container, and for an entry with tls_check the host directory
// mounted at /certs-tls.
type started struct {
	docker.Container
	certsTLS string
}

// start starts a server container for a profile, with env (the sidecars'), and waits until
// it answers; stop removes it, even after ctx has ended (a leaked container skews the next
// measurement), and its /certs-tls copy. An entry with tls_check gets a private copy of the
// arena's pair mounted read-only at /certs-tls (frameworks.CertsTLSDir), which validate's
// rotation checks rewrite from the host.
func (sv *servers) start(ctx context.Context, image string, e frameworks.Entry, p profile.Profile, env []string) (s started, stop func(), err error) {
	o := sv.options(image, e, p)
	o.Env = env
	if e.Meta.TLSCheck {
		if s.certsTLS, err = sv.certsTLSCopy(); err != nil {
			return s, nil, fmt.Errorf("start %s: the /certs-tls copy of the TLS pair: %w", e.Name, err)
		}
		o.Mounts = append(o.Mounts, docker.Mount{Source: s.certsTLS, Target: frameworks.CertsTLSDir, ReadOnly: true})
	}
	removeCopy := func() {
		if s.certsTLS != "" {
			os.RemoveAll(s.certsTLS)
		}
	}
	s.Container, err = sv.eng.Start(ctx, o)
	if err != nil {
		removeCopy()
		return s, nil, fmt.Errorf("start %s: %w", e.Name, err)
	}
	stop = func() {
		sv.remove(ctx, s.ID)
		removeCopy()
	}
	if err := sv.waitReady(ctx, s.Container, e, p); err != nil {
		stop()
		return s, nil, err
	}
	return s, stop, nil
}

// certsTLSCopy copies the arena's TLS pair into a new directory beside the data directory
// (where the Docker daemon already finds the data), readable by any user, as the arena's
// /certs-tls: a private copy, so that rewriting it changes nothing else.
func (sv *servers) certsTLSCopy() (string, error) {
	dir, err := os.MkdirTemp(filepath.Dir(sv.cfg.DataDir), "certs-tls-")
	if err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o755); err != nil { // MkdirTemp makes it 0700
		os.RemoveAll(dir)
		return "", err
	}
	for _, f := range []string{arenadata.CertFile, arenadata.KeyFile} {
		b, err := os.ReadFile(filepath.Join(sv.cfg.DataDir, filepath.FromSlash(f)))
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644)
		}
		if err != nil {
			os.RemoveAll(dir)
			return "", err
		}
	}
	return dir, nil
}

// waitReady polls the profile's probe in the probe's own protocol (validate/protocol: HTTP/1.1,
// over TLS, h2 by ALPN, h2c with prior knowledge, a gRPC call) with a short backoff until
// any answer comes, the container exits, or ReadyTimeout passes.
func (sv *servers) waitReady(ctx context.Context, c docker.Container, e frameworks.Entry, p profile.Profile) error {
	port, scheme := p.ProbeAt()
	proto, err := protocol.For(scheme)
	if err != nil {
		return fmt.Errorf("readiness probe of %s: %w", p.Name, err)
	}
	return sv.waitAnswer(ctx, c, e, proto, port, p.Probe)
}

// waitAnswer is waitReady for a probe of path in proto on port.
func (sv *servers) waitAnswer(ctx context.Context, c docker.Container, e frameworks.Entry, proto protocol.Protocol, port int, path string) error {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	// "GET http://127.0.0.1:8080/baseline11?a=1&b=1", "GET https://127.0.0.1:8443/… (h2 over TLS (ALPN h2))"
	url := probeURL(proto, addr, path)
	start := time.Now()
	err := poll(ctx, start.Add(sv.cfg.ReadyTimeout), serverPace, func() error {
		err := proto.Probe(ctx, addr, path, protocol.Config{Timeout: 2 * time.Second})
		if err == nil {
			return nil
		}
		if running, code, serr := sv.eng.State(ctx, c.ID); serr == nil && !running {
			return halt{&ReadyError{
				Msg:  fmt.Sprintf("%s exited with status %d before answering %s; container log: %s", e.Name, code, url, sv.logTail(ctx, c.ID)),
				Cell: fmt.Sprintf("exited with status %d before answering", code),
			}}
		}
		return err
	}, func(last error) error {
		return &ReadyError{
			Msg:   fmt.Sprintf("%s did not answer %s within %s (last error: %v); make the server listen on 0.0.0.0:%d; container log: %s", e.Name, url, sv.cfg.ReadyTimeout, last, port, sv.logTail(ctx, c.ID)),
			Cell:  "not ready after " + sv.cfg.ReadyTimeout.String(),
			Cause: last,
		}
	})
	if err == nil {
		sv.cfg.Log.Debug("server ready", "framework", e.Name, "probe", url, "duration", time.Since(start))
	}
	return err
}

// serverPace is how a server's probe is polled.
var serverPace = pace{first: 5 * time.Millisecond, most: 200 * time.Millisecond}

// probeURL renders a probe: "GET <URL>", with the protocol when the URL's scheme does not
// say it (h2 over TLS, h2c); for gRPC the call.
func probeURL(proto protocol.Protocol, addr, path string) string {
	if hp, ok := proto.(protocol.HTTP); ok {
		u := "GET " + hp.URL(addr, path)
		if proto.Scheme() == protocol.SchemeHTTP || proto.Scheme() == protocol.SchemeHTTPS {
			return u
		}
		return u + " (" + proto.Describe() + ")"
	}
	return "the call " + path + " on " + addr + " (" + proto.Describe() + ")"
}

func (sv *servers) logTail(ctx context.Context, id string) string {
	logs, err := sv.eng.Logs(ctx, id, 5)
	if err != nil || strings.TrimSpace(logs) == "" {
		return "(empty)"
	}
	return strings.Join(strings.Fields(strings.ReplaceAll(strings.TrimSpace(logs), "\n", " ⏎ ")), " ")
}

// enginePoll is how often waitEngine pings a daemon that does not answer.
const enginePoll = time.Second

// waitEngine returns nil when the Docker daemon answers a ping. When it does not, it waits
// for it, polling, up to EngineWait, and says so through the progress notes. After one
// wait that ran out, it pings once and does not wait again.
func (sv *servers) waitEngine(ctx context.Context) error {
	if sv.cfg.EngineWait <= 0 {
		return nil
	}
	err := sv.eng.Ping(ctx)
	if err == nil {
		sv.engineGone = nil
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if sv.engineGone != nil {
		return sv.engineGone
	}
	sv.cfg.Log.Warn("docker does not answer", "err", err)
	sv.out.note(fmt.Sprintf("Docker does not answer; waiting up to %s for it to come back", sv.cfg.EngineWait))
	start := time.Now()
	deadline := start.Add(sv.cfg.EngineWait)
	for time.Now().Before(deadline) {
		if err := clock.Sleep(ctx, min(enginePoll, time.Until(deadline))); err != nil {
			return err
		}
		if err = sv.eng.Ping(ctx); err == nil {
			sv.out.note(fmt.Sprintf("Docker answers again after %s", time.Since(start).Round(time.Second)))
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	sv.engineGone = fmt.Errorf("the Docker daemon on the runner host did not answer for %s, so this and the remaining measurements were not run; the operator must check the daemon (systemctl status docker), then comment the command again", sv.cfg.EngineWait)
	sv.cfg.Log.Error("docker unreachable", "duration", sv.cfg.EngineWait, "err", err)
	return sv.engineGone
}

// remove removes a container even after ctx has ended: a leaked one skews the next
// measurement.
func (sv *servers) remove(ctx context.Context, id string) {
	rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := sv.eng.Remove(rmCtx, id); err != nil {
		sv.cfg.Log.Error("remove container", "container", id, "err", err)
	}
}
