package arenadata_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"path"
	"slices"
	"testing"

	"github.com/andybalholm/brotli"

	"github.com/arenabot/arenabot/arenadata"
)

func TestStaticFiles(t *testing.T) {
	names := arenadata.StaticFiles()
	if len(names) != 20 {
		t.Fatalf("StaticFiles() has %d names, want 20: %q", len(names), names)
	}
	if !slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != 20 {
		t.Errorf("StaticFiles() is not sorted and unique: %q", names)
	}
	// validate checks these three by name and Content-Type; the profiles probe reset.css.
	for _, n := range []string{"reset.css", "app.js", "manifest.json"} {
		if !slices.Contains(names, n) {
			t.Errorf("StaticFiles() lacks %s", n)
		}
	}
	exts := map[string]bool{}
	for _, n := range names {
		exts[path.Ext(n)] = true
	}
	for _, e := range []string{".css", ".js", ".html", ".svg", ".json", ".woff2", ".webp"} {
		if !exts[e] {
			t.Errorf("no static file with extension %s", e)
		}
	}
}

// binaryExt are the extensions of the static files that are already compressed.
var binaryExt = map[string]bool{".woff2": true, ".webp": true}

func TestStaticContents(t *testing.T) {
	dir := tree(t)
	total := 0
	for _, name := range arenadata.StaticFiles() {
		t.Run(name, func(t *testing.T) {
			orig := readFile(t, dir, "static/"+name)
			total += len(orig)
			if len(orig) < 500 || len(orig) > 300<<10 {
				t.Errorf("size %d, want between 500 B and 300 KiB", len(orig))
			}

			gz := readFile(t, dir, "static/"+name+".gz")
			zr, err := gzip.NewReader(bytes.NewReader(gz))
			if err != nil {
				t.Fatalf(".gz: %v", err)
			}
			if zr.Name != "" || !zr.ModTime.IsZero() {
				t.Errorf(".gz header has name %q, mtime %v; want none", zr.Name, zr.ModTime)
			}
			if got, err := io.ReadAll(zr); err != nil || !bytes.Equal(got, orig) {
				t.Errorf(".gz decodes to %d bytes (err %v), want the %d of the original", len(got), err, len(orig))
			}

			br := readFile(t, dir, "static/"+name+".br")
			if got, err := io.ReadAll(brotli.NewReader(bytes.NewReader(br))); err != nil || !bytes.Equal(got, orig) {
				t.Errorf(".br decodes to %d bytes (err %v), want the %d of the original", len(got), err, len(orig))
			}

			ratio := float64(len(gz)) / float64(len(orig))
			if binaryExt[path.Ext(name)] {
				if ratio < 0.95 {
					t.Errorf("binary file compresses to %.0f%%; real fonts and images do not compress", 100*ratio)
				}
			} else {
				if ratio > 0.6 {
					t.Errorf("text file compresses only to %.0f%%", 100*ratio)
				}
				if len(br) >= len(gz) {
					t.Errorf(".br (%d bytes) not smaller than .gz (%d bytes)", len(br), len(gz))
				}
			}
		})
	}
	if total > 2<<20 {
		t.Errorf("static files total %d bytes; keep them modest (brotli at quality 11 is slow)", total)
	}

	var manifest map[string]any
	if err := json.Unmarshal(readFile(t, dir, "static/manifest.json"), &manifest); err != nil {
		t.Errorf("manifest.json: %v", err)
	}
}
