package build

import (
	"strings"
	"testing"
)

func TestParseImageMap(t *testing.T) {
	m, err := ParseImageMap(" golang:*=arenabot/golang:local, alpine:*=arenabot/debian:local,,debian:bookworm-slim=arenabot/debian:local,node:20-*=my/node:20,ghcr.io/x/y=arenabot/y:local,golang:1.26-alpine=arenabot/golang:1.26.8,")
	if err != nil {
		t.Fatal(err)
	}
	if m.Len() != 6 {
		t.Errorf("Len = %d; want 6", m.Len())
	}
	if got, want := m.String(), "golang:*=arenabot/golang:local,alpine:*=arenabot/debian:local,debian:bookworm-slim=arenabot/debian:local,node:20-*=my/node:20,ghcr.io/x/y=arenabot/y:local,golang:1.26-alpine=arenabot/golang:1.26.8"; got != want {
		t.Errorf("String = %q\nwant     %q", got, want)
	}
	for _, tt := range []struct {
		image, local, pair string
	}{
		{"golang:1.26-bookworm", "arenabot/golang:local", "golang:*=arenabot/golang:local"},
		{"docker.io/library/golang:1.25", "arenabot/golang:local", "golang:*=arenabot/golang:local"},
		{"library/golang", "arenabot/golang:local", "golang:*=arenabot/golang:local"},
		{"golang@sha256:" + strings.Repeat("a", 64), "arenabot/golang:local", "golang:*=arenabot/golang:local"},
		// An exact IMAGE wins over a *.
		{"golang:1.26-alpine", "arenabot/golang:1.26.8", "golang:1.26-alpine=arenabot/golang:1.26.8"},
		{"index.docker.io/library/golang:1.26-alpine", "arenabot/golang:1.26.8", "golang:1.26-alpine=arenabot/golang:1.26.8"},
		{"alpine:3.23", "arenabot/debian:local", "alpine:*=arenabot/debian:local"},
		{"alpine", "arenabot/debian:local", "alpine:*=arenabot/debian:local"},
		{"debian:bookworm-slim", "arenabot/debian:local", "debian:bookworm-slim=arenabot/debian:local"},
		{"node:20-alpine", "my/node:20", "node:20-*=my/node:20"},
		// A pattern without a tag means :latest.
		{"ghcr.io/x/y", "arenabot/y:local", "ghcr.io/x/y=arenabot/y:local"},
		{"ghcr.io/x/y:latest", "arenabot/y:local", "ghcr.io/x/y=arenabot/y:local"},
	} {
		local, pair, ok := m.Lookup(tt.image)
		if !ok || local != tt.local || pair != tt.pair {
			t.Errorf("Lookup(%q) = %q, %q, %v; want %q, %q", tt.image, local, pair, ok, tt.local, tt.pair)
		}
	}
	for _, image := range []string{
		"debian:trixie",          // only bookworm-slim is mapped
		"node:22",                // only 20-*
		"ghcr.io/x/y:1",          // only :latest
		"ghcr.io/library/golang", // another registry
		"myorg/golang:1.26",      // another repository
		"golangci/golangci-lint:v2",
		"Not A Reference",
		"",
	} {
		if local, pair, ok := m.Lookup(image); ok {
			t.Errorf("Lookup(%q) = %q, %q; want no match", image, local, pair)
		}
	}

	var zero ImageMap
	if _, _, ok := zero.Lookup("golang:1.26"); ok || zero.Len() != 0 || zero.String() != "" {
		t.Error("the zero ImageMap maps something")
	}
	if m, err := ParseImageMap(""); err != nil || m.Len() != 0 {
		t.Errorf(`ParseImageMap("") = %v, %v; want the empty map`, m, err)
	}
}

func TestParseImageMapOrder(t *testing.T) {
	m, err := ParseImageMap("golang:*=a/any:local,golang:1.26-*=a/126:local,golang:1.26-alpine*=a/alpine:local")
	if err != nil {
		t.Fatal(err)
	}
	for image, want := range map[string]string{
		"golang:1.25":            "a/any:local",
		"golang:1.26-bookworm":   "a/126:local",
		"golang:1.26-alpine":     "a/alpine:local",
		"golang:1.26-alpine3.22": "a/alpine:local",
	} {
		if got, _, _ := m.Lookup(image); got != want {
			t.Errorf("Lookup(%s) = %s; want %s (the longest tag prefix)", image, got, want)
		}
	}
}

func TestParseImageMapErrors(t *testing.T) {
	for in, want := range map[string]string{
		"golang":                                                 `image map pair "golang": no "="`,
		"golang:*=a:local,alpine":                                `image map pair "alpine": no "="`,
		"=arenabot/golang:local":                                 `image map pair "=arenabot/golang:local": no IMAGE before the =`,
		"golang:*=":                                              `image map pair "golang:*=": no LOCAL after the =`,
		"golang*=arenabot/golang:local":                          `image map pair "golang*=arenabot/golang:local": IMAGE golang*: a * may only end the tag`,
		"*=arenabot/golang:local":                                `IMAGE *: a * may only end the tag`,
		"gol*ang:1=arenabot/golang:local":                        `IMAGE gol*ang:1: a * may only end the tag`,
		"Golang:*=arenabot/golang:local":                         `IMAGE Golang:* is not an image reference`,
		"golang:1.26 alpine=x:local":                             `IMAGE golang:1.26 alpine is not an image reference`,
		"golang:*=arenabot/*:local":                              `LOCAL arenabot/*:local has a *`,
		"golang:*=arenabot//golang:local":                        `LOCAL arenabot//golang:local is not an image reference`,
		"golang:*=a:local,golang:*=b:local":                      `image map pair "golang:*=b:local" maps the same images as "golang:*=a:local"; give each IMAGE once`,
		"golang=a:local,docker.io/library/golang:latest=b:local": `maps the same images as "golang=a:local"`,
	} {
		_, err := ParseImageMap(in)
		if err == nil {
			t.Errorf("ParseImageMap(%q) succeeded", in)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, want) {
			t.Errorf("ParseImageMap(%q) = %q; want it to contain %q", in, msg, want)
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("ParseImageMap(%q): the error has several lines: %q", in, msg)
		}
		if !strings.Contains(msg, "give each IMAGE once") && !strings.HasSuffix(msg, "; "+imageMapForm) {
			t.Errorf("ParseImageMap(%q) = %q; want it to end with the expected form", in, msg)
		}
	}
}

func TestMapPattern(t *testing.T) {
	for in, want := range map[string]string{
		"alpine:3.23":                              "alpine:*",
		"docker.io/library/golang:1.26":            "golang:*",
		"mcr.microsoft.com/dotnet/sdk:10.0":        "mcr.microsoft.com/dotnet/sdk:*",
		"alpine@sha256:" + strings.Repeat("0", 64): "alpine:*",
	} {
		if got := MapPattern(in); got != want {
			t.Errorf("MapPattern(%q) = %q; want %q", in, got, want)
		}
	}
}
