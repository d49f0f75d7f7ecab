package docker

import (
	"archive/tar"
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"
)

// writeContext writes the build context dir to w as an uncompressed tar: files in lexical
// order, owned by root, with no access or change times, without .git directories and
// without what dir/.dockerignore excludes. The Dockerfile (a slash path in dir) and
// .dockerignore itself are always included, as the docker CLI does. When content is not nil,
// it is written under the Dockerfile's name in place of the file's bytes (at the end when
// there is no such file).
func writeContext(w io.Writer, dir, dockerfile string, content []byte) error {
	pm, err := readIgnore(dir)
	if err != nil {
		return err
	}
	always := map[string]bool{dockerfile: true, ".dockerignore": true}

	bw := bufio.NewWriterSize(w, 256<<10)
	tw := tar.NewWriter(bw)
	wroteContent := false
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if d.Name() == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if pm != nil && !always[rel] {
			excluded, err := pm.MatchesOrParentMatches(rel)
			if err != nil {
				return fmt.Errorf(".dockerignore: %w", err)
			}
			if excluded {
				if d.IsDir() && !mayHoldIncluded(pm, rel, dockerfile) {
					return filepath.SkipDir
				}
				return nil
			}
		}
		if rel == dockerfile && content != nil {
			wroteContent = true
			return addContent(tw, rel, d, content)
		}
		return addFile(tw, p, rel, d)
	})
	if err != nil {
		return err
	}
	if content != nil && !wroteContent {
		if err := addContent(tw, dockerfile, nil, content); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return bw.Flush()
}

// readIgnore reads dir/.dockerignore; nil when there is none or it excludes nothing.
func readIgnore(dir string) (*patternmatcher.PatternMatcher, error) {
	f, err := os.Open(filepath.Join(dir, ".dockerignore"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	patterns, err := ignorefile.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf(".dockerignore: %w", err)
	}
	if len(patterns) == 0 {
		return nil, nil
	}
	pm, err := patternmatcher.New(patterns)
	if err != nil {
		return nil, fmt.Errorf(".dockerignore: %w", err)
	}
	return pm, nil
}

// mayHoldIncluded reports whether an excluded directory must still be walked: the
// Dockerfile is inside it, or an exception pattern ("!dir/keep") may re-include something
// in it.
func mayHoldIncluded(pm *patternmatcher.PatternMatcher, dir, dockerfile string) bool {
	prefix := dir + "/"
	if strings.HasPrefix(dockerfile, prefix) {
		return true
	}
	if !pm.Exclusions() {
		return false
	}
	for _, pat := range pm.Patterns() {
		if pat.Exclusion() && strings.HasPrefix(pat.String()+"/", prefix) {
			return true
		}
	}
	return false
}

// addContent writes content as the regular file rel, with the mode and time of d (the file
// it stands in for) when d is a regular file, else 0644 and no time.
func addContent(tw *tar.Writer, rel string, d fs.DirEntry, content []byte) error {
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: rel, Mode: 0o644, Size: int64(len(content))}
	if d != nil {
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if fi.Mode().IsRegular() {
			hdr.Mode = int64(fi.Mode().Perm())
			hdr.ModTime = fi.ModTime().Truncate(time.Second)
		}
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	_, err := tw.Write(content)
	return err
}

// addFile writes one directory, regular file or symlink to tw; other kinds are skipped.
func addFile(tw *tar.Writer, p, rel string, d fs.DirEntry) error {
	fi, err := d.Info()
	if err != nil {
		return err
	}
	var link string
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		if link, err = os.Readlink(p); err != nil {
			return err
		}
	case fi.IsDir(), fi.Mode().IsRegular():
	default:
		return nil // sockets, pipes, devices
	}
	hdr, err := tar.FileInfoHeader(fi, link)
	if err != nil {
		return err
	}
	hdr.Name = rel
	if fi.IsDir() {
		hdr.Name += "/"
	}
	hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname = 0, 0, "", ""
	hdr.ModTime = fi.ModTime().Truncate(time.Second)
	hdr.AccessTime, hdr.ChangeTime = time.Time{}, time.Time{}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return nil
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	n, err := io.Copy(tw, f)
	if err != nil {
		return err
	}
	if n != hdr.Size {
		return fmt.Errorf("%s changed size while being read", p)
	}
	return nil
}
