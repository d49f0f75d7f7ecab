package main

import (
	"bytes"
	"testing"
)

func TestProgressWithoutTerminal(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf)
	p.Step("nethttp baseline 512c", 0, 6)
	p.Step("nethttp baseline 512c", 1, 6) // same step: no new line
	p.Note("nethttp: validating 1 test(s)")
	p.Step("nethttp baseline 4096c", 3, 6)
	p.Finish()
	want := "[0/6 runs] nethttp baseline 512c\nnethttp: validating 1 test(s)\n[3/6 runs] nethttp baseline 4096c\n"
	if got := buf.String(); got != want {
		t.Errorf("progress without a terminal wrote\n%q\nwant\n%q", got, want)
	}
}
