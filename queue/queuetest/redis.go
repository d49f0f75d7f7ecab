package queuetest

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A Server is a private redis-server started for a test, on a free loopback
// port (never 6379) with its data in a temporary directory. It persists
// every write to its append-only file before answering, so Kill followed by
// Restart loses nothing that was acknowledged.
type Server struct {
	Addr string // "127.0.0.1:41234"
	Dir  string // data directory: the append-only file and redis.log
	// TLS, for a server started with the TLS option, names its CA and a client certificate;
	// the server then answers on Addr over TLS only.
	TLS *TLSFiles

	t    testing.TB
	path string
	args []string

	mu  sync.Mutex
	cmd *exec.Cmd
}

// An Option changes how StartRedis starts the server.
type Option func(*serverConfig)

type serverConfig struct {
	args  []string
	tls   bool
	users []string
}

// Args adds command-line arguments to redis-server ("--maxmemory", "64mb").
func Args(args ...string) Option {
	return func(c *serverConfig) { c.args = append(c.args, args...) }
}

// StartRedis starts a real redis-server for t and stops it in t.Cleanup.
// Without redis-server on PATH the test is skipped, unless the environment
// variable CI is set, where it fails: CI must not hide the Redis tests.
func StartRedis(t testing.TB, opts ...Option) *Server {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("redis-server is not installed (apt-get install redis-server): %v", err)
		}
		t.Skipf("redis-server is not installed: %v", err)
	}
	var c serverConfig
	for _, o := range opts {
		o(&c)
	}
	s := &Server{t: t, path: path, Dir: t.TempDir()}
	t.Cleanup(s.stop)
	var last error
	for range 5 {
		port, err := freePort()
		if err != nil {
			t.Fatalf("free port: %v", err)
		}
		s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		s.args = append([]string{
			"--port", strconv.Itoa(port),
			"--bind", "127.0.0.1",
			"--dir", s.Dir,
			"--save", "",
			"--appendonly", "yes",
			"--appendfsync", "always",
			"--logfile", "redis.log",
			"--daemonize", "no",
		}, c.args...)
		if c.tls {
			files, args := tlsArgs(t, s.Dir, port)
			s.TLS = &files
			s.args = append(s.args, args...)
		}
		if len(c.users) > 0 {
			s.args = append(s.args, userArgs(c.users)...)
		}
		if last = s.start(); last == nil {
			return s
		}
	}
	t.Fatalf("start redis-server: %v", last)
	return nil
}

func freePort() (int, error) {
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if port != 6379 {
			return port, nil
		}
	}
}

func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cmd := exec.Command(s.path, s.args...)
	cmd.Dir = s.Dir
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(15 * time.Second)
	for {
		if s.ping() == nil {
			s.cmd = cmd
			// Keep the exit status for Kill and stop.
			go func() {
				err := <-exited
				s.mu.Lock()
				if s.cmd == cmd {
					s.cmd = nil
				}
				s.mu.Unlock()
				_ = err
			}()
			return nil
		}
		select {
		case err := <-exited:
			return fmt.Errorf("redis-server exited: %v\n%s", err, s.logTail())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-exited
			return fmt.Errorf("redis-server on %s did not answer PING\n%s", s.Addr, s.logTail())
		}
	}
}

// ping checks that the server answers, over TLS for a TLS server.
func (s *Server) ping() error {
	if s.TLS != nil {
		return pingTLS(s.Addr, s.TLS.CA)
	}
	return ping(s.Addr)
}

// ping sends PING and expects +PONG (not -LOADING while the AOF replays).
func ping(addr string) error {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	line, err := answerPing(conn)
	if err != nil {
		return err
	}
	// With ACLs the default user is off: NOAUTH is an answer too.
	if line != "+PONG" && !strings.HasPrefix(line, "-NOAUTH") {
		return fmt.Errorf("PING: %s", line)
	}
	return nil
}

// answerPing sends PING on conn, closes it and returns the answer's line, trimmed.
func answerPing(conn net.Conn) (string, error) {
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	return strings.TrimSpace(line), err
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "redis.log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// Kill stops the server with SIGKILL, as a crash would, and waits until it
// is gone.
func (s *Server) Kill() {
	s.t.Helper()
	s.mu.Lock()
	cmd := s.cmd
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	for s.ping() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	// The process is reaped by the goroutine that waits for it.
	for range 200 {
		if cmd.Process.Signal(syscall.Signal(0)) != nil {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Restart starts the server again on the same port and directory; it
// replays its append-only file before it answers PING.
func (s *Server) Restart() {
	s.t.Helper()
	s.Kill()
	var err error
	for range 50 { // the port may linger briefly after a kill
		if err = s.start(); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.t.Fatalf("restart redis-server: %v", err)
}

func (s *Server) stop() {
	s.mu.Lock()
	cmd := s.cmd
	s.cmd = nil
	s.mu.Unlock()
	if cmd != nil {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		for range 200 {
			if cmd.Process.Signal(syscall.Signal(0)) != nil {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// Client returns a client of the server, closed in t.Cleanup.
func (s *Server) Client(t testing.TB) *redis.Client {
	return NewClient(t, s.Addr)
}

// NewClient returns a client of addr, closed in t.Cleanup.
func NewClient(t testing.TB, addr string) *redis.Client {
	rdb := redis.NewClient(&redis.Options{
		Addr:            addr,
		DisableIdentity: true, // redis-server 7.0 has no CLIENT SETINFO
		PoolSize:        64,
	})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// RedisAddr returns the address of a Redis for t: $ARENA_TEST_REDIS_ADDR
// when set (never the runtime ARENA_REDIS_URL, so tests never touch a
// production Redis), else a private server started for t.
func RedisAddr(t testing.TB) string {
	t.Helper()
	if addr := os.Getenv("ARENA_TEST_REDIS_ADDR"); addr != "" {
		return addr
	}
	return StartRedis(t).Addr
}

// Prefix returns a key prefix no other test uses. Its keys are deleted in
// t.Cleanup through rdb.
func Prefix(t testing.TB, rdb redis.UniversalClient) string {
	t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := strings.NewReplacer("/", ".", " ", "_", ":", ".").Replace(t.Name())
	p := "test:" + name + ":" + hex.EncodeToString(b[:]) + ":"
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		iter := rdb.Scan(ctx, 0, p+"*", 1000).Iterator()
		var keys []string
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if len(keys) > 0 {
			rdb.Del(ctx, keys...)
		}
	})
	return p
}
