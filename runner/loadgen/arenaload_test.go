package loadgen

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arenabot/arenabot/arenaload"
	"github.com/arenabot/arenabot/profile"
)

func TestArenaloadVersionIsTheGenerators(t *testing.T) {
	if ArenaloadVersion != arenaload.Version {
		t.Errorf("ArenaloadVersion %s, arenaload.Version %s: bump both together", ArenaloadVersion, arenaload.Version)
	}
	full, up, err := Arenaload().ParseVersion("arenaload 1.0.0 (vcs 6d87d2f9ecf0, modified)\n")
	if err != nil || full != "1.0.0 (vcs 6d87d2f9ecf0, modified)" || up != "1.0.0" {
		t.Errorf("ParseVersion = %q, %q, %v", full, up, err)
	}
	if _, _, err := Arenaload().ParseVersion("wrk 4.1.0"); err == nil {
		t.Error("another tool's version parsed")
	}
}

// TestArenaloadMirrorsResult: the adapter's view of the generator's JSON has exactly the
// generator's fields, both ways.
func TestArenaloadMirrorsResult(t *testing.T) {
	var gen arenaload.Result
	fill(reflect.ValueOf(&gen).Elem())
	b, err := json.Marshal(gen)
	if err != nil {
		t.Fatal(err)
	}
	var mine arenaloadJSON
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&mine); err != nil {
		t.Fatalf("the adapter cannot read every field arenaload writes: %v", err)
	}
	back, _ := json.Marshal(mine)
	var again arenaload.Result
	dec = json.NewDecoder(strings.NewReader(string(back)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&again); err != nil || !reflect.DeepEqual(again, gen) {
		t.Errorf("round trip through the adapter's struct: %v\n got %+v\nwant %+v", err, again, gen)
	}
}

// fill sets every field of v to a non-zero value.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i))
		}
	case reflect.String:
		v.SetString("x")
	case reflect.Int, reflect.Int64:
		v.SetInt(7)
	case reflect.Float64:
		v.SetFloat(1.5)
	}
}

func TestArenaloadArgs(t *testing.T) {
	look := func(name string) profile.Profile { p, _ := profile.Lookup(name); return p }
	base := Spec{Host: "127.0.0.1", Threads: 2, Duration: 5 * time.Second, DataDir: "/data"}
	for _, tt := range []struct {
		name  string
		spec  func(Spec) Spec
		want  []string
		error string
	}{
		{"latency-10k", func(s Spec) Spec { s.Profile, s.Conns, s.Rate = look("latency-10k"), 256, 10000; return s },
			[]string{"paced", "-c", "256", "-R", "10000", "-d", "5s", "--timeout", "2s", "http://127.0.0.1:8080/baseline11?a=1&b=2"}, ""},
		{"8gbit", func(s Spec) Spec { s.Profile, s.Conns, s.Rate = look("8gbit"), 64, 2000; return s },
			[]string{"paced", "-c", "64", "-R", "2000", "-d", "5s", "--timeout", "2s", "-m", "POST", "-b", "@/data/requests/echo-10k.bin", "--insecure", "https://127.0.0.1:8081/echo"}, ""},
		{"no rate", func(s Spec) Spec { s.Profile, s.Conns = look("latency-1m"), 256; return s }, nil, "no offered rate"},
		{"closed loop", func(s Spec) Spec { s.Profile, s.Conns = look("baseline"), 512; return s }, nil, "without a rate"},
		{"echo-ws", func(s Spec) Spec { s.Profile, s.Conns = look("echo-ws"), 512; return s },
			[]string{"ws", "-c", "512", "-p", "1", "-r", "0", "-d", "5s", "--timeout", "2s", "ws://127.0.0.1:8080/ws"}, ""},
		{"baseline-h3", func(s Spec) Spec { s.Profile, s.Conns = look("baseline-h3"), 64; return s },
			[]string{"h3", "-c", "64", "-m", "64", "-D", "5s", "--timeout", "2s", "--insecure", "https://127.0.0.1:8443/baseline2?a=1&b=1"}, ""},
		{"static-h3", func(s Spec) Spec { s.Profile, s.Conns = look("static-h3"), 64; return s },
			[]string{"h3", "-c", "64", "-m", "64", "-D", "5s", "--timeout", "2s", "-i", "/data/requests/static-h2-uris.txt",
				"-H", "Accept-Encoding: br;q=1, gzip;q=0.8", "--insecure", "https://127.0.0.1:8443"}, ""},
		{"gateway-h3 names the edge localhost", func(s Spec) Spec { s.Profile, s.Conns = look("gateway-h3"), 16; return s },
			[]string{"h3", "-c", "16", "-m", "32", "-D", "5s", "--timeout", "2s", "-i", "/data/requests/gateway-64-uris.txt",
				"-H", "Accept-Encoding: br;q=1, gzip;q=0.8", "--insecure", "https://localhost:8443"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Arenaload().Args(tt.spec(base))
			if tt.error != "" {
				if err == nil || !strings.Contains(err.Error(), tt.error) {
					t.Errorf("Args: %v; want an error with %q", err, tt.error)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("Args = %q, %v\nwant %q", got, err, tt.want)
			}
		})
	}
}

// TestArenaloadParse reads output captured from the real generator (stderr's note first).
func TestArenaloadParse(t *testing.T) {
	m, err := Arenaload().Parse(readTestdata(t, "arenaload-paced.txt"))
	if err != nil {
		t.Fatal(err)
	}
	checkMeasurement(t, m)
	if m.Requests != 2000 || m.Status2xx != 2000 || m.Duration != time.Second || m.Bytes != 236000 ||
		m.Latency.P99 != 2695 || m.Latency.P999 != 5507 || m.Latency.Max != 6267 {
		t.Errorf("Parse = %+v", m)
	}
	g := m.Generator
	if g == nil || g.TargetRate != 2000 || g.MaxScheduleLag != 5000800*time.Nanosecond || g.CPU != 231348*time.Microsecond || g.Limit != "" {
		t.Errorf("Generator = %+v", g)
	}
	for _, bad := range []string{"", "arenaload paced: cannot dial\n", `{"tool":"wrk","mode":"paced","duration_s":1}`,
		`{"tool":"arenaload","mode":"paced","duration_s":1,"requests":1,"ok":5}`, `{"tool":"arenaload","mode":"paced","duration_s":1,"new_field":1}`} {
		if _, err := Arenaload().Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q) succeeded", bad)
		} else if bad == "" && !errors.Is(err, ErrNoResult) {
			t.Errorf("Parse of no output: %v; want ErrNoResult", err)
		}
	}
}

func FuzzParseArenaload(f *testing.F) {
	f.Add(readTestdata(f, "arenaload-paced.txt"))
	f.Fuzz(func(t *testing.T, out []byte) {
		m, err := Arenaload().Parse(out)
		if err != nil {
			return
		}
		checkMeasurement(t, m)
	})
}
