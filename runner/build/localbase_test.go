package build

import (
	"testing"
)

func TestLocalBase(t *testing.T) {
	for in, want := range map[string]string{
		"golang:1.26-bookworm":              "arenabot/golang:local",
		"debian:bookworm-slim":              "arenabot/debian:local",
		"docker.io/library/golang:1.26":     "arenabot/golang:local",
		"localhost:5000/team/rust:1.94":     "arenabot/rust:local",
		"alpine@sha256:0123":                "arenabot/alpine:local",
		"mcr.microsoft.com/dotnet/sdk:10.0": "arenabot/sdk:local",
	} {
		if got := LocalBase(in); got != want {
			t.Errorf("LocalBase(%q) = %q, want %q", in, got, want)
		}
	}
}
