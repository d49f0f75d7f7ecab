package compose

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// arena writes files into a temporary arena checkout (paths relative to its root) and
// returns the root.
func arena(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// env is what the runner exports for a run.
var env = map[string]string{
	VarCertsDir:    "/srv/arena/certs",
	VarDataDir:     "/srv/arena/data",
	VarDatabaseURL: "postgres://bench:bench@127.0.0.1:5432/benchmark",
}

// gatewayFile is a gateway-64 file written the arena's way, under its legacy name.
const gatewayFile = `
services:
  proxy:
    build: ./proxy
    network_mode: host
    cpuset: "${PROXY_CPUSET:-0-19,64-83}"
    volumes:
      - ${CERTS_DIR}:/certs:ro
      - ${DATA_DIR}/static:/data/static:ro
    ulimits:
      memlock: -1
      nofile:
        soft: 1048576
        hard: 1048576
    security_opt:
      - seccomp:unconfined
    depends_on:
      - server
  server:
    build:
      context: ../../
      dockerfile: frameworks/x/Dockerfile
      args:
        GO_IMAGE: golang:1.26-bookworm
    network_mode: host
    cpuset: "20-31,84-95"
    environment:
      DATABASE_URL: ${DATABASE_URL}
      DATABASE_MAX_CONN: "256"
    volumes:
      - ${DATA_DIR}/dataset.json:/data/dataset.json:ro
    ulimits:
      memlock: -1
      nofile: 1048576
    security_opt: [seccomp:unconfined]
    labels:
      arena.role: server
    user: "1000"
    ports: ["8080:8080"]
`

// productionFile is a production-stack file the way the newer entries write them.
const productionFile = `
services:
  edge:
    build: {context: ./proxy-production}
    network_mode: host
    cpuset: ${EDGE_CPUSET:-0-14,64-78}
    volumes: ["${CERTS_DIR}:/certs:ro", "${DATA_DIR}/static:/data/static:ro"]
    depends_on:
      server: {condition: service_healthy}
      authsvc: {condition: service_started}
  cache:
    image: redis:7-alpine
    network_mode: host
    entrypoint: ["sh", "/entrypoint.sh"]
    volumes:
      - ${DATA_DIR}/redis-seed.txt:/seed.txt:ro
      - ${DATA_DIR}/redis-entrypoint.sh:/entrypoint.sh:ro
    healthcheck:
      test: ["CMD", "redis-cli", "ping"]
      interval: 5s
      timeout: 2s
      retries: 20
      start_period: 10s
      start_interval: 200ms
  authsvc:
    build: {context: ../_shared/authsvc}
    network_mode: host
    environment:
      - JWT_SECRET=httparena-bench-secret-do-not-use-in-production
      - AUTHSVC_LISTEN=0.0.0.0:9090
  server:
    build: {context: .}
    network_mode: host
    command: ["-workers", "4"]
    environment:
      DATABASE_URL: ${DATABASE_URL}
      REDIS_URL: redis://127.0.0.1:6379
    depends_on:
      cache: {condition: service_healthy}
    healthcheck:
      test: wget -qO- http://127.0.0.1:8080/baseline11?a=1
      interval: 1s
`

func TestLoad(t *testing.T) {
	root := arena(t, map[string]string{
		"frameworks/x/compose.gateway.yml":          gatewayFile,
		"frameworks/x/compose.production-stack.yml": productionFile,
		"frameworks/x/Dockerfile":                   "FROM scratch\n",
		"frameworks/x/proxy/Dockerfile":             "FROM nginx:1.27-alpine\n",
		"frameworks/x/proxy-production/Dockerfile":  "FROM nginx:1.27-alpine\n",
		"frameworks/_shared/authsvc/Dockerfile":     "FROM scratch\n",
	})
	dir := filepath.Join(root, "frameworks", "x")
	tests := []struct {
		profile string
		want    *Stack
	}{{
		profile: "gateway-64",
		want: &Stack{
			File: filepath.Join(dir, "compose.gateway.yml"), Project: "arenabot-x-gateway-64", Profile: "gateway-64",
			Services: []Service{{
				Name:  "proxy",
				Image: "arenabot-x-gateway-64-proxy",
				Build: &Build{Context: filepath.Join(dir, "proxy"), Dockerfile: "Dockerfile"},
				Env:   nil, CPUSet: "0-19,64-83",
				Ulimits:     []Ulimit{{Name: "memlock", Soft: -1, Hard: -1}, {Name: "nofile", Soft: 1048576, Hard: 1048576}},
				SecurityOpt: []string{"seccomp:unconfined"},
				Mounts: []Mount{
					{Type: "bind", Source: "/srv/arena/certs", Target: "/certs", ReadOnly: true},
					{Type: "bind", Source: "/srv/arena/data/static", Target: "/data/static", ReadOnly: true},
				},
				DependsOn: []Dependency{{Service: "server", Condition: ServiceStarted}},
			}, {
				Name:  "server",
				Image: "arenabot-x-gateway-64-server",
				Build: &Build{Context: root, Dockerfile: "frameworks/x/Dockerfile", Args: map[string]string{"GO_IMAGE": "golang:1.26-bookworm"}},
				Env: map[string]string{
					"DATABASE_URL": "postgres://bench:bench@127.0.0.1:5432/benchmark", "DATABASE_MAX_CONN": "256"},
				CPUSet:      "20-31,84-95",
				Ulimits:     []Ulimit{{Name: "memlock", Soft: -1, Hard: -1}, {Name: "nofile", Soft: 1048576, Hard: 1048576}},
				SecurityOpt: []string{"seccomp:unconfined"},
				Mounts:      []Mount{{Type: "bind", Source: "/srv/arena/data/dataset.json", Target: "/data/dataset.json", ReadOnly: true}},
				Labels:      map[string]string{"arena.role": "server"},
				Unsupported: []string{"ports", "user"},
			}},
		},
	}, {
		profile: "production-stack",
		want: &Stack{
			File: filepath.Join(dir, "compose.production-stack.yml"), Project: "arenabot-x-production-stack", Profile: "production-stack",
			Services: []Service{{
				Name:  "authsvc",
				Image: "arenabot-x-production-stack-authsvc",
				Build: &Build{Context: filepath.Join(root, "frameworks", "_shared", "authsvc"), Dockerfile: "Dockerfile"},
				Env: map[string]string{
					"JWT_SECRET": "httparena-bench-secret-do-not-use-in-production", "AUTHSVC_LISTEN": "0.0.0.0:9090"},
			}, {
				Name:       "cache",
				Image:      "redis:7-alpine",
				Entrypoint: []string{"sh", "/entrypoint.sh"},
				Mounts: []Mount{
					{Type: "bind", Source: "/srv/arena/data/redis-seed.txt", Target: "/seed.txt", ReadOnly: true},
					{Type: "bind", Source: "/srv/arena/data/redis-entrypoint.sh", Target: "/entrypoint.sh", ReadOnly: true},
				},
				Healthcheck: &Healthcheck{Test: []string{"CMD", "redis-cli", "ping"}, Interval: 5 * time.Second,
					Timeout: 2 * time.Second, Retries: 20, StartPeriod: 10 * time.Second, StartInterval: 200 * time.Millisecond},
			}, {
				Name:   "edge",
				Image:  "arenabot-x-production-stack-edge",
				Build:  &Build{Context: filepath.Join(dir, "proxy-production"), Dockerfile: "Dockerfile"},
				CPUSet: "0-14,64-78",
				Mounts: []Mount{
					{Type: "bind", Source: "/srv/arena/certs", Target: "/certs", ReadOnly: true},
					{Type: "bind", Source: "/srv/arena/data/static", Target: "/data/static", ReadOnly: true},
				},
				DependsOn: []Dependency{{Service: "authsvc", Condition: ServiceStarted}, {Service: "server", Condition: ServiceHealthy}},
			}, {
				Name:    "server",
				Image:   "arenabot-x-production-stack-server",
				Build:   &Build{Context: dir, Dockerfile: "Dockerfile"},
				Command: []string{"-workers", "4"},
				Env: map[string]string{
					"DATABASE_URL": "postgres://bench:bench@127.0.0.1:5432/benchmark", "REDIS_URL": "redis://127.0.0.1:6379"},
				Healthcheck: &Healthcheck{Test: []string{"CMD-SHELL", "wget -qO- http://127.0.0.1:8080/baseline11?a=1"}, Interval: time.Second},
				DependsOn:   []Dependency{{Service: "cache", Condition: ServiceHealthy}},
			}},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.profile, func(t *testing.T) {
			got, err := Load(dir, tt.profile, env)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Load(%s) mismatch (-want +got):\n%s", tt.profile, diff)
			}
		})
	}
}

func TestLoadOrder(t *testing.T) {
	root := arena(t, map[string]string{
		"frameworks/x/compose.production-stack.yml": productionFile,
		"frameworks/x/Dockerfile":                   "FROM scratch\n",
		"frameworks/x/proxy-production/Dockerfile":  "FROM nginx:1.27-alpine\n",
		"frameworks/_shared/authsvc/Dockerfile":     "FROM scratch\n",
	})
	st, err := Load(filepath.Join(root, "frameworks", "x"), "production-stack", env)
	if err != nil {
		t.Fatal(err)
	}
	order, err := st.Order()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, sv := range order {
		got = append(got, sv.Name)
	}
	if want := []string{"authsvc", "cache", "server", "edge"}; !cmp.Equal(got, want) {
		t.Errorf("Order() = %v, want %v", got, want)
	}
}

// TestLoadDefaults checks ${VAR:-default} both ways: the default when the runner does not
// set the variable, the runner's value when it does.
func TestLoadDefaults(t *testing.T) {
	root := arena(t, map[string]string{"frameworks/x/compose.gateway-h3.yml": `
services:
  proxy:
    image: caddy:2-alpine
    network_mode: host
    cpuset: ${PROXY_CPUSET:-0-19,64-83}
    environment:
      ESCAPED: $$HOME
`})
	dir := filepath.Join(root, "frameworks", "x")
	for _, tt := range []struct {
		env  map[string]string
		want string
	}{
		{nil, "0-19,64-83"},
		{map[string]string{"PROXY_CPUSET": "0"}, "0"},
	} {
		st, err := Load(dir, "gateway-h3", tt.env)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Services[0].CPUSet; got != tt.want {
			t.Errorf("cpuset with env %v = %q, want %q", tt.env, got, tt.want)
		}
		if got := st.Services[0].Env["ESCAPED"]; got != "$HOME" {
			t.Errorf("$$HOME = %q, want $HOME", got)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	const server = `
  server:
    image: x
    network_mode: host
`
	tests := []struct {
		name    string
		profile string
		files   map[string]string
		env     map[string]string
		want    []string // substrings of the message, in order
		is      error
	}{{
		name: "no file", profile: "gateway-64",
		files: map[string]string{"frameworks/x/meta.json": "{}"},
		want:  []string{"frameworks/x: no compose file for gateway-64 (looked for compose.gateway.yml and compose.gateway-64.yml)", "fix: add compose.gateway.yml"},
		is:    ErrNoFile,
	}, {
		name: "both names", profile: "gateway-64",
		files: map[string]string{
			"frameworks/x/compose.gateway.yml":    "services:" + server,
			"frameworks/x/compose.gateway-64.yml": "services:" + server,
		},
		want: []string{"both compose.gateway.yml and compose.gateway-64.yml exist", "fix: keep one"},
	}, {
		name: "not a compose profile", profile: "baseline",
		want: []string{`profile "baseline" is not a compose-stack profile`, "fix: use one of gateway-64, gateway-h3, production-stack"},
	}, {
		name: "missing service in depends_on", profile: "gateway-64",
		files: map[string]string{"frameworks/x/compose.gateway.yml": `
services:
  proxy:
    image: nginx:1.27-alpine
    network_mode: host
    depends_on: [app]` + server},
		want: []string{"compose.gateway.yml: service \"proxy\": depends_on names \"app\", which is not a service of the file", "fix: name one of proxy, server"},
	}, {
		name: "network_mode bridge", profile: "gateway-64",
		files: map[string]string{"frameworks/x/compose.gateway.yml": `
services:
  proxy:
    image: nginx:1.27-alpine
    network_mode: bridge
    ports: ["8443:8443"]` + server},
		want: []string{`service "proxy": network_mode is bridge; the arena runs stacks on the host network`, "fix: set network_mode: host"},
	}, {
		name: "network_mode unset", profile: "gateway-64",
		files: map[string]string{"frameworks/x/compose.gateway.yml": `
services:
  proxy:
    image: nginx:1.27-alpine` + server},
		want: []string{`service "proxy": network_mode is not set`, "the arena runs stacks on the host network", "fix: set network_mode: host"},
	}, {
		name: "unknown variable", profile: "gateway-64",
		files: map[string]string{"frameworks/x/compose.gateway.yml": `
services:
  proxy:
    image: nginx:1.27-alpine
    network_mode: host
    volumes: ["${TLS_DIR}:/certs:ro"]` + server},
		want: []string{`compose.gateway.yml: service "proxy": ${TLS_DIR} is not a variable the arena sets (it sets CERTS_DIR`, "fix: use one of the arena's variables or give a default: ${TLS_DIR:-value}"},
	}, {
		name: "arena variable without a value", profile: "gateway-64",
		env: map[string]string{VarCertsDir: "/c"},
		files: map[string]string{"frameworks/x/compose.gateway.yml": `
services:
  server:
    image: x
    network_mode: host
    environment:
      DATABASE_URL: ${DATABASE_URL}
`},
		want: []string{`service "server": ${DATABASE_URL} has no value for this run`, "fix: the arena sets it only where the profile needs it"},
	}, {
		name: "cycle", profile: "gateway-64",
		files: map[string]string{"frameworks/x/compose.gateway.yml": `
services:
  proxy:
    image: nginx:1.27-alpine
    network_mode: host
    depends_on: [server]
  server:
    image: x
    network_mode: host
    depends_on: [proxy]
`},
		want: []string{`service "proxy": depends_on forms a cycle: proxy -> server -> proxy`, "fix: remove one of these depends_on entries"},
	}, {
		name: "service_healthy without a healthcheck", profile: "gateway-64",
		files: map[string]string{"frameworks/x/compose.gateway.yml": `
services:
  proxy:
    image: nginx:1.27-alpine
    network_mode: host
    depends_on: {server: {condition: service_healthy}}` + server},
		want: []string{`service "proxy": depends_on "server" with condition service_healthy, but "server" has no healthcheck`, `fix: give "server" a healthcheck`},
	}, {
		name: "missing Dockerfile", profile: "gateway-64",
		files: map[string]string{"frameworks/x/compose.gateway.yml": `
services:
  server:
    build: {context: ../../, dockerfile: frameworks/y/Dockerfile}
    network_mode: host
`},
		want: []string{`service "server": build.dockerfile frameworks/y/Dockerfile does not exist in the context`, "fix: give build.dockerfile relative to build.context"},
	}, {
		name: "not a compose file", profile: "gateway-64",
		files: map[string]string{"frameworks/x/compose.gateway.yml": "services:\n  server:\n    imag: x\n"},
		want:  []string{`compose.gateway.yml: service "server": unknown key "imag"`, "fix: correct or remove it"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := arena(t, tt.files)
			e := env
			if tt.env != nil {
				e = tt.env
			}
			_, err := Load(filepath.Join(root, "frameworks", "x"), tt.profile, e)
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			if _, ok := errors.AsType[*Error](err); !ok {
				t.Errorf("Load error %T is not an *Error: %v", err, err)
			}
			msg := strings.ReplaceAll(err.Error(), root+string(filepath.Separator), "")
			t.Log(msg)
			containsInOrder(t, msg, tt.want)
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.is)
			}
		})
	}
}

func TestLoadRefusesOtherVariables(t *testing.T) {
	root := arena(t, map[string]string{"frameworks/x/compose.gateway.yml": "services:\n  s:\n    image: x\n    network_mode: host\n"})
	_, err := Load(filepath.Join(root, "frameworks", "x"), "gateway-64", map[string]string{"HOME": "/root"})
	if err == nil || !strings.Contains(err.Error(), "variable HOME is not one the arena exports") {
		t.Errorf("Load with HOME = %v, want a refusal naming HOME", err)
	}
}

func TestRelax(t *testing.T) {
	st := &Stack{Services: []Service{
		{Name: "proxy", Ulimits: []Ulimit{{Name: "memlock", Soft: -1, Hard: -1}, {Name: "nofile", Soft: 1048576, Hard: 1048576}}},
		{Name: "server", Ulimits: []Ulimit{{Name: "memlock", Soft: 65536, Hard: -1}, {Name: "core", Soft: 0, Hard: 0}},
			Healthcheck: &Healthcheck{Test: []string{"CMD", "/authsvc", "-check"}, Interval: time.Second, StartInterval: 200 * time.Millisecond}},
		{Name: "cache", Healthcheck: &Healthcheck{Test: []string{"CMD", "redis-cli", "ping"}, StartInterval: time.Second}},
	}}
	host := Host{Ulimits: map[string]int64{"memlock": 8388608, "nofile": 524288, "core": -1}, NoStartInterval: true}
	notes := st.Relax(host)
	want := []string{
		"service proxy: ulimit memlock -1 lowered to 8388608: the host's hard limit",
		"service proxy: ulimit nofile 1048576 lowered to 524288: the host's hard limit",
		"service server: ulimit memlock 65536:-1 lowered to 65536:8388608: the host's hard limit",
		"service server: healthcheck start_interval 200ms dropped: the Docker Engine has none; the check runs every 1s",
		"service cache: healthcheck start_interval 1s dropped: the Docker Engine has none; the check runs every 30s (Docker's default)",
	}
	if diff := cmp.Diff(want, notes); diff != "" {
		t.Errorf("Relax notes (-want +got):\n%s", diff)
	}
	wantUlimits := [][]Ulimit{
		{{Name: "memlock", Soft: 8388608, Hard: 8388608}, {Name: "nofile", Soft: 524288, Hard: 524288}},
		{{Name: "memlock", Soft: 65536, Hard: 8388608}, {Name: "core", Soft: 0, Hard: 0}},
		nil,
	}
	for i, sv := range st.Services {
		if diff := cmp.Diff(wantUlimits[i], sv.Ulimits); diff != "" {
			t.Errorf("service %s ulimits after Relax (-want +got):\n%s", sv.Name, diff)
		}
		if sv.Healthcheck != nil && sv.Healthcheck.StartInterval != 0 {
			t.Errorf("service %s keeps start_interval %s", sv.Name, sv.Healthcheck.StartInterval)
		}
	}
	if again := st.Relax(host); len(again) != 0 {
		t.Errorf("a second Relax changed %v, want nothing", again)
	}
	// A host that grants everything changes nothing.
	st = &Stack{Services: []Service{{Name: "s", Ulimits: []Ulimit{{Name: "memlock", Soft: -1, Hard: -1}},
		Healthcheck: &Healthcheck{StartInterval: time.Second}}}}
	if notes := st.Relax(Host{Ulimits: map[string]int64{"memlock": -1}}); len(notes) != 0 {
		t.Errorf("Relax on a host that grants all = %v", notes)
	}
}

// containsInOrder fails the test unless msg, a Load error, holds each of want in order.
func containsInOrder(t *testing.T, msg string, want []string) {
	t.Helper()
	rest := msg
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Errorf("Load error = %q\nwant it to contain, in order, %q", msg, w)
			return
		}
		rest = rest[i+len(w):]
	}
}
