package measure

import (
	"strings"
	"testing"

	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/profile"
)

// TestNofileTooLow: a row whose connections the host's open-files limit cannot hold fails
// before any container starts, naming the limit and how to raise it.
func TestNofileTooLow(t *testing.T) {
	b := New(nil, Config{Nofile: 20000})
	async, _ := profile.Lookup("async")
	_, _, err := b.measureOne(t.Context(), "image", frameworks.Entry{Name: "e"}, async, 32000, func() {}, false)
	if err == nil || !strings.Contains(err.Error(), "at least 33024") || !strings.Contains(err.Error(), "allows 20000") || !strings.Contains(err.Error(), "LimitNOFILE=") {
		t.Errorf("measureOne with nofile 20000 for 32,000 connections: %v", err)
	}
}
