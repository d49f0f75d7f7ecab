// Package arenadata generates the arena's shared test data: the item dataset, the static
// files with their gzip and brotli twins, the Postgres seed of the database profiles, the raw
// request files the load tools send and the TLS pair every TLS profile uses (ECDSA P-256,
// self-signed for localhost).
//
// Nothing large is committed: the data comes from a deterministic generator, so Write
// produces the same bytes on every call and every machine, and SHA256SUMS (checked by the
// tests) records them. Ensure generates the tree once into a cache directory and reuses it.
//
// The tree, as it is mounted into the containers (read-only):
//
//	dataset.json          50 items, /data/dataset.json
//	dataset-large.json    6,000 items of the same shape, mounted by the arena's gateway-64
//	                      stacks as /data/dataset-large.json
//	static/<name>         20 files, each with <name>.gz and <name>.br, /data/static
//	db/seed.sql           the items (100,000 rows), users and fortune (200 rows) tables, run
//	                      by the Postgres sidecar as /docker-entrypoint-initdb.d/seed.sql
//	requests/*.raw        raw HTTP/1.1 requests for the load tools, and echo-10k.bin, the
//	                      body the 8gbit profile posts
//	large/download.bin    170 MiB of incompressible bytes, /data/large (the download profile)
//	large/page-1m.html, large/bundle-2m.js
//	                      1 MiB and 2 MiB of text that gzip compresses several-fold
//	                      (static-large)
//	certs/server.{crt,key} a self-signed pair for localhost, /certs
//	requests/gateway-64-uris.txt, requests/production-stack-*, jwt-token.txt
//	                      the compose-stack profiles' URI lists, write body and token
//	redis-seed.txt, redis-entrypoint.sh
//	                      production-stack's cache service: its entrypoint (sh
//	                      /entrypoint.sh) and the commands it seeds Redis with (/seed.txt)
package arenadata

import (
	"bufio"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// Paths inside the tree, relative to its root and slash-separated.
const (
	DatasetFile = "dataset.json"
	StaticDir   = "static"
	RequestsDir = "requests"
	CertsDir    = "certs"
	// LargeDir holds the large files of the download and static-large profiles, mounted
	// at /data/large apart from /data/static so that servers which load every static file
	// into memory at start do not hold 170 MB for profiles that never ask for it.
	LargeDir = "large"
	CertFile = CertsDir + "/server.crt" // PEM certificate
	KeyFile  = CertsDir + "/server.key" // PEM PKCS#8 private key
)

// generatorVersion is part of Ensure's cache key. The committed checksums are the other
// part, so a change to the output (go test ./arenadata -update rewrites SHA256SUMS)
// changes the key by itself; bump this for changes the checksums do not see, such as file
// modes.
//
// Version 2 adds the large/ directory (a new mount point): its files change the checksums
// too, so the bump only makes the change explicit.
const generatorVersion = "2"

// sums is SHA256SUMS as committed: the checksum of every file Write produces.
//
//go:embed SHA256SUMS
var sums []byte

// A file is one generated file: its slash-separated path in the tree and a function that
// writes its contents.
type file struct {
	path  string
	write func(w io.Writer) error
}

// tree returns every file of the tree, sorted by path. It only builds closures; contents
// are produced when the write functions run.
func tree() []file {
	var fs []file
	fs = append(fs, file{DatasetFile, writeDataset})
	fs = append(fs, file{DatasetLargeFile, writeDatasetLarge})
	fs = append(fs, file{DBSeedFile, writeSeed})
	fs = append(fs, staticFiles()...)
	fs = append(fs, requestFiles()...)
	fs = append(fs, certFiles()...)
	fs = append(fs, largeFiles()...)
	fs = append(fs, stackFiles()...)
	slices.SortFunc(fs, func(a, b file) int { return strings.Compare(a.path, b.path) })
	return fs
}

// Files lists the relative, slash-separated paths Write produces, sorted.
func Files() []string {
	var paths []string
	for _, f := range tree() {
		paths = append(paths, f.path)
	}
	return paths
}

// Write materializes the whole data tree into dir (created if needed). The output is
// byte-identical on every call and every machine. Files are world-readable, so containers
// that run as any user can read the read-only mounts.
func Write(dir string) error {
	// MkdirAll and OpenFile are subject to the umask, so modes are set explicitly: the
	// mounts must be readable by whatever user the container runs as.
	for _, d := range []string{".", StaticDir, DBDir, RequestsDir, CertsDir, LargeDir} {
		d = filepath.Join(dir, d)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("write arena data: %w", err)
		}
		if err := os.Chmod(d, 0o755); err != nil {
			return fmt.Errorf("write arena data: %w", err)
		}
	}
	files := tree()
	// The slowest files (brotli at quality 11, the 170 MiB download) go first, so they
	// overlap with the rest.
	slices.SortStableFunc(files, func(a, b file) int { return cost(b.path) - cost(a.path) })
	jobs := make(chan file)
	errs := make(chan error, len(files))
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(files)) {
		wg.Go(func() {
			for f := range jobs {
				errs <- writeFile(dir, f)
			}
		})
	}
	for _, f := range files {
		jobs <- f
	}
	close(jobs)
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	return errors.Join(all...)
}

// cost estimates how long a file takes to generate, in arbitrary units.
func cost(path string) int {
	if path == LargeDir+"/"+DownloadFile {
		return DownloadSize / 64 // about as long as the largest brotli twin
	}
	if name, ok := strings.CutSuffix(path, ".br"); ok {
		return staticSize(filepath.Base(name))
	}
	return 0
}

func writeFile(dir string, f file) error {
	name := filepath.Join(dir, filepath.FromSlash(f.path))
	out, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	bw := bufio.NewWriterSize(out, 256<<10)
	err = f.write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = out.Chmod(0o644)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	return nil
}

// cacheKey names the cache directory of this generator's output: a hash of the generator
// version and of the committed checksums, so any change to the output changes the key.
func cacheKey() string {
	h := sha256.New()
	fmt.Fprintf(h, "arenadata %s\n", generatorVersion)
	h.Write(sums)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

var ensureMu sync.Mutex

// writeTree is Write; tests of Ensure's caching replace it with something cheaper.
var writeTree = Write

// Ensure returns the absolute path of a directory holding the data tree. The first call
// generates it into cacheRoot/<hash of the generator version>, writing to a temporary
// directory and renaming it into place, so a directory that exists is complete; later
// calls, from this process or another, reuse it.
func Ensure(cacheRoot string) (string, error) {
	ensureMu.Lock()
	defer ensureMu.Unlock()

	root, err := filepath.Abs(cacheRoot)
	if err != nil {
		return "", fmt.Errorf("arena data cache: %w", err)
	}
	dir := filepath.Join(root, cacheKey())
	if isDir(dir) {
		return dir, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("arena data cache: %w", err)
	}
	tmp, err := os.MkdirTemp(root, ".tmp-"+cacheKey()+"-")
	if err != nil {
		return "", fmt.Errorf("arena data cache: %w", err)
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	if err := writeTree(tmp); err != nil {
		return "", fmt.Errorf("generate arena data: %w", err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp makes it 0700
		return "", fmt.Errorf("arena data cache: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another process renamed its copy into place first; the two are identical.
		if isDir(dir) {
			return dir, nil
		}
		return "", fmt.Errorf("arena data cache: %w", err)
	}
	return dir, nil
}

func isDir(name string) bool {
	fi, err := os.Stat(name)
	return err == nil && fi.IsDir()
}
