package githubtest

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
)

const gitDocs = "https://docs.github.com/rest/git"

// git answers the Git Data API below /repos/{o}/{r}/git/; rest starts after "git".
func (s *Server) git(r *repo, method string, rest []string, body []byte) *response {
	write := method == http.MethodPost || method == http.MethodPatch || method == http.MethodDelete
	if write && r.denyPush {
		return answer(http.StatusForbidden, map[string]any{"message": "Resource not accessible by integration",
			"documentation_url": gitDocs, "status": "403"})
	}
	kind := rest[0]
	switch {
	case kind == "blobs" && len(rest) == 1 && method == http.MethodPost:
		return s.createBlob(r, body)
	case kind == "blobs" && len(rest) == 2 && method == http.MethodGet:
		c, ok := r.blobs[rest[1]]
		if !ok {
			return notFound()
		}
		return answer(http.StatusOK, map[string]any{"sha": rest[1], "size": len(c), "encoding": "base64",
			"content": wrap64(c), "url": s.apiURL(r, "git/blobs/%s", rest[1])})
	case kind == "trees" && len(rest) == 1 && method == http.MethodPost:
		return s.createTree(r, body)
	case kind == "trees" && len(rest) == 2 && method == http.MethodGet:
		if _, ok := r.trees[rest[1]]; !ok {
			return notFound()
		}
		return answer(http.StatusOK, s.treeJSON(r, rest[1]))
	case kind == "commits" && len(rest) == 1 && method == http.MethodPost:
		return s.createCommit(r, body)
	case kind == "commits" && len(rest) == 2 && method == http.MethodGet:
		c, ok := r.commits[rest[1]]
		if !ok {
			return notFound()
		}
		return answer(http.StatusOK, s.commitJSON(r, c))
	case kind == "refs" && len(rest) == 1 && method == http.MethodPost:
		return s.createRef(r, body)
	case (kind == "ref" || kind == "refs") && len(rest) >= 3 && rest[1] == "heads":
		branch := strings.Join(rest[2:], "/")
		switch {
		case method == http.MethodGet:
			sha, ok := r.refs[branch]
			if !ok {
				return notFound()
			}
			return answer(http.StatusOK, s.refJSON(r, branch, sha))
		case kind == "refs" && method == http.MethodPatch:
			return s.updateRef(r, branch, body)
		}
	}
	return notFound()
}

func (s *Server) createBlob(r *repo, body []byte) *response {
	var in struct {
		Content  *string `json:"content"`
		Encoding string  `json:"encoding"`
	}
	if !decode(body, &in) {
		return answer(http.StatusBadRequest, errorBody("Problems parsing JSON", gitDocs))
	}
	if in.Content == nil {
		return validationFailed("Blob", "content", "missing_field", "", gitDocs)
	}
	var content []byte
	switch in.Encoding {
	case "", "utf-8":
		content = []byte(*in.Content)
	case "base64":
		c, err := base64.StdEncoding.DecodeString(*in.Content)
		if err != nil {
			return validationFailed("Blob", "content", "invalid", "content is not valid Base64", gitDocs)
		}
		content = c
	default:
		return validationFailed("Blob", "encoding", "invalid", "", gitDocs)
	}
	sha := blobSHA(content)
	r.blobs[sha] = content
	return answer(http.StatusCreated, map[string]any{"sha": sha, "url": s.apiURL(r, "git/blobs/%s", sha)})
}

func (s *Server) createTree(r *repo, body []byte) *response {
	var in struct {
		BaseTree string                       `json:"base_tree"`
		Tree     []map[string]json.RawMessage `json:"tree"`
	}
	if !decode(body, &in) {
		return answer(http.StatusBadRequest, errorBody("Problems parsing JSON", gitDocs))
	}
	entries := map[string]treeEntry{}
	if in.BaseTree != "" {
		base, ok := r.trees[in.BaseTree]
		if !ok {
			return unprocessable("base_tree is not a valid tree oid", gitDocs)
		}
		for p, e := range base {
			entries[p] = e
		}
	}
	for _, raw := range in.Tree {
		var p, mode, typ string
		json.Unmarshal(raw["path"], &p)
		json.Unmarshal(raw["mode"], &mode)
		json.Unmarshal(raw["type"], &typ)
		p = strings.Trim(p, "/")
		if p == "" {
			return validationFailed("Tree", "path", "missing_field", "", gitDocs)
		}
		if mode == "" {
			mode = "100644"
		}
		if typ == "" {
			typ = "blob"
		}
		rawSHA, hasSHA := raw["sha"]
		rawContent, hasContent := raw["content"]
		switch {
		case hasContent && string(rawContent) != "null":
			var c string
			json.Unmarshal(rawContent, &c)
			sha := blobSHA([]byte(c))
			r.blobs[sha] = []byte(c)
			entries[p] = treeEntry{Mode: mode, Type: typ, SHA: sha}
		case hasSHA && string(rawSHA) == "null":
			delete(entries, p)
			for q := range entries {
				if strings.HasPrefix(q, p+"/") {
					delete(entries, q)
				}
			}
		case hasSHA:
			var sha string
			json.Unmarshal(rawSHA, &sha)
			if _, ok := r.blobs[sha]; !ok {
				return unprocessable("tree.sha "+sha+" is not a valid blob", gitDocs)
			}
			entries[p] = treeEntry{Mode: mode, Type: typ, SHA: sha}
		default:
			return validationFailed("Tree", "sha", "missing_field", "Must supply tree.sha or tree.content", gitDocs)
		}
	}
	sha := treeSHA(entries)
	r.trees[sha] = entries
	return answer(http.StatusCreated, s.treeJSON(r, sha))
}

