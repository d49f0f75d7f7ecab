package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// arenabotExec runs the arenabot command (the test binary's own main) with args, and
// returns its stdout, its stderr and its exit code.
func arenabotExec(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	raw, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperMainEnv+"="+string(raw))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

// TestHelpOnEveryCommand: --help and -h on every command print its usage on stdout and exit
// 0, with nothing on stderr.
func TestHelpOnEveryCommand(t *testing.T) {
	for _, c := range []string{"bench", "build", "validate", "serve", "work", "doctor", "queue", "site"} {
		for _, h := range []string{"--help", "-h"} {
			stdout, stderr, code := arenabotExec(t, c, h)
			if code != 0 || !strings.HasPrefix(stdout, "usage: arenabot "+c) || !strings.Contains(stdout, "flags:") || stderr != "" {
				t.Errorf("arenabot %s %s: exit %d, stdout %q, stderr %q; want 0, its usage on stdout, nothing on stderr", c, h, code, clip(stdout), clip(stderr))
			}
		}
	}
	for _, h := range []string{"help", "--help", "-h"} {
		if stdout, _, code := arenabotExec(t, h); code != 0 || !strings.HasPrefix(stdout, "usage: arenabot <command>") {
			t.Errorf("arenabot %s: exit %d, stdout %q", h, code, clip(stdout))
		}
	}
}

// TestUsageErrors: an unknown flag or command exits 2 with the usage on stderr and the
// problem named once; stdout stays empty.
func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"bench", "--no-such-flag"}, {"work", "--runs=many"}, {"frobnicate"}, {}} {
		stdout, stderr, code := arenabotExec(t, args...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, "usage: arenabot") {
			t.Errorf("arenabot %q: exit %d, stdout %q, stderr %q; want 2, the usage on stderr", args, code, clip(stdout), clip(stderr))
		}
	}
	_, stderr, _ := arenabotExec(t, "bench", "--no-such-flag")
	if n := strings.Count(stderr, "unknown flag: --no-such-flag"); n != 1 || !strings.Contains(stderr, "usage: arenabot bench") {
		t.Errorf("bench --no-such-flag: stderr names the flag %d times:\n%s", n, stderr)
	}
}

// TestVersion: arenabot --version and arenabot version print the module version, the
// revision and the pinned load tools.
func TestVersion(t *testing.T) {
	for _, v := range []string{"--version", "version"} {
		stdout, stderr, code := arenabotExec(t, v)
		if code != 0 || stderr != "" {
			t.Fatalf("arenabot %s: exit %d, stderr %q", v, code, stderr)
		}
		for _, want := range []string{"arenabot ", "\nrevision ", "\nwrk 4.1.0\n", "\nh2load 1.52.0\n", "\nghz 0.121.0\n", "\narenaload "} {
			if !strings.Contains(stdout, want) {
				t.Errorf("arenabot %s: %q lacks %q", v, stdout, want)
			}
		}
	}
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
