package githubtest

import (
	"encoding/base64"
	"fmt"
	"hash/fnv"
	"strings"
	"time"
)

const timeFormat = time.RFC3339

// apiURL is an absolute API URL below the repository.
func (s *Server) apiURL(r *repo, format string, args ...any) string {
	return fmt.Sprintf("%srepos/%s/%s/", s.URL, r.owner, r.name) + fmt.Sprintf(format, args...)
}

// userID gives each login a stable id.
func (s *Server) userID(login string) int64 {
	key := strings.ToLower(login)
	if id, ok := s.users[key]; ok {
		return id
	}
	h := fnv.New32a()
	h.Write([]byte(key))
	id := int64(h.Sum32()%9_000_000) + 1_000_000
	s.users[key] = id
	return id
}

func (s *Server) userJSON(login string) map[string]any {
	typ := "User"
	html := "https://github.com/" + login
	if strings.HasSuffix(login, "[bot]") {
		typ = "Bot"
		html = "https://github.com/apps/" + strings.TrimSuffix(login, "[bot]")
	}
	id := s.userID(login)
	return map[string]any{
		"login":       login,
		"id":          id,
		"node_id":     base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "04:User%d", id)),
		"avatar_url":  fmt.Sprintf("https://avatars.githubusercontent.com/u/%d?v=4", id),
		"gravatar_id": "",
		"url":         s.URL + "users/" + login,
		"html_url":    html,
		"type":        typ,
		"site_admin":  false,
	}
}

func (s *Server) repoJSON(r *repo) map[string]any {
	full := r.owner + "/" + r.name
	return map[string]any{
		"id":             r.id,
		"node_id":        base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "010:Repository%d", r.id)),
		"name":           r.name,
		"full_name":      full,
		"private":        false,
		"owner":          s.userJSON(r.owner),
		"html_url":       "https://github.com/" + full,
		"url":            s.URL + "repos/" + full,
		"fork":           false,
		"default_branch": DefaultBranch,
		"clone_url":      "https://github.com/" + full + ".git",
	}
}

func (s *Server) commentJSON(r *repo, c *Comment) map[string]any {
	counts := map[string]any{"url": s.apiURL(r, "issues/comments/%d/reactions", c.ID), "total_count": len(r.reactions[c.ID])}
	for k := range reactionContents {
		counts[k] = 0
	}
	for _, x := range r.reactions[c.ID] {
		counts[x.Content] = counts[x.Content].(int) + 1
	}
	return map[string]any{
		"id":                 c.ID,
		"node_id":            base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "012:IssueComment%d", c.ID)),
		"url":                s.apiURL(r, "issues/comments/%d", c.ID),
		"html_url":           fmt.Sprintf("https://github.com/%s/%s/pull/%d#issuecomment-%d", r.owner, r.name, c.Number, c.ID),
		"issue_url":          s.apiURL(r, "issues/%d", c.Number),
		"body":               c.Body,
		"user":               s.userJSON(c.User),
		"created_at":         c.CreatedAt.Format(timeFormat),
		"updated_at":         c.UpdatedAt.Format(timeFormat),
		"author_association": s.association(r, c.User),
		"reactions":          counts,
	}
}

func (s *Server) association(r *repo, login string) string {
	switch {
	case strings.EqualFold(login, r.owner):
		return "OWNER"
	case r.perms[strings.ToLower(login)] != "" && r.perms[strings.ToLower(login)] != "none":
		return "COLLABORATOR"
	}
	return "NONE"
}

func (s *Server) reactionJSON(x *Reaction) map[string]any {
	return map[string]any{
		"id":         x.ID,
		"node_id":    base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "08:Reaction%d", x.ID)),
		"user":       s.userJSON(x.User),
		"content":    x.Content,
		"created_at": x.CreatedAt.Format(timeFormat),
	}
}

func (s *Server) prJSON(r *repo, pr *PR) map[string]any {
	full := r.owner + "/" + r.name
	head := s.headRepo(r, pr, false)
	var headRepo any
	headOwner := r.owner
	if head != nil {
		headRepo = s.repoJSON(head)
		headOwner = head.owner
	} else if o, _, ok := strings.Cut(pr.HeadRepo, "/"); ok {
		headOwner = o
	}
	baseSHA := r.refs[pr.BaseRef]
	user := pr.User
	if user == "" {
		user = headOwner
	}
	id := r.id*100000 + int64(pr.Number)
	now := s.now().Format(timeFormat)
	return map[string]any{
		"url":                   s.apiURL(r, "pulls/%d", pr.Number),
		"id":                    id,
		"node_id":               base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "PR_%d", id)),
		"html_url":              fmt.Sprintf("https://github.com/%s/pull/%d", full, pr.Number),
		"issue_url":             s.apiURL(r, "issues/%d", pr.Number),
		"comments_url":          s.apiURL(r, "issues/%d/comments", pr.Number),
		"number":                pr.Number,
		"state":                 pr.State,
		"locked":                false,
		"title":                 pr.Title,
		"user":                  s.userJSON(user),
		"body":                  "",
		"created_at":            now,
		"updated_at":            now,
		"closed_at":             nil,
		"merged_at":             nil,
		"draft":                 false,
		"merged":                false,
		"mergeable":             nil,
		"maintainer_can_modify": pr.MaintainerCanModify,
		"author_association":    s.association(r, user),
		"changed_files":         len(pr.Files),
		"head": map[string]any{
			"label": headOwner + ":" + pr.HeadRef,
			"ref":   pr.HeadRef,
			"sha":   pr.HeadSHA,
			"user":  s.userJSON(headOwner),
			"repo":  headRepo,
		},
		"base": map[string]any{
			"label": r.owner + ":" + pr.BaseRef,
			"ref":   pr.BaseRef,
			"sha":   baseSHA,
			"user":  s.userJSON(r.owner),
			"repo":  s.repoJSON(r),
		},
	}
}

func (s *Server) contentEntry(r *repo, p, typ, ref string, content []byte) map[string]any {
	name := p[strings.LastIndex(p, "/")+1:]
	sha := blobSHA(content)
	if typ == "dir" {
		sha = blobSHA([]byte("dir\x00" + ref + "\x00" + p))
	}
	e := map[string]any{
		"type":     typ,
		"name":     name,
		"path":     p,
		"sha":      sha,
		"size":     len(content),
		"url":      s.apiURL(r, "contents/%s?ref=%s", p, ref),
		"html_url": fmt.Sprintf("https://github.com/%s/%s/%s/%s/%s", r.owner, r.name, map[string]string{"file": "blob", "dir": "tree"}[typ], ref, p),
		"git_url":  s.apiURL(r, "git/%s/%s", map[string]string{"file": "blobs", "dir": "trees"}[typ], sha),
	}
	if typ == "file" {
		e["download_url"] = fmt.Sprintf("https://raw.githubusercontent.com/%s/%s/%s/%s", r.owner, r.name, ref, p)
	} else {
		e["download_url"] = nil
	}
	e["_links"] = map[string]any{"self": e["url"], "git": e["git_url"], "html": e["html_url"]}
	return e
}

// wrap64 encodes content as GitHub does: base64 with a newline after every 60 characters.
func wrap64(content []byte) string {
	enc := base64.StdEncoding.EncodeToString(content)
	var b strings.Builder
	for len(enc) > 60 {
		b.WriteString(enc[:60])
		b.WriteByte('\n')
		enc = enc[60:]
	}
	b.WriteString(enc)
	b.WriteByte('\n')
	return b.String()
}
