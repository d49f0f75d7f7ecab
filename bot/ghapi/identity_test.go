package ghapi

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/bot/githubtest"
)

func TestIdentityApp(t *testing.T) {
	s := githubtest.New(t)
	s.SetApp("benchbot")
	c := appClient(t, s)
	login, err := c.ResolveLogin(t.Context())
	if err != nil || login != "benchbot[bot]" || c.Login() != "benchbot[bot]" {
		t.Fatalf("ResolveLogin = %q, %v (Login %q); want benchbot[bot]", login, err, c.Login())
	}
	calls := s.CallsTo("GET", "/app")
	if len(calls) != 1 || !strings.HasPrefix(calls[0].Header.Get("Authorization"), "Bearer ") {
		t.Errorf("GET /app calls = %+v; want one with the App's JWT", calls)
	}
}

func TestIdentityToken(t *testing.T) {
	s, c, _ := setup(t, func(cfg *Config) { cfg.BotLogin = "" })
	s.SetCaller("ops-person")
	if login, err := c.ResolveLogin(t.Context()); err != nil || login != "ops-person" {
		t.Fatalf("ResolveLogin = %q, %v; want ops-person", login, err)
	}
	if n := len(s.CallsTo("GET", "/user")); n != 1 {
		t.Errorf("GET /user calls = %d, want 1", n)
	}
}

func TestIdentityRefused(t *testing.T) {
	t.Run("configured login differs", func(t *testing.T) {
		s := githubtest.New(t)
		s.SetApp("other")
		c := appClientWith(t, s, func(cfg *Config) { cfg.BotLogin = "arenabot[bot]" })
		_, err := c.ResolveLogin(t.Context())
		if err == nil || !strings.Contains(err.Error(), `"other[bot]"`) || !strings.Contains(err.Error(), `"arenabot[bot]"`) {
			t.Fatalf("ResolveLogin err = %v; want one naming both logins", err)
		}
	})
	t.Run("no slug", func(t *testing.T) {
		s := githubtest.New(t)
		s.SetApp("")
		if _, err := appClient(t, s).ResolveLogin(t.Context()); err == nil || !strings.Contains(err.Error(), "no slug") {
			t.Fatalf("ResolveLogin err = %v; want the missing slug", err)
		}
	})
	t.Run("API error", func(t *testing.T) {
		s, c, _ := setup(t, func(cfg *Config) { cfg.BotLogin = "" })
		s.FailNext("GET", "/user", 1, http.StatusUnauthorized)
		_, err := c.ResolveLogin(t.Context())
		if err == nil || !strings.Contains(err.Error(), "GET /user") || status(err) != http.StatusUnauthorized {
			t.Fatalf("ResolveLogin err = %v; want the 401 of GET /user", err)
		}
		if c.Login() != "" {
			t.Errorf("Login = %q after a failed ResolveLogin, want none", c.Login())
		}
	})
}

// TestFindCommentIgnoresPlantedMarkers: a marker in anyone else's comment is not the bot's,
// and without a known login FindComment refuses rather than accept any author.
func TestFindCommentIgnoresPlantedMarkers(t *testing.T) {
	s, c, _ := setup(t, func(cfg *Config) { cfg.BotLogin = "" })
	const marker = "<!-- arenabot:job=r1 -->"
	s.AddComment(repo, 7, "mallory", "planted "+marker)
	if _, _, _, err := c.FindComment(t.Context(), 0, repo, 7, marker); err == nil || !strings.Contains(err.Error(), "login is unknown") {
		t.Fatalf("FindComment without a login: err = %v; want a refusal", err)
	}
	if _, err := c.ResolveLogin(t.Context()); err != nil {
		t.Fatal(err)
	}
	if id, _, found, err := c.FindComment(t.Context(), 0, repo, 7, marker); err != nil || found {
		t.Fatalf("FindComment = %d, %v, %v; want mallory's marker ignored", id, found, err)
	}
	mine := s.AddComment(repo, 7, githubtest.BotLogin, "status "+marker)
	if id, _, found, err := c.FindComment(t.Context(), 0, repo, 7, marker); err != nil || !found || id != mine {
		t.Fatalf("FindComment = %d, %v, %v; want the bot's comment %d", id, found, err, mine)
	}
}

func TestInstalledRepos(t *testing.T) {
	s := githubtest.New(t)
	var many []string
	for i := range 101 { // two pages of repositories
		many = append(many, fmt.Sprintf("big/r%03d", i))
	}
	s.AddInstallation(7, many...)
	s.AddInstallation(8, "arena/bench", "big/r000")
	got, err := appClient(t, s).InstalledRepos(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := append([]string{"arena/bench"}, many...)
	if !slices.Equal(got, want) {
		t.Errorf("InstalledRepos = %d repos %v…; want %d (%v…)", len(got), got[:min(3, len(got))], len(want), want[:3])
	}
	if n := len(s.CallsTo("GET", "/installation/repositories")); n != 3 {
		t.Errorf("GET /installation/repositories calls = %d, want 3 (two pages, one)", n)
	}
	if _, c, _ := setup(t, nil); true {
		if _, err := c.InstalledRepos(t.Context()); !errors.Is(err, ErrNoApp) {
			t.Errorf("token auth: err = %v, want ErrNoApp", err)
		}
	}
}
