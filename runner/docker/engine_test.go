package docker_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arenabot/arenabot/runner/docker"
)

// testLabel is the label on everything a test creates; its value is the test's name.
const testLabel = "arenabot.test"

// engine connects to the local daemon, or skips the test when none answers within 2 s;
// with CI set the test fails instead, so CI cannot skip silently.
func engine(t *testing.T) *docker.Engine {
	t.Helper()
	ci := os.Getenv("CI") != ""
	if testing.Short() && !ci {
		t.Skip("needs a Docker daemon; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	e, err := docker.New(ctx)
	if err != nil {
		if ci {
			t.Fatalf("CI is set, so a Docker daemon is required: %v", err)
		}
		t.Skipf("no Docker daemon: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// cleanupCtx is for t.Cleanup, where t.Context is already cancelled.
func cleanupCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), time.Minute)
}

// labels labels what t creates; t's cleanup removes every container carrying it.
func labels(t *testing.T, e *docker.Engine) map[string]string {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := cleanupCtx()
		defer cancel()
		if _, err := e.RemoveLabeled(ctx, testLabel, t.Name()); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	return map[string]string{testLabel: t.Name()}
}

var nameRE = regexp.MustCompile(`[^a-z0-9]+`)

// unique returns a lower-case name unique to this test run ("arenabot-test-testbuild-<n>").
func unique(t *testing.T) string {
	return fmt.Sprintf("arenabot-test-%s-%d", strings.Trim(nameRE.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-"), time.Now().UnixNano())
}

var (
	probeOnce sync.Once
	probeBin  []byte
	probeErr  error
)

// probe returns the static test program (testdata/probe), compiled once per test binary.
func probe(t *testing.T) []byte {
	t.Helper()
	probeOnce.Do(func() {
		dir, err := os.MkdirTemp("", "arenabot-probe")
		if err != nil {
			probeErr = err
			return
		}
		defer os.RemoveAll(dir)
		bin := filepath.Join(dir, "probe")
		cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "./testdata/probe")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
		if out, err := cmd.CombinedOutput(); err != nil {
			probeErr = fmt.Errorf("go build ./testdata/probe: %v\n%s", err, out)
			return
		}
		probeBin, probeErr = os.ReadFile(bin)
	})
	if probeErr != nil {
		t.Fatal(probeErr)
	}
	return probeBin
}

// contextDir writes a build context into a temp dir: the probe binary plus files.
func contextDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "probe"), probe(t), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// removeImage removes the image ref when t ends.
func removeImage(t *testing.T, e *docker.Engine, ref string) {
	t.Cleanup(func() {
		ctx, cancel := cleanupCtx()
		defer cancel()
		if err := e.RemoveImage(ctx, ref); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
}

// probeImage builds an image holding only the probe, with it as the entrypoint, and
// returns its tag.
func probeImage(t *testing.T, e *docker.Engine) string {
	t.Helper()
	dir := contextDir(t, map[string]string{
		"Dockerfile": "FROM scratch\nCOPY probe /probe\nENTRYPOINT [\"/probe\"]\n",
	})
	tag := unique(t) + ":test"
	removeImage(t, e, tag)
	if _, err := e.Build(t.Context(), docker.BuildOptions{ContextDir: dir, Tag: tag, Labels: map[string]string{testLabel: t.Name()}}); err != nil {
		t.Fatal(err)
	}
	return tag
}

func TestNewUnreachable(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix:///nonexistent.sock")
	e, err := docker.New(t.Context())
	if err == nil {
		e.Close()
		t.Fatal("New succeeded against unix:///nonexistent.sock")
	}
	if !errors.Is(err, docker.ErrUnreachable) {
		t.Errorf("New: %v; want an error wrapping ErrUnreachable", err)
	}
	for _, want := range []string{"Docker is not reachable at unix:///nonexistent.sock: ", "no such file or directory", "; start the Docker daemon or set DOCKER_HOST"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("New: %q does not contain %q", err, want)
		}
	}
}

func TestNewWithHost(t *testing.T) {
	t.Setenv("DOCKER_HOST", "") // WithHost wins over the environment either way
	_, err := docker.New(t.Context(), docker.WithHost("unix:///nonexistent-withhost.sock"))
	if !errors.Is(err, docker.ErrUnreachable) || !strings.Contains(err.Error(), "unix:///nonexistent-withhost.sock") {
		t.Errorf("New(WithHost): %v; want ErrUnreachable naming the host", err)
	}
}

func TestPing(t *testing.T) {
	e := engine(t)
	if err := e.Ping(t.Context()); err != nil {
		t.Errorf("Ping: %v", err)
	}
}

func TestRemoveImagesLabeled(t *testing.T) {
	e := engine(t)
	// Two stages: the labelled image goes with its own untagged parents; the first stage
	// stays as build cache.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "probe"), probe(t), 0o755)
	os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch AS build\nCOPY probe /probe\nFROM scratch\nCOPY --from=build /probe /probe\nENTRYPOINT [\"/probe\"]\n"), 0o644)
	tag := unique(t) + ":test"
	removeImage(t, e, tag)
	key, value := "arenabot.test-"+strconv.FormatInt(time.Now().UnixNano(), 10), "job-1" // no other test's images carry key
	build := func() {
		if _, err := e.Build(t.Context(), docker.BuildOptions{ContextDir: dir, Tag: tag, Labels: map[string]string{testLabel: t.Name(), key: value}}); err != nil {
			t.Fatal(err)
		}
	}
	build()
	n, err := e.RemoveImagesLabeled(t.Context(), key, value)
	if err != nil || n != 1 {
		t.Errorf("RemoveImagesLabeled = %d, %v; want 1 image removed", n, err)
	}
	if ok, err := e.ImageExists(t.Context(), tag); ok || err != nil {
		t.Errorf("ImageExists(%s) = %v, %v after the removal", tag, ok, err)
	}
	if n, err := e.RemoveImagesLabeled(t.Context(), key, value); n != 0 || err != nil {
		t.Errorf("second RemoveImagesLabeled = %d, %v; want nothing left", n, err)
	}
	build()
	if n, err := e.RemoveImagesLabeled(t.Context(), key, ""); err != nil || n < 1 {
		t.Errorf("RemoveImagesLabeled(any value) = %d, %v; want the rebuilt image removed", n, err)
	}
}

func TestNewTimeout(t *testing.T) {
	// A socket that accepts and never answers: New gives up after its 2 s ping timeout.
	sock := filepath.Join(t.TempDir(), "silent.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	t.Setenv("DOCKER_HOST", "unix://"+sock)
	start := time.Now()
	_, err = docker.New(t.Context())
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("New took %v; want about 2s", d)
	}
	if !errors.Is(err, docker.ErrUnreachable) || !strings.Contains(err.Error(), "no answer within 2s") {
		t.Errorf("New: %v; want ErrUnreachable saying there was no answer within 2s", err)
	}
}

func TestInfo(t *testing.T) {
	e := engine(t)
	in, err := e.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", in)
	if in.ServerVersion == "" || in.APIVersion == "" || in.NCPU < 1 || in.DefaultRuntime == "" {
		t.Errorf("Info = %+v; want a server version, an API version, CPUs and the default runtime (current.json's docker_runtime)", in)
	}
	if in.CgroupVersion != 1 && in.CgroupVersion != 2 {
		t.Errorf("CgroupVersion = %d; want 1 or 2", in.CgroupVersion)
	}
}

func TestBuild(t *testing.T) {
	e := engine(t)
	dir := contextDir(t, map[string]string{
		"Dockerfile":    "FROM scratch\nARG GREETING\nCOPY . /ctx/\nENTRYPOINT [\"/ctx/probe\"]\n",
		".dockerignore": "# comment\nsecret.txt\nlogs\n!logs/keep.log\n",
		"kept.txt":      "kept",
		"secret.txt":    "must not reach the daemon",
		"logs/a.log":    "ignored",
		"logs/keep.log": "re-included",
		".git/HEAD":     "ref: refs/heads/main\n",
	})
	tag := unique(t) + ":test"
	removeImage(t, e, tag)

	var log strings.Builder
	id, err := e.Build(t.Context(), docker.BuildOptions{
		ContextDir: dir,
		Tag:        tag,
		BuildArgs:  map[string]string{"GREETING": "hi"},
		Labels:     map[string]string{testLabel: t.Name()},
		Log:        &log,
	})
	if err != nil {
		t.Fatalf("Build: %v\nlog:\n%s", err, log.String())
	}
	if !strings.HasPrefix(id, "sha256:") {
		t.Errorf("Build returned ID %q; want sha256:…", id)
	}
	// The classic builder adds the labels as a last LABEL step.
	for _, want := range []string{"Step 1/5 : FROM scratch\n", "Step 3/5 : COPY . /ctx/\n", "Step 5/5 : LABEL " + testLabel + "=" + t.Name() + "\n", "Successfully tagged " + tag + "\n"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("build log lacks %q:\n%s", want, log.String())
		}
	}
	if strings.Contains(log.String(), "\x1b") || strings.Contains(log.String(), "\n\n") {
		t.Errorf("build log has escapes or empty lines:\n%q", log.String())
	}
	for _, ref := range []string{tag, id} {
		if ok, err := e.ImageExists(t.Context(), ref); err != nil || !ok {
			t.Errorf("ImageExists(%s) = %v, %v; want true", ref, ok, err)
		}
	}

	ls := func(path string) []string {
		var out strings.Builder
		code, err := e.Run(t.Context(), docker.RunOptions{Image: tag, Cmd: []string{"ls", path}, Labels: labels(t, e)}, &out)
		if err != nil || code != 0 {
			t.Fatalf("Run ls %s = %d, %v\n%s", path, code, err, out.String())
		}
		return strings.Fields(out.String())
	}
	if got, want := ls("/ctx"), []string{".dockerignore", "Dockerfile", "kept.txt", "logs", "probe"}; !slices.Equal(got, want) {
		t.Errorf("the image's /ctx holds %q; want %q (.git and secret.txt left out)", got, want)
	}
	if got, want := ls("/ctx/logs"), []string{"keep.log"}; !slices.Equal(got, want) {
		t.Errorf("the image's /ctx/logs holds %q; want %q", got, want)
	}

	if err := e.RemoveImage(t.Context(), tag); err != nil {
		t.Fatal(err)
	}
	if ok, err := e.ImageExists(t.Context(), tag); err != nil || ok {
		t.Errorf("ImageExists after RemoveImage = %v, %v; want false", ok, err)
	}
	if err := e.RemoveImage(t.Context(), tag); err != nil {
		t.Errorf("RemoveImage of a missing image: %v; want nil", err)
	}
}

// stepImage matches the intermediate images a classic build prints (" ---> 0123456789ab").
var stepImage = regexp.MustCompile(`(?m)^ ---> ([0-9a-f]{12})$`)

func TestBuildFailure(t *testing.T) {
	e := engine(t)
	dir := contextDir(t, map[string]string{
		"build/Dockerfile": "FROM scratch\nCOPY probe /probe\nRUN [\"/probe\", \"fail\"]\n",
	})
	tag := unique(t) + ":test"
	var log strings.Builder
	t.Cleanup(func() { // the failed build leaves its successful steps' images
		ctx, cancel := cleanupCtx()
		defer cancel()
		for _, m := range stepImage.FindAllStringSubmatch(log.String(), -1) {
			if err := e.RemoveImage(ctx, m[1]); err != nil {
				t.Logf("cleanup: %v", err)
			}
		}
	})
	_, err := e.Build(t.Context(), docker.BuildOptions{ContextDir: dir, Dockerfile: "build/Dockerfile", Tag: tag, NetworkMode: "host", Log: &log})
	be, ok := errors.AsType[*docker.BuildError](err)
	if !ok {
		t.Fatalf("Build: %v; want a *BuildError", err)
	}
	t.Logf("%v\ntail:\n%s", be, strings.Join(be.Tail, "\n"))
	if be.Tag != tag || !strings.Contains(be.Msg, "returned a non-zero code: 3") {
		t.Errorf("BuildError = %+v; want tag %s and the step's exit code", be, tag)
	}
	if want := "build " + tag + ": "; !strings.HasPrefix(be.Error(), want) || strings.Contains(be.Error(), "\n") {
		t.Errorf("Error() = %q; want one line starting %q", be.Error(), want)
	}
	if len(be.Tail) == 0 || len(be.Tail) > 20 || !slices.Contains(be.Tail, "boom: this step fails on purpose") {
		t.Errorf("Tail = %q; want at most 20 lines with the step's message", be.Tail)
	}
	if ok, _ := e.ImageExists(t.Context(), tag); ok {
		t.Errorf("the failed build tagged %s", tag)
	}
}

func TestBuildBadDockerfile(t *testing.T) {
	e := engine(t)
	dir := contextDir(t, map[string]string{"Dockerfile": "FROM scratch\nNOSUCHINSTRUCTION x\n"})
	_, err := e.Build(t.Context(), docker.BuildOptions{ContextDir: dir, Tag: unique(t) + ":test"})
	be, ok := errors.AsType[*docker.BuildError](err)
	if !ok {
		t.Fatalf("Build: %v; want a *BuildError", err)
	}
	t.Log(be)
	if !strings.Contains(strings.ToLower(be.Msg), "nosuchinstruction") {
		t.Errorf("Msg = %q; want it to name the unknown instruction", be.Msg)
	}
	_, err = e.Build(t.Context(), docker.BuildOptions{ContextDir: dir, Dockerfile: "missing/Dockerfile"})
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Build with a missing Dockerfile: %v; want a not-exist error", err)
	}
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

func TestStart(t *testing.T) {
	e := engine(t)
	img := probeImage(t, e)
	data := t.TempDir()
	if err := os.WriteFile(filepath.Join(data, "hello.txt"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	name := unique(t)
	o := docker.RunOptions{
		Name:        name,
		Image:       img,
		Cmd:         []string{"report", "/data", port},
		HostNetwork: true,
		CPUSet:      "0",
		Memory:      64 << 20,
		Nofile:      65536,
		Mounts:      []docker.Mount{{Source: data, Target: "/data", ReadOnly: true}},
		Labels:      labels(t, e),
		SecurityOpt: []string{"no-new-privileges:true"},
		CapDrop:     []string{"ALL"},
		CapAdd:      []string{"CHOWN"}, // bit 0
		PidsLimit:   64,
	}
	c, err := e.Start(t.Context(), o)
	if err != nil && strings.Contains(err.Error(), "lower Nofile") {
		// A daemon without CAP_SYS_RESOURCE cannot go above its own hard limit (20000 on
		// some sandboxes): check the option with a value below it instead.
		t.Logf("this daemon cannot raise nofile to 65536, trying 16384: %v", err)
		o.Nofile = 16384
		c, err = e.Start(t.Context(), o)
	}
	if err != nil {
		t.Fatal(err)
	}
	if c.ID == "" || c.Name != name || c.Pid <= 0 {
		t.Errorf("Start = %+v; want an ID, name %s and a PID", c, name)
	}

	// The report over the host's loopback proves the host network.
	var body string
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get("http://127.0.0.1:" + port + "/")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
			break
		}
		if time.Now().After(deadline) {
			logs, _ := e.Logs(t.Context(), c.ID, 50)
			t.Fatalf("the probe never answered on 127.0.0.1:%s: %v\nlogs:\n%s", port, err, logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("report:\n%s", body)
	for _, want := range []string{"cpus=0\n", fmt.Sprintf("nofile=%d/%d\n", o.Nofile, o.Nofile), "memory=67108864\n", "capeff=0000000000000001\n", "nonewprivs=1\n", "pids=64\n", `read="hello" <nil>` + "\n", "write=open /data/written.txt: read-only file system\n"} {
		if !strings.Contains(body, want) {
			t.Errorf("report lacks %q:\n%s", want, body)
		}
	}
	logs, err := e.Logs(t.Context(), c.ID, 2)
	if err != nil {
		t.Fatal(err)
	}
	if logs != "write=open /data/written.txt: read-only file system\nready\n" {
		t.Errorf("Logs(tail 2) = %q; want the last two lines", logs)
	}
	if running, _, err := e.State(t.Context(), c.ID); err != nil || !running {
		t.Errorf("State = %v, %v; want running", running, err)
	}
	if err := e.Remove(t.Context(), c.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.State(t.Context(), c.ID); !errors.Is(err, docker.ErrNotFound) {
		t.Errorf("State after Remove: %v; want ErrNotFound", err)
	}
}

func TestStateAfterExit(t *testing.T) {
	e := engine(t)
	img := probeImage(t, e)
	c, err := e.Start(t.Context(), docker.RunOptions{Image: img, Cmd: []string{"exit", "7"}, Labels: labels(t, e)})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		running, code, err := e.State(t.Context(), c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !running {
			if code != 7 {
				t.Errorf("exit code %d; want 7", code)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the container is still running")
		}
		time.Sleep(50 * time.Millisecond)
	}
	logs, err := e.Logs(t.Context(), c.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if logs != "to stdout\nto stderr\n" && logs != "to stderr\nto stdout\n" {
		t.Errorf("Logs = %q; want both streams", logs)
	}
}

func TestRun(t *testing.T) {
	e := engine(t)
	img := probeImage(t, e)
	name := unique(t)
	var out strings.Builder
	code, err := e.Run(t.Context(), docker.RunOptions{Name: name, Image: img, Cmd: []string{"exit", "5"}, Labels: labels(t, e)}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if code != 5 {
		t.Errorf("Run exit code %d; want 5", code)
	}
	if got := out.String(); got != "to stdout\nto stderr\n" && got != "to stderr\nto stdout\n" {
		t.Errorf("Run output %q; want both streams", got)
	}
	if _, _, err := e.State(t.Context(), name); !errors.Is(err, docker.ErrNotFound) {
		t.Errorf("State after Run: %v; want ErrNotFound (removed)", err)
	}
}

// TestRunLongLine: a tool that prints its report as one long line and exits at once (ghz
// -O json) loses none of it.
func TestRunLongLine(t *testing.T) {
	e := engine(t)
	img := probeImage(t, e)
	for _, n := range []int{16 << 10, 1 << 20, 8 << 20} {
		var out strings.Builder
		code, err := e.Run(t.Context(), docker.RunOptions{Name: unique(t), Image: img, Cmd: []string{"line", strconv.Itoa(n)}, Labels: labels(t, e)}, &out)
		if err != nil || code != 0 {
			t.Fatalf("Run line %d: code %d, %v", n, code, err)
		}
		if got := out.Len(); got != n+1 || strings.Count(out.String(), "x") != n {
			t.Errorf("Run line %d: got %d bytes of output; want %d", n, got, n+1)
		}
	}
}

func TestRunCancel(t *testing.T) {
	e := engine(t)
	img := probeImage(t, e)
	name := unique(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	start := time.Now()
	_, err := e.Run(ctx, docker.RunOptions{Name: name, Image: img, Cmd: []string{"sleep"}, Labels: labels(t, e)}, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Run: %v; want the deadline's error", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("Run took %v after its deadline", d)
	}
	if _, _, err := e.State(t.Context(), name); !errors.Is(err, docker.ErrNotFound) {
		t.Errorf("State after a cancelled Run: %v; want ErrNotFound (removed)", err)
	}
}

// TestRunLimit: a container that runs past its RunLimit is killed and removed, the error
// wraps ErrRunLimit and says how long the daemon took to create and start it (not counted),
// and the output it printed before the kill reaches the caller.
func TestRunLimit(t *testing.T) {
	e := engine(t)
	img := probeImage(t, e)
	name := unique(t)
	var out strings.Builder
	start := time.Now()
	_, err := e.Run(t.Context(), docker.RunOptions{Name: name, Image: img, Cmd: []string{"sleep"}, Labels: labels(t, e), RunLimit: 2 * time.Second}, &out)
	if !errors.Is(err, docker.ErrRunLimit) {
		t.Fatalf("Run: %v; want ErrRunLimit", err)
	}
	for _, want := range []string{"did not exit within 2s of its start", "the daemon took "} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Run: %q does not say %q", err, want)
		}
	}
	if got := out.String(); got != "sleeping until killed\n" {
		t.Errorf("Run output %q; want the line printed before the kill", got)
	}
	if d := time.Since(start); d < 2*time.Second || d > 30*time.Second {
		t.Errorf("Run took %v; want the 2 s limit and the kill", d)
	}
	if _, _, err := e.State(t.Context(), name); !errors.Is(err, docker.ErrNotFound) {
		t.Errorf("State after Run past its limit: %v; want ErrNotFound (removed)", err)
	}
}

func TestRemoveLabeled(t *testing.T) {
	e := engine(t)
	img := probeImage(t, e)
	base := labels(t, e)
	with := func(key, value string) map[string]string {
		m := map[string]string{key: value}
		for k, v := range base {
			m[k] = v
		}
		return m
	}
	const key = "arenabot.job"
	value := unique(t)
	var ids []string
	for _, o := range []docker.RunOptions{
		{Image: img, Cmd: []string{"sleep"}, Labels: with(key, value)},
		{Image: img, Cmd: []string{"exit", "0"}, Labels: with(key, value)},      // stopped
		{Image: img, Cmd: []string{"sleep"}, Labels: with(key, value+"-other")}, // another value
		{Image: img, Cmd: []string{"sleep"}, Labels: base},                      // no such label
	} {
		c, err := e.Start(t.Context(), o)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	n, err := e.RemoveLabeled(t.Context(), key, value)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("RemoveLabeled removed %d; want 2", n)
	}
	for i, id := range ids {
		_, _, err := e.State(t.Context(), id)
		if gone := errors.Is(err, docker.ErrNotFound); gone != (i < 2) {
			t.Errorf("container %d: State error %v; want it gone only when labelled %s=%s", i, err, key, value)
		}
	}
}

func TestMissing(t *testing.T) {
	e := engine(t)
	name := unique(t)
	if err := e.Remove(t.Context(), name); err != nil {
		t.Errorf("Remove of a missing container: %v; want nil", err)
	}
	if _, _, err := e.State(t.Context(), name); !errors.Is(err, docker.ErrNotFound) {
		t.Errorf("State of a missing container: %v; want ErrNotFound", err)
	}
	if _, err := e.Logs(t.Context(), name, 10); !errors.Is(err, docker.ErrNotFound) {
		t.Errorf("Logs of a missing container: %v; want ErrNotFound", err)
	}
	if ok, err := e.ImageExists(t.Context(), name+":none"); ok || err != nil {
		t.Errorf("ImageExists of a missing image = %v, %v; want false, nil", ok, err)
	}
	if err := e.RemoveImage(t.Context(), name+":none"); err != nil {
		t.Errorf("RemoveImage of a missing image: %v; want nil", err)
	}
	if n, err := e.RemoveLabeled(t.Context(), testLabel, name); n != 0 || err != nil {
		t.Errorf("RemoveLabeled of nothing = %d, %v; want 0, nil", n, err)
	}
}

// TestStartCancelledLeavesNoContainer cancels Start at every moment of its first
// milliseconds (a /benchmark-cancel arriving while a server container is being created):
// whatever Start answers, no container of it is left once it returns with an error. A create
// request cancelled in flight used to complete in the daemon after the client had given up.
func TestStartCancelledLeavesNoContainer(t *testing.T) {
	e := engine(t)
	img := probeImage(t, e)
	lbl := labels(t, e)
	failed := 0
	const tries = 20
	for i := range tries {
		ctx, cancel := context.WithTimeout(t.Context(), time.Duration(i)*3*time.Millisecond)
		c, err := e.Start(ctx, docker.RunOptions{Image: img, Cmd: []string{"sleep"}, Labels: lbl})
		cancel()
		if err == nil {
			if err := e.Remove(t.Context(), c.ID); err != nil {
				t.Fatal(err)
			}
			continue
		}
		failed++
		time.Sleep(100 * time.Millisecond) // a create the client gave up on would land by now
		if n, err := e.RemoveLabeled(t.Context(), testLabel, t.Name()); err != nil || n != 0 {
			t.Fatalf("after a Start cancelled at %s, %d container(s) were left (%v)", time.Duration(i)*3*time.Millisecond, n, err)
		}
	}
	if failed == 0 {
		t.Fatal("no Start was cancelled; the test did not test anything")
	}
	t.Logf("%d of %d Starts were cancelled", failed, tries)
}

// TestPullUnreachable pulls from a registry that cannot exist (.invalid never resolves):
// the pull fails at once with a *PullError naming the image and the daemon's reason.
func TestPullUnreachable(t *testing.T) {
	e := engine(t)
	ref := "registry.invalid/arenabot/missing:1"
	start := time.Now()
	err := e.PullImage(t.Context(), ref)
	pe, ok := errors.AsType[*docker.PullError](err)
	if !ok {
		t.Fatalf("PullImage(%s) = %v; want a *PullError", ref, err)
	}
	if pe.Ref != ref || pe.Msg == "" || strings.Contains(pe.Msg, "\n") || strings.HasPrefix(pe.Msg, "Error response from daemon") {
		t.Errorf("PullError = %+v; want the reference and the daemon's reason on one line", pe)
	}
	if d := time.Since(start); d > time.Minute {
		t.Errorf("the failed pull took %s", d)
	}
	t.Logf("PullImage: %v", err)
	if ok, err := e.ImageExists(t.Context(), ref); ok || err != nil {
		t.Errorf("ImageExists after the failed pull = %v, %v; want false, nil", ok, err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := e.PullImage(ctx, ref); !errors.Is(err, context.Canceled) {
		t.Errorf("PullImage with a cancelled ctx = %v; want context.Canceled", err)
	}
}

// TestBuildDockerfileContent builds from given Dockerfile bytes: the Dockerfile on disk
// names a base image that cannot exist, the given bytes one that does, and the file stays
// as it was.
func TestBuildDockerfileContent(t *testing.T) {
	e := engine(t)
	onDisk := "FROM registry.invalid/arenabot/missing:1 AS base\nCOPY probe /probe\nENTRYPOINT [\"/probe\"]\n"
	dir := contextDir(t, map[string]string{"Dockerfile": onDisk})
	tag := unique(t) + ":test"
	removeImage(t, e, tag)
	var log strings.Builder
	_, err := e.Build(t.Context(), docker.BuildOptions{
		ContextDir:        dir,
		Tag:               tag,
		DockerfileContent: []byte("FROM scratch AS base\nCOPY probe /probe\nENTRYPOINT [\"/probe\"]\n"),
		Labels:            map[string]string{testLabel: t.Name()},
		Log:               &log,
	})
	if err != nil {
		t.Fatalf("Build: %v\nlog:\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), "Step 1/4 : FROM scratch AS base\n") {
		t.Errorf("build log lacks the given FROM:\n%s", log.String())
	}
	if b, err := os.ReadFile(filepath.Join(dir, "Dockerfile")); err != nil || string(b) != onDisk {
		t.Errorf("the Dockerfile on disk is now %q, %v; want it unchanged", b, err)
	}
}
