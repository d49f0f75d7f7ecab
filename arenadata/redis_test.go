package arenadata_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arenabot/arenabot/arenadata"
)

// TestRedisSeedFile checks redis-seed.txt: one SET user:<id> '<json>' a line, for exactly
// the rows of db/seed.sql's users table (so the cache and Postgres agree on /api/me), and
// no item key (a stack's first read of an item must be a MISS).
func TestRedisSeedFile(t *testing.T) {
	dir := tree(t)
	_, users, _ := parseSeed(t, readFile(t, dir, arenadata.DBSeedFile))
	b := readFile(t, dir, arenadata.RedisSeedFile)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != len(users) || !bytes.HasSuffix(b, []byte("\n")) {
		t.Fatalf("%s has %d lines, want one per user (%d), each ending in a newline:\n%s", arenadata.RedisSeedFile, len(lines), len(users), b)
	}
	for i, line := range lines {
		id, _ := strconv.Atoi(users[i][0])
		want, _ := json.Marshal(map[string]any{"id": id, "name": users[i][1], "email": users[i][2]})
		var got map[string]any
		key, value, _ := strings.Cut(strings.TrimPrefix(line, "SET "), " ")
		if !strings.HasPrefix(line, "SET ") || key != "user:"+users[i][0] || len(value) < 2 || value[0] != '\'' || value[len(value)-1] != '\'' ||
			json.Unmarshal([]byte(value[1:len(value)-1]), &got) != nil {
			t.Errorf("line %d: %q, want SET user:%d '%s'", i+1, line, id, want)
			continue
		}
		if gotJSON, _ := json.Marshal(got); !bytes.Equal(gotJSON, want) {
			t.Errorf("line %d: user %s is %s, want the users table's row %s", i+1, key, gotJSON, want)
		}
	}
	if bytes.Contains(b, []byte("item:")) {
		t.Errorf("%s sets an item key; the first read of an item must be a MISS", arenadata.RedisSeedFile)
	}
}

// startEntrypoint runs the tree's redis-entrypoint.sh as a stack's cache does (sh
// entrypoint.sh), with the host's redis-server, the seed at seed and Redis's port port.
func startEntrypoint(t *testing.T, seed string, port int) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("redis-server is not installed (apt-get install redis-server): %v", err)
		}
		t.Skipf("redis-server is not installed: %v", err)
	}
	cmd := exec.Command("sh", filepath.Join(tree(t), arenadata.RedisEntrypointFile))
	cmd.Env = append(os.Environ(), "REDIS_SEED="+seed, "REDIS_PORT="+strconv.Itoa(port))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Signal(syscall.SIGTERM)
			cmd.Wait()
		}
	})
	return cmd, &out
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// redisGet sends GET key over a fresh connection; "" and an error when the port is closed.
func redisGet(addr, key string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := fmt.Fprintf(c, "*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n", len(key), key); err != nil {
		return "", err
	}
	r := bufio.NewReader(c)
	head, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(head, "$")))
	if !strings.HasPrefix(head, "$") || err != nil || n < 0 {
		return "", fmt.Errorf("GET %s answered %q", key, head)
	}
	b := make([]byte, n+2)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", err
	}
	return string(b[:n]), nil
}

// TestRedisEntrypoint runs redis-entrypoint.sh with the host's redis-server: the seed is in
// from the first moment the port accepts a connection, SIGTERM ends it with status 0 and
// the port closed, and a seed that fails or is missing stops it with status 1 and the
// reason.
func TestRedisEntrypoint(t *testing.T) {
	t.Run("seeded", func(t *testing.T) {
		port := freePort(t)
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		cmd, out := startEntrypoint(t, filepath.Join(tree(t), arenadata.RedisSeedFile), port)
		var got string
		var err error
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			if got, err = redisGet(addr, "user:42"); err == nil || time.Now().After(deadline) {
				break
			}
		}
		if err != nil || got != `{"id":42,"name":"Arena Bench","email":"bench@example.com"}` {
			t.Fatalf("GET user:42 on the first connection = %q, %v; want the seeded user\n%s", got, err, out)
		}
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("after SIGTERM: %v; want status 0\n%s", err, out)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("still running 5s after SIGTERM\n%s", out)
		}
		if _, err := redisGet(addr, "user:42"); err == nil {
			t.Errorf("port %d still answers after the entrypoint exited", port)
		}
		if !strings.Contains(out.String(), "redis-entrypoint: seeded from ") {
			t.Errorf("no seeded line in the output:\n%s", out)
		}
	})
	for _, c := range []struct{ name, seed, want string }{
		{"bad seed", "SET user:1\n", "seeding from "},
		{"no seed", "", "no seed at "},
	} {
		t.Run(c.name, func(t *testing.T) {
			seed := filepath.Join(t.TempDir(), "seed.txt")
			if c.seed != "" {
				if err := os.WriteFile(seed, []byte(c.seed), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cmd, out := startEntrypoint(t, seed, freePort(t))
			err := cmd.Wait()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(out.String(), c.want) {
				t.Errorf("exit %v, output:\n%s\nwant status 1 and %q", err, out, c.want)
			}
		})
	}
}
