// Package docker drives the Docker Engine for the runner: it builds images from a context
// directory, starts, runs, inspects and removes containers. It is the only package of the
// module that imports the Docker SDK; it turns the SDK's types into its own small ones.
//
// It speaks whatever API version the daemon offers (negotiated on connect) and builds with
// the classic builder, whose log is plain text.
package docker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/client"
)

// ErrUnreachable is wrapped by New's error when no Docker daemon answers.
var ErrUnreachable = errors.New("docker not reachable")

// ErrNotFound is wrapped by the errors of calls about a container that does not exist.
var ErrNotFound = errors.New("no such container")

// ErrRunLimit is wrapped by Run's error when the container ran past RunOptions.RunLimit.
var ErrRunLimit = errors.New("ran past its time limit")

// pingTimeout bounds New's first contact with the daemon.
const pingTimeout = 2 * time.Second

// An Engine is a connection to one Docker daemon. It is safe for concurrent use.
type Engine struct {
	cli *client.Client
}

// An Option changes how New connects.
type Option func(*options)

type options struct {
	host string
}

// WithHost connects to the daemon at host ("unix:///run/user/1000/docker.sock",
// "tcp://10.0.0.2:2375") instead of the one DOCKER_HOST names.
func WithHost(host string) Option {
	return func(o *options) { o.host = host }
}

// New connects to the daemon named by the environment (DOCKER_HOST, DOCKER_API_VERSION,
// DOCKER_CERT_PATH, DOCKER_TLS_VERIFY; by default unix:///var/run/docker.sock) or by
// WithHost, negotiates the API version and pings the daemon with a 2 s timeout. When no
// daemon answers, the error wraps ErrUnreachable and says how to fix it.
func New(ctx context.Context, opts ...Option) (*Engine, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	copts := []client.Opt{client.FromEnv, client.WithAPIVersionNegotiation()}
	if o.host != "" {
		copts = append(copts, client.WithHost(o.host))
	}
	cli, err := client.NewClientWithOpts(copts...)
	if err != nil {
		return nil, fmt.Errorf("docker client: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	ping, err := cli.Ping(pctx)
	if err != nil {
		cli.Close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("connect to docker: %w", ctx.Err())
		}
		return nil, &unreachableError{host: cli.DaemonHost(), cause: cause(cli.DaemonHost(), err), err: err}
	}
	cli.NegotiateAPIVersionPing(ping)
	return &Engine{cli: cli}, nil
}

// unreachableError is New's error when the daemon does not answer.
type unreachableError struct {
	host  string
	cause string // why, in a few words
	err   error  // the SDK's error
}

func (e *unreachableError) Error() string {
	return fmt.Sprintf("Docker is not reachable at %s: %s; start the Docker daemon or set DOCKER_HOST", e.host, e.cause)
}

// cause words why the ping of host failed. The SDK replaces the dial error by "Cannot
// connect to the Docker daemon…", so for unix and tcp hosts the dial is repeated to name
// the real cause (no such socket, permission denied, connection refused).
func cause(host string, err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("no answer within %v", pingTimeout)
	}
	if u, perr := url.Parse(host); perr == nil && (u.Scheme == "unix" || u.Scheme == "tcp") {
		addr := u.Host
		if u.Scheme == "unix" {
			addr = u.Path
		}
		c, derr := net.DialTimeout(u.Scheme, addr, pingTimeout)
		if derr != nil {
			return derr.Error()
		}
		c.Close()
	}
	return err.Error()
}

func (e *unreachableError) Unwrap() []error { return []error{ErrUnreachable, e.err} }

// Ping asks the daemon whether it answers, within 2 s or ctx's deadline if sooner. The
// error of a daemon that does not answer wraps ErrUnreachable.
func (e *Engine) Ping(ctx context.Context) error {
	pctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	if _, err := e.cli.Ping(pctx); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("ping docker: %w", ctx.Err())
		}
		return &unreachableError{host: e.cli.DaemonHost(), cause: cause(e.cli.DaemonHost(), err), err: err}
	}
	return nil
}

// Close releases the connection.
func (e *Engine) Close() error { return e.cli.Close() }

// Info describes the daemon.
type Info struct {
	ServerVersion  string // "20.10.24"
	DefaultRuntime string // "runc"
	APIVersion     string // the API version in use after negotiation, "1.41"
	CgroupVersion  int    // 1 or 2
	CgroupDriver   string // "cgroupfs" or "systemd"
	NCPU           int
	RootDir        string // the daemon's data root, "/var/lib/docker"
}

// Info asks the daemon what it is.
func (e *Engine) Info(ctx context.Context) (Info, error) {
	si, err := e.cli.Info(ctx)
	if err != nil {
		return Info{}, fmt.Errorf("docker info: %w", err)
	}
	in := Info{
		ServerVersion:  si.ServerVersion,
		DefaultRuntime: si.DefaultRuntime,
		APIVersion:     e.cli.ClientVersion(),
		CgroupDriver:   si.CgroupDriver,
		NCPU:           si.NCPU,
		RootDir:        si.DockerRootDir,
	}
	if v, err := strconv.Atoi(si.CgroupVersion); err == nil {
		in.CgroupVersion = v
	} else if si.CgroupDriver != "" && si.CgroupDriver != "none" {
		in.CgroupVersion = 1 // daemons before API 1.40 do not report it, and have only v1
	}
	return in, nil
}

// notFound wraps err with ErrNotFound when it says the object does not exist.
func notFound(err error) error {
	if cerrdefs.IsNotFound(err) {
		return &notFoundError{err}
	}
	return err
}

// notFoundError keeps the daemon's text and matches both ErrNotFound and the SDK's error.
type notFoundError struct{ err error }

func (e *notFoundError) Error() string   { return e.err.Error() }
func (e *notFoundError) Unwrap() []error { return []error{ErrNotFound, e.err} }