func (s *Server) treeJSON(r *repo, sha string) map[string]any {
	list := []any{}
	entries := r.trees[sha]
	for _, p := range sortedKeys(entries) {
		e := entries[p]
		list = append(list, map[string]any{"path": p, "mode": e.Mode, "type": e.Type, "sha": e.SHA,
			"size": len(r.blobs[e.SHA]), "url": s.apiURL(r, "git/blobs/%s", e.SHA)})
	}
	return map[string]any{"sha": sha, "url": s.apiURL(r, "git/trees/%s", sha), "tree": list, "truncated": false}
}

func (s *Server) createCommit(r *repo, body []byte) *response {
	var in struct {
		Message *string  `json:"message"`
		Tree    string   `json:"tree"`
		Parents []string `json:"parents"`
	}
	if !decode(body, &in) {
		return answer(http.StatusBadRequest, errorBody("Problems parsing JSON", gitDocs))
	}
	if in.Message == nil {
		return validationFailed("Commit", "message", "missing_field", "", gitDocs)
	}
	if _, ok := r.trees[in.Tree]; !ok {
		return unprocessable("Tree SHA does not exist", gitDocs)
	}
	for _, p := range in.Parents {
		if _, ok := r.commits[p]; !ok {
			return unprocessable("Parent SHA does not exist or is not a commit object", gitDocs)
		}
	}
	sha := commitSHA(in.Tree, in.Parents, *in.Message)
	c, ok := r.commits[sha]
	if !ok {
		c = &commitObj{sha: sha, message: *in.Message, tree: in.Tree, parents: append([]string(nil), in.Parents...), date: s.now()}
		r.commits[sha] = c
		r.created = append(r.created, sha)
	}
	return answer(http.StatusCreated, s.commitJSON(r, c))
}

func (s *Server) commitJSON(r *repo, c *commitObj) map[string]any {
	parents := []any{}
	for _, p := range c.parents {
		parents = append(parents, map[string]any{"sha": p, "url": s.apiURL(r, "git/commits/%s", p),
			"html_url": "https://github.com/" + r.owner + "/" + r.name + "/commit/" + p})
	}
	who := map[string]any{"name": strings.TrimSuffix(s.caller, "[bot]"), "email": s.caller + "@users.noreply.github.com",
		"date": c.date.Format(timeFormat)}
	tree := treeOf(r, c)
	return map[string]any{
		"sha":          c.sha,
		"node_id":      base64.StdEncoding.EncodeToString([]byte("C_" + c.sha)),
		"url":          s.apiURL(r, "git/commits/%s", c.sha),
		"html_url":     "https://github.com/" + r.owner + "/" + r.name + "/commit/" + c.sha,
		"author":       who,
		"committer":    who,
		"message":      c.message,
		"tree":         map[string]any{"sha": tree, "url": s.apiURL(r, "git/trees/%s", tree)},
		"parents":      parents,
		"verification": map[string]any{"verified": false, "reason": "unsigned", "signature": nil, "payload": nil},
	}
}

func (s *Server) refJSON(r *repo, branch, sha string) map[string]any {
	return map[string]any{
		"ref":     "refs/heads/" + branch,
		"node_id": base64.StdEncoding.EncodeToString([]byte("REF_refs/heads/" + branch)),
		"url":     s.apiURL(r, "git/refs/heads/%s", branch),
		"object":  map[string]any{"type": "commit", "sha": sha, "url": s.apiURL(r, "git/commits/%s", sha)},
	}
}

func (s *Server) createRef(r *repo, body []byte) *response {
	var in struct {
		Ref string `json:"ref"`
		SHA string `json:"sha"`
	}
	if !decode(body, &in) {
		return answer(http.StatusBadRequest, errorBody("Problems parsing JSON", gitDocs))
	}
	branch, ok := strings.CutPrefix(in.Ref, "refs/heads/")
	if !ok || branch == "" {
		return unprocessable("Reference name must start with 'refs/heads/' in this fake", gitDocs)
	}
	if _, exists := r.refs[branch]; exists {
		return unprocessable("Reference already exists", gitDocs)
	}
	if _, ok := r.commits[in.SHA]; !ok {
		return unprocessable("Object does not exist", gitDocs)
	}
	r.refs[branch] = in.SHA
	return answer(http.StatusCreated, s.refJSON(r, branch, in.SHA))
}

func (s *Server) updateRef(r *repo, branch string, body []byte) *response {
	var in struct {
		SHA   string `json:"sha"`
		Force bool   `json:"force"`
	}
	if !decode(body, &in) {
		return answer(http.StatusBadRequest, errorBody("Problems parsing JSON", gitDocs))
	}
	cur, ok := r.refs[branch]
	if !ok {
		return unprocessable("Reference does not exist", gitDocs)
	}
	if _, ok := r.commits[in.SHA]; !ok {
		return unprocessable("Object does not exist", gitDocs)
	}
	if !in.Force && !isAncestor(r, cur, in.SHA) {
		return unprocessable("Update is not a fast forward", gitDocs)
	}
	r.refs[branch] = in.SHA
	// A push to a PR's head branch moves the PR.
	for _, base := range s.repos {
		for _, pr := range base.prs {
			if pr.HeadRef == branch && s.headRepo(base, pr, false) == r {
				pr.HeadSHA = in.SHA
			}
		}
	}
	return answer(http.StatusOK, s.refJSON(r, branch, in.SHA))
}
