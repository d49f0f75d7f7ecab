package githubtest

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// blobSHA is git's object id of a blob.
func blobSHA(content []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(content))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}

// treeSHA is a stable id of a flat tree (not git's, which hashes nested trees).
func treeSHA(entries map[string]treeEntry) string {
	h := sha1.New()
	h.Write([]byte("tree\n"))
	for _, p := range slices.Sorted(maps.Keys(entries)) {
		e := entries[p]
		fmt.Fprintf(h, "%s %s %s\t%s\n", e.Mode, e.Type, e.SHA, p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// commitSHA is a stable id of a commit's content.
func commitSHA(tree string, parents []string, message string) string {
	h := sha1.New()
	fmt.Fprintf(h, "commit\ntree %s\n", tree)
	for _, p := range parents {
		fmt.Fprintf(h, "parent %s\n", p)
	}
	fmt.Fprintf(h, "\n%s", message)
	return hex.EncodeToString(h.Sum(nil))
}

// storeTree stores the blobs and the tree of a set of files and returns the tree SHA.
func storeTree(r *repo, files map[string][]byte) string {
	entries := map[string]treeEntry{}
	for p, c := range files {
		sha := blobSHA(c)
		r.blobs[sha] = c
		entries[p] = treeEntry{Mode: "100644", Type: "blob", SHA: sha}
	}
	sha := treeSHA(entries)
	r.trees[sha] = entries
	return sha
}

// ensureCommit returns the commit sha of r, creating an object that stands for a commit
// made outside the API (a PR head) when it is unknown; its parent is parent when not "".
func (s *Server) ensureCommit(r *repo, sha, parent string) *commitObj {
	if sha == "" {
		return nil
	}
	if c, ok := r.commits[sha]; ok {
		return c
	}
	c := &commitObj{sha: sha, message: "commit " + sha, date: s.now(), synthetic: true}
	if parent != "" && parent != sha {
		c.parents = []string{parent}
	}
	r.commits[sha] = c
	treeOf(r, c)
	return c
}

// treeOf returns the tree SHA of c. A commit that stands for an outside commit takes the
// files added for its SHA with AddFile, whenever they were added.
func treeOf(r *repo, c *commitObj) string {
	if c.synthetic {
		if files, ok := r.files[c.sha]; ok || c.tree == "" {
			c.tree = storeTree(r, files)
		}
	}
	return c.tree
}

// flatten returns the files of a tree.
func flatten(r *repo, tree string) map[string][]byte {
	out := map[string][]byte{}
	for p, e := range r.trees[tree] {
		out[p] = r.blobs[e.SHA]
	}
	return out
}

// resolveFiles returns the files of repo at ref: a branch, a commit SHA or a ref given to
// AddFile.
func resolveFiles(r *repo, ref string) (map[string][]byte, bool) {
	if ref == "" {
		ref = DefaultBranch
	}
	sha := ref
	if target, ok := r.refs[strings.TrimPrefix(ref, "refs/heads/")]; ok {
		sha = target
	}
	if f, ok := r.files[sha]; ok {
		return f, true
	}
	if c, ok := r.commits[sha]; ok {
		return flatten(r, treeOf(r, c)), true
	}
	f, ok := r.files[ref]
	return f, ok
}

// isAncestor reports whether old is new or one of its ancestors.
func isAncestor(r *repo, old, new string) bool {
	seen := map[string]bool{}
	stack := []string{new}
	for len(stack) > 0 {
		sha := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if sha == old {
			return true
		}
		if seen[sha] {
			continue
		}
		seen[sha] = true
		if c, ok := r.commits[sha]; ok {
			stack = append(stack, c.parents...)
		}
	}
	return false
}
