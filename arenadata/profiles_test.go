package arenadata_test

import (
	"strings"
	"testing"

	"github.com/arenabot/arenabot/arenadata"
	"github.com/arenabot/arenabot/profile"
)

// TestProfileRequests checks the profile table against the data: every request file a
// profile names is generated and carries the profile's headers, so the two cannot drift
// apart. (The profile package's own tests check the names against Files() only, without
// generating the data.)
func TestProfileRequests(t *testing.T) {
	dir := tree(t)
	for _, p := range profile.All {
		for _, r := range p.Requests {
			if !strings.HasSuffix(r, ".raw") {
				continue // a URI list: the tool sends the headers
			}
			b := readFile(t, dir, arenadata.RequestsDir+"/"+r)
			head, _, _ := strings.Cut(string(b), "\r\n\r\n")
			for _, h := range p.Headers {
				if !strings.Contains(head+"\r\n", "\r\n"+h+"\r\n") {
					t.Errorf("%s: %s lacks the profile's header %q", p.Name, r, h)
				}
			}
		}
	}
}
