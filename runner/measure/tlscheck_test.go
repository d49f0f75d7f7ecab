package measure

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/arenadata"
	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/runner/docker"
	"github.com/arenabot/arenabot/validate"
)

// TestCertsTLSCopy: the /certs-tls copy is the arena's pair, in a new directory beside the
// data directory that any user may read.
func TestCertsTLSCopy(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(filepath.Join(data, arenadata.CertsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{arenadata.CertFile, arenadata.KeyFile} {
		if err := os.WriteFile(filepath.Join(data, f), []byte("pem of "+f), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	sv := &servers{cfg: Config{DataDir: data}}
	a, err := sv.certsTLSCopy()
	if err != nil {
		t.Fatal(err)
	}
	b, err := sv.certsTLSCopy()
	if err != nil {
		t.Fatal(err)
	}
	if a == b || filepath.Dir(a) != filepath.Dir(data) || !strings.HasPrefix(filepath.Base(a), "certs-tls-") {
		t.Errorf("copies %s and %s; want two directories beside %s", a, b, data)
	}
	if fi, err := os.Stat(a); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("copy directory: %v, %v; want mode 0755", fi.Mode(), err)
	}
	for _, f := range []string{"server.crt", "server.key"} {
		got, err := os.ReadFile(filepath.Join(a, f))
		if err != nil || !strings.HasPrefix(string(got), "pem of certs/"+f) {
			t.Errorf("%s: %q, %v", f, got, err)
		}
		if fi, err := os.Stat(filepath.Join(a, f)); err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v, %v; want 0644 (the server may run as any user)", f, fi.Mode(), err)
		}
	}
	os.Remove(filepath.Join(data, arenadata.KeyFile))
	if dir, err := sv.certsTLSCopy(); err == nil {
		t.Errorf("copy without the key: %s, nil error", dir)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(data), "certs-tls-*")); len(left) != 2 {
		t.Errorf("directories left: %q; want only the two copies (a failed one is removed)", left)
	}
}

// TestValidateTLSCheck validates an entry written the arena's way today (a tier, tuned mode,
// completeness with an axis this arena does not know, tls_check, website; testdata/tlscheck)
// as `arenabot validate` does: its meta.json warning first, then the tls_check section, all of
// it passing against the server, which reads the pair the runner mounted at /certs-tls and
// picks up the rotated one. The copy is gone afterwards.
func TestValidateTLSCheck(t *testing.T) {
	eng, data := sidecarEngine(t)
	e, err := frameworks.Load("testdata", "tlscheck", profile.Names())
	if err != nil {
		t.Fatal(err)
	}
	if e.Meta.Tier() != "flagship" || !e.Meta.Tuned() || !e.Meta.TLSCheck || e.Meta.Website != "https://go.dev" || len(e.Warnings) != 1 {
		t.Fatalf("meta %+v, warnings %v", e.Meta, e.Warnings)
	}
	b := sidecarBencher(t, eng, data, Config{})
	if _, err := b.Build(t.Context(), e); err != nil {
		t.Fatal(err)
	}
	holdPorts(t, profile.PortH1, validate.TLSCheckPort)
	out, err := b.Validate(t.Context(), e, []string{validate.TLSCheck})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1+len(validate.Checks(validate.TLSCheck)) {
		t.Fatalf("%d outcomes, want the meta.json warning and the section's: %v", len(out), out)
	}
	if w := out[0]; w.Profile != validate.MetaFile || w.Status != validate.Warn || !strings.Contains(w.Got, `unknown axis "templates" is ignored`) {
		t.Errorf("first outcome %v; want the meta.json warning", w)
	}
	for _, o := range out[1:] {
		t.Log(o)
		want := validate.Pass
		if o.Check == "testssl.sh -U" && o.Status == validate.Skip {
			want = validate.Skip // not installed on this host
		}
		if o.Profile != validate.TLSCheck || o.Status != want {
			t.Errorf("%v; want %v", o, want)
		}
	}
	var server docker.RunOptions
	for _, o := range eng.started() {
		if o.Labels[LabelSidecar] == "" {
			server = o
		}
	}
	var mount *docker.Mount
	for i, m := range server.Mounts {
		if m.Target == frameworks.CertsTLSDir {
			mount = &server.Mounts[i]
		}
	}
	if mount == nil || !mount.ReadOnly || filepath.Dir(mount.Source) != filepath.Dir(data) {
		t.Fatalf("server mounts %+v; want the /certs-tls copy, read-only, beside the data directory", server.Mounts)
	}
	if _, err := os.Stat(mount.Source); !os.IsNotExist(err) {
		t.Errorf("the /certs-tls copy %s is still there (%v)", mount.Source, err)
	}
}
