package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWiringOnly keeps cmd/ thin: no production file of a command over 250 lines. A file
// that grows past it holds logic that belongs in the package it drives.
func TestWiringOnly(t *testing.T) {
	files, err := filepath.Glob("../*/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no files under cmd/: %v", err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(b, []byte("\n")); n > 250 {
			t.Errorf("%s has %d lines: cmd/ is wiring; move the logic into the package it drives", filepath.ToSlash(f), n)
		}
	}
}
