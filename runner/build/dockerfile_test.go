package build

import (
	"slices"
	"strings"
	"testing"
)

// from is what TestParseFroms checks of a fromLine.
type from struct {
	stage      int
	name       string
	line, end  int
	flags      string
	image, arg string
}

func fromsOf(fs []fromLine) []from {
	var out []from
	for _, f := range fs {
		out = append(out, from{f.Stage, f.Name, f.Line, f.EndLine, strings.Join(f.Flags, " "), f.Image, f.Arg})
	}
	return out
}

func TestParseFroms(t *testing.T) {
	tests := []struct {
		name string
		file string
		args map[string]string
		want []from
	}{{
		name: "old arena multi-stage",
		file: "FROM golang:1.26-alpine AS build\nWORKDIR /src\nCOPY . .\nRUN CGO_ENABLED=0 go build -o /server .\n\nFROM alpine:3.23\nCOPY --from=build /server /server\nENTRYPOINT [\"/server\"]\n",
		want: []from{{1, "build", 1, 1, "", "golang:1.26-alpine", ""}, {2, "", 6, 6, "", "alpine:3.23", ""}},
	}, {
		name: "stage references and scratch are not images",
		file: "FROM golang:1.26 AS Build\nFROM build AS test\nFROM scratch\nFROM BUILD\nFROM later\nFROM debian AS later\n",
		want: []from{
			{1, "Build", 1, 1, "", "golang:1.26", ""},
			{2, "test", 2, 2, "", "", ""},
			{3, "", 3, 3, "", "", ""},
			{4, "", 4, 4, "", "", ""},
			{5, "", 5, 5, "", "later", ""}, // a later stage's name is an image
			{6, "later", 6, 6, "", "debian", ""},
		},
	}, {
		name: "ARG defaults",
		file: "# syntax=docker/dockerfile:1\nARG GO_IMAGE=golang:1.26-bookworm\nARG RUN_IMAGE=\"debian:bookworm-slim\" VER=3.23\nARG EMPTY\nFROM ${GO_IMAGE} AS build\nARG GO_IMAGE=ignored:1\nFROM $RUN_IMAGE\nFROM alpine:${VER}\nFROM ${EMPTY:-busybox}\nFROM ${VER:+alpine:$VER}\nFROM ${EMPTY}\n",
		want: []from{
			{1, "build", 5, 5, "", "golang:1.26-bookworm", "GO_IMAGE"},
			{2, "", 7, 7, "", "debian:bookworm-slim", "RUN_IMAGE"},
			{3, "", 8, 8, "", "alpine:3.23", ""},
			{4, "", 9, 9, "", "busybox", "EMPTY"},
			{5, "", 10, 10, "", "alpine:3.23", ""},
			{6, "", 11, 11, "", "", "EMPTY"},
		},
	}, {
		name: "build arguments override the defaults",
		file: "ARG GO_IMAGE=golang:1.26-bookworm\nARG VER=1.26\nARG IMG=golang:${VER}\nFROM ${GO_IMAGE}\nFROM ${IMG}\nFROM ${UNDECLARED:-x:1}\n",
		args: map[string]string{"GO_IMAGE": "arenabot/golang:local", "VER": "1.25", "UNDECLARED": "y:2"},
		want: []from{
			{1, "", 4, 4, "", "arenabot/golang:local", "GO_IMAGE"},
			{2, "", 5, 5, "", "golang:1.25", "IMG"},
			{3, "", 6, 6, "", "x:1", ""}, // only declared ARGs take build arguments
		},
	}, {
		name: "continuations, comments, flags, case",
		file: "# a comment\n  # an indented comment\nfrom --platform=linux/amd64 \\\n  # a comment inside\n\n  golang:1.26 \\\n  as build\nRUN echo \\\n  FROM not-an-image\nFrom\t--platform=$BUILDPLATFORM  alpine:3.23   AS   run\r\n",
		want: []from{
			{1, "build", 3, 7, "--platform=linux/amd64", "golang:1.26", ""},
			{2, "run", 10, 10, "--platform=$BUILDPLATFORM", "alpine:3.23", ""},
		},
	}, {
		name: "escape directive",
		file: "# escape=`\nARG BASE=mcr.microsoft.com/windows/servercore:ltsc2022\nFROM $BASE `\n  AS base\nRUN dir c:\\\nFROM base\n",
		want: []from{{1, "base", 3, 4, "", "mcr.microsoft.com/windows/servercore:ltsc2022", "BASE"}, {2, "", 6, 6, "", "", ""}},
	}, {
		name: "what the builder rejects has no image",
		file: "FROM\nFROM a b c d\nFROM ${BAD\nFROM x:1 AS\n",
		want: []from{{1, "", 1, 1, "", "", ""}, {2, "", 2, 2, "", "", ""}, {3, "", 3, 3, "", "", ""}, {4, "", 4, 4, "", "", ""}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fromsOf(parseFroms([]byte(tt.file), tt.args))
			if !slices.Equal(got, tt.want) {
				t.Errorf("parseFroms =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestExpandWord(t *testing.T) {
	vars := map[string]string{"A": "x", "EMPTY": ""}
	lookup := func(n string) (string, bool) { v, ok := vars[n]; return v, ok }
	for in, want := range map[string]string{
		"$A":             "x",
		"${A}:1":         "x:1",
		"a$A$A":          "axx",
		`"$A"`:           "x",
		`'$A'`:           "$A",
		`\$A`:            "$A",
		"${UNSET-d}":     "d",
		"${EMPTY-d}":     "",
		"${EMPTY:-d}":    "d",
		"${A:-d}":        "x",
		"${A:+y${A}}":    "yx",
		"${UNSET:+y}":    "",
		"${A+y}":         "y",
		"${EMPTY+y}":     "y",
		"${EMPTY:+y}":    "",
		"$":              "$",
		"a$-b":           "a$-b",
		"${UNSET:-${A}}": "x",
	} {
		got, err := expandWord(in, '\\', lookup)
		if err != nil || got != want {
			t.Errorf("expandWord(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"${A", "${}", "${A:}", "${A/x/y}", `"unclosed`, "${UNSET:?need it}"} {
		if got, err := expandWord(in, '\\', lookup); err == nil {
			t.Errorf("expandWord(%q) = %q; want an error", in, got)
		}
	}
}

func TestRewriteFroms(t *testing.T) {
	file := "# syntax=docker/dockerfile:1\r\nFROM --platform=linux/amd64 \\\r\n  golang:1.26-alpine \\\r\n  AS build\r\nRUN go build\r\nFROM alpine:3.23\r\nFROM scratch\r\n"
	froms := parseFroms([]byte(file), nil)
	got := string(rewriteFroms([]byte(file), froms, map[int]string{1: "arenabot/golang:local", 2: "arenabot/debian:local"}))
	want := "# syntax=docker/dockerfile:1\r\nFROM --platform=linux/amd64 arenabot/golang:local AS build\r\n\r\n\r\nRUN go build\r\nFROM arenabot/debian:local\r\nFROM scratch\r\n"
	if got != want {
		t.Errorf("rewriteFroms =\n%q\nwant\n%q", got, want)
	}
	// The rewritten file reads as the substituted images, every other line where it was.
	again := fromsOf(parseFroms([]byte(got), nil))
	if wantFroms := []from{{1, "build", 2, 2, "--platform=linux/amd64", "arenabot/golang:local", ""}, {2, "", 6, 6, "", "arenabot/debian:local", ""}, {3, "", 7, 7, "", "", ""}}; !slices.Equal(again, wantFroms) {
		t.Errorf("the rewritten file's FROMs are %+v; want %+v", again, wantFroms)
	}
	if got := string(rewriteFroms([]byte(file), froms, nil)); got != file {
		t.Errorf("rewriteFroms with nothing to substitute changed the file: %q", got)
	}
}

func TestStageDesc(t *testing.T) {
	if got := (fromLine{Stage: 1, Name: "build"}).StageDesc(); got != `1 "build"` {
		t.Errorf("StageDesc = %s", got)
	}
	if got := (fromLine{Stage: 2}).StageDesc(); got != "2" {
		t.Errorf("StageDesc = %s", got)
	}
}
