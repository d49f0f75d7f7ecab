package hook

import (
	"encoding/json"
	"fmt"
	"strings"
)

// A Comment is an issue_comment event: a comment created, edited or deleted on a pull
// request or a plain issue.
type Comment struct {
	Action            string // created, edited or deleted
	Repo              string // owner/name
	Number            int    // the issue or pull-request number
	IsPR              bool   // the issue is a pull request (issue.pull_request is present)
	CommentID         int64
	Body              string // the comment text, exactly as sent (line endings included)
	Author            string // comment.user.login
	AuthorType        string // comment.user.type: User or Bot
	AuthorAssociation string // OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, NONE…; not proof of access
	Installation      int64  // the GitHub App installation; 0 for a repository hook
	HTMLURL           string // the comment's web address
}

// FromBot reports whether a bot wrote the comment: its author's type is Bot or its login
// ends in "[bot]".
func (c Comment) FromBot() bool {
	return c.AuthorType == "Bot" || strings.HasSuffix(c.Author, "[bot]")
}

// A PullRequest is a pull_request event. Before and After are set only for synchronize
// (new commits pushed to the head branch).
type PullRequest struct {
	Action        string // opened, synchronize, closed, reopened…
	Repo          string // owner/name of the base repository
	Number        int
	Before, After string // head SHAs before and after a synchronize
	HeadSHA       string // pull_request.head.sha
	Installation  int64
}

// A Ping is the ping event GitHub sends when a hook is created.
type Ping struct {
	Zen    string
	HookID int64
}

// An Installation is an installation event: the App installed, removed, suspended….
type Installation struct {
	Action  string // created, deleted, suspend, unsuspend, new_permissions_accepted
	ID      int64
	Account string   // the user or organisation that installed the App
	Repos   []string // owner/name of the repositories listed in the payload, in order
}

// Other is any other event: acknowledged and ignored.
type Other struct {
	Event string
}

// The wire shapes: only the fields the bot reads.
type (
	wireUser struct {
		Login string `json:"login"`
		Type  string `json:"type"`
	}
	wireRepo struct {
		FullName string `json:"full_name"`
	}
	wireInstallation struct {
		ID      int64    `json:"id"`
		Account wireUser `json:"account"`
	}
	wireIssueComment struct {
		Action string `json:"action"`
		Issue  struct {
			Number      int             `json:"number"`
			PullRequest json.RawMessage `json:"pull_request"`
		} `json:"issue"`
		Comment struct {
			ID                int64    `json:"id"`
			Body              string   `json:"body"`
			User              wireUser `json:"user"`
			AuthorAssociation string   `json:"author_association"`
			HTMLURL           string   `json:"html_url"`
		} `json:"comment"`
		Repository   wireRepo         `json:"repository"`
		Installation wireInstallation `json:"installation"`
	}
	wirePullRequest struct {
		Action      string `json:"action"`
		Number      int    `json:"number"`
		Before      string `json:"before"`
		After       string `json:"after"`
		PullRequest struct {
			Number int `json:"number"`
			Head   struct {
				SHA string `json:"sha"`
			} `json:"head"`
		} `json:"pull_request"`
		Repository   wireRepo         `json:"repository"`
		Installation wireInstallation `json:"installation"`
	}
	wirePing struct {
		Zen    string `json:"zen"`
		HookID int64  `json:"hook_id"`
	}
	wireInstallationEvent struct {
		Action       string           `json:"action"`
		Installation wireInstallation `json:"installation"`
		Repositories []wireRepo       `json:"repositories"`
	}
)

// Decode turns a delivery into a typed event: a Comment (issue_comment), PullRequest
// (pull_request), Ping (ping), Installation (installation) or Other (any other event,
// whose payload is only checked to be valid JSON). Unknown fields are ignored. An error
// wraps ErrMalformed: the payload is not a JSON object of the expected shape, or misses
// a field the event cannot do without (the action, the repository, the number, the
// comment id, the installation id).
func Decode(d Delivery) (any, error) {
	switch d.Event {
	case "issue_comment":
		var w wireIssueComment
		if err := unmarshal(d, &w); err != nil {
			return nil, err
		}
		c := Comment{
			Action:            w.Action,
			Repo:              w.Repository.FullName,
			Number:            w.Issue.Number,
			IsPR:              present(w.Issue.PullRequest),
			CommentID:         w.Comment.ID,
			Body:              w.Comment.Body,
			Author:            w.Comment.User.Login,
			AuthorType:        w.Comment.User.Type,
			AuthorAssociation: w.Comment.AuthorAssociation,
			Installation:      w.Installation.ID,
			HTMLURL:           w.Comment.HTMLURL,
		}
		if err := require(d, check{c.Action != "", "action"}, check{c.Repo != "", "repository.full_name"},
			check{c.Number > 0, "issue.number"}, check{c.CommentID > 0, "comment.id"}); err != nil {
			return nil, err
		}
		return c, nil
	case "pull_request":
		var w wirePullRequest
		if err := unmarshal(d, &w); err != nil {
			return nil, err
		}
		p := PullRequest{
			Action:       w.Action,
			Repo:         w.Repository.FullName,
			Number:       w.Number,
			Before:       w.Before,
			After:        w.After,
			HeadSHA:      w.PullRequest.Head.SHA,
			Installation: w.Installation.ID,
		}
		if p.Number == 0 {
			p.Number = w.PullRequest.Number
		}
		if err := require(d, check{p.Action != "", "action"}, check{p.Repo != "", "repository.full_name"},
			check{p.Number > 0, "number"}); err != nil {
			return nil, err
		}
		return p, nil
	case "ping":
		var w wirePing
		if err := unmarshal(d, &w); err != nil {
			return nil, err
		}
		return Ping(w), nil
	case "installation":
		var w wireInstallationEvent
		if err := unmarshal(d, &w); err != nil {
			return nil, err
		}
		in := Installation{
			Action:  w.Action,
			ID:      w.Installation.ID,
			Account: w.Installation.Account.Login,
		}
		for _, r := range w.Repositories {
			in.Repos = append(in.Repos, r.FullName)
		}
		if err := require(d, check{in.Action != "", "action"}, check{in.ID > 0, "installation.id"}); err != nil {
			return nil, err
		}
		return in, nil
	default:
		if !json.Valid(d.Payload) {
			return nil, fmt.Errorf("decode %s delivery %s: %w: payload is not JSON", d.Event, d.ID, ErrMalformed)
		}
		return Other{Event: d.Event}, nil
	}
}

// unmarshal decodes d's payload into v, which points to a struct.
func unmarshal(d Delivery, v any) error {
	if err := json.Unmarshal(d.Payload, v); err != nil {
		return fmt.Errorf("decode %s delivery %s: %w: %v", d.Event, d.ID, ErrMalformed, err)
	}
	return nil
}

// A check says whether a required field is usable.
type check struct {
	ok    bool
	field string
}

// require reports the first field whose check failed.
func require(d Delivery, checks ...check) error {
	for _, c := range checks {
		if !c.ok {
			return fmt.Errorf("decode %s delivery %s: %w: no %s", d.Event, d.ID, ErrMalformed, c.field)
		}
	}
	return nil
}

// present reports whether a raw JSON value is there and not null.
func present(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}
