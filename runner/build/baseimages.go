package build

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/arenabot/arenabot/runner/docker"
)

// LocalBase is the tag of the local stand-in for a public base image: the image's name
// without registry and tag, under arenabot/, tagged local ("golang:1.26-bookworm" →
// "arenabot/golang:local"). deploy/base-images.sh makes them on hosts without a registry.
func LocalBase(image string) string {
	name := image
	if i := strings.LastIndexByte(name, '@'); i >= 0 {
		name = name[:i]
	}
	if i := strings.LastIndexByte(name, ':'); i > strings.LastIndexByte(name, '/') {
		name = name[:i]
	}
	return "arenabot/" + path.Base(name) + ":local"
}

// A buildInput is what a build gets besides its context directory.
type buildInput struct {
	args map[string]string // the build arguments
	// dockerfile, when not nil, is the Dockerfile to build in place of the one on disk:
	// the same file with substituted base images.
	dockerfile []byte
	notes      []string // one line per substituted base image, for the build log
	// turn, when not "", is the build lock's name (buildTurn) in place of turnKey(tag).
	turn string
}

// baseImages reads a Dockerfile and decides where the base image of each of its FROMs comes
// from (every stage; literal or from the global ARGs, as the configured build arguments
// set them; scratch and earlier stages are not images): the image on this host; else the
// image pulled from its registry; else its stand-in in Config.ImageMap, built FROM in a
// rewritten copy of the Dockerfile; else, for a FROM ${ARG} whose ARG the configuration
// does not set, arenabot/<name>:local (LocalBase) passed as that ARG. A base image that has
// none of these is a *BaseImageError. The Dockerfile on disk is never changed.
func (b *Builder) baseImages(ctx context.Context, dockerfile string) (buildInput, error) {
	in := buildInput{args: maps.Clone(b.cfg.BuildArgs)}
	if in.args == nil {
		in.args = map[string]string{}
	}
	data, err := readDockerfile(dockerfile)
	if err != nil {
		return buildInput{}, fmt.Errorf("no Dockerfile: %w; every entry needs frameworks/<name>/Dockerfile", err)
	}
	froms := parseFroms(data, b.cfg.BuildArgs)
	mapped := map[int]string{}
	for _, f := range froms {
		if f.Image == "" {
			continue
		}
		src, err := b.FindImage(ctx, f.Image)
		if err != nil {
			return buildInput{}, err
		}
		if src.PullErr == "" {
			continue
		}
		missing := &BaseImageError{Image: f.Image, Stage: f.StageDesc(), Line: f.Line, Dockerfile: b.shownPath(dockerfile), PullErr: src.PullErr}
		if src.Pair != "" {
			if !src.LocalOK {
				missing.Local, missing.Pair = src.Local, src.Pair
				return buildInput{}, missing
			}
			mapped[f.Stage] = src.Local
			in.notes = append(in.notes, fmt.Sprintf("base image %s (stage %s) is not on this host and cannot be pulled; building FROM %s instead (ARENA_IMAGE_MAP %s)", f.Image, f.StageDesc(), src.Local, src.Pair))
			continue
		}
		local := LocalBase(f.Image)
		_, given := b.cfg.BuildArgs[f.Arg]
		exists := b.eng.ImageExists
		if f.Arg != "" && !given {
			exists = b.HaveLocal // the stand-in would be used: make it if it can be made
		}
		hasLocal, err := exists(ctx, local)
		if err != nil {
			return buildInput{}, err
		}
		if f.Arg != "" && !given && hasLocal {
			in.args[f.Arg] = local
			in.notes = append(in.notes, fmt.Sprintf("base image %s is not on this host; using its local stand-in %s (%s=%s)", f.Image, local, f.Arg, local))
			continue
		}
		if hasLocal {
			missing.Suggest = local
		}
		missing.Arg = f.Arg
		return buildInput{}, missing
	}
	if len(mapped) > 0 {
		in.dockerfile = rewriteFroms(data, froms, mapped)
	}
	for _, n := range in.notes {
		b.note(n)
	}
	return in, nil
}

// readDockerfile reads a Dockerfile through an os.Root of its directory: a Dockerfile that
// is a symbolic link out of it (to /etc/passwd, say) is not read, so no line of a host file
// reaches a FROM, a note or an error. (compose.Load refuses such a file before any build;
// this is the entry's own Dockerfile's check, and a second one for the services'.)
func readDockerfile(p string) ([]byte, error) {
	r, err := os.OpenRoot(filepath.Dir(p))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.ReadFile(filepath.Base(p))
}

// HaveLocal says whether the local stand-in image is on the host, making it first when it is
// missing and Config.MakeStandIn knows it (tried once by a Builder and its siblings: a
// failure is noted once, and the stand-in is missing). The error is the
// engine's or ctx's.
func (b *Builder) HaveLocal(ctx context.Context, image string) (bool, error) {
	ok, err := b.eng.ImageExists(ctx, image)
	if err != nil || ok || b.cfg.MakeStandIn == nil {
		return ok, err
	}
	m := b.memo
	lock := m.makingLock(image)
	lock.Lock()
	defer lock.Unlock()
	m.mu.Lock()
	tried := m.standIns[image]
	m.standIns[image] = true
	m.mu.Unlock()
	if tried { // a sibling made it, or could not, meanwhile
		return b.eng.ImageExists(ctx, image)
	}
	b.note(fmt.Sprintf("making the stand-in %s on first use (deploy/base-images.sh; the first one takes a minute or two)", image))
	start := time.Now()
	made, err := b.cfg.MakeStandIn(ctx, image, b.note)
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	switch {
	case err != nil:
		b.note(err.Error())
		return false, nil
	case !made:
		return false, nil
	}
	b.note(fmt.Sprintf("made the stand-in %s in %s", image, time.Since(start).Round(time.Second)))
	return b.eng.ImageExists(ctx, image)
}

// An ImageSource says where an image this host may lack comes from.
type ImageSource struct {
	// PullErr is "" when the image itself is on the host (pulled just now, perhaps); else
	// why the pull failed, in a few words.
	PullErr string
	// Local and Pair, when the image is missing, are its stand-in in Config.ImageMap and the
	// pair that names it ("" when the map has none); LocalOK says the stand-in is on the host.
	Local, Pair string
	LocalOK     bool
}

// FindImage finds an image the way every image the runner needs is found (base images, the
// sidecars'): the image on this host; else the image pulled from its registry; else its
// stand-in in Config.ImageMap. The error is the engine's or ctx's.
func (b *Builder) FindImage(ctx context.Context, image string) (ImageSource, error) {
	pullErr, err := b.haveImage(ctx, image)
	if err != nil || pullErr == "" {
		return ImageSource{}, err
	}
	src := ImageSource{PullErr: pullErr}
	if local, pair, ok := b.cfg.ImageMap.Lookup(image); ok {
		src.Local, src.Pair = local, pair
		if src.LocalOK, err = b.HaveLocal(ctx, local); err != nil {
			return ImageSource{}, err
		}
	}
	return src, nil
}

// haveImage makes sure image is on the host: it is there, or it is pulled now. When it can
// be neither, it returns why the pull failed, in a few words. A pull that failed is not
// tried again by this Builder. The error is the engine's or ctx's.
func (b *Builder) haveImage(ctx context.Context, image string) (pullErr string, err error) {
	if ok, err := b.eng.ImageExists(ctx, image); err != nil || ok {
		return "", err
	}
	b.memo.mu.Lock()
	why, failed := b.memo.unpullable[image]
	b.memo.mu.Unlock()
	if failed {
		return why, nil
	}
	start := time.Now()
	err = b.eng.PullImage(ctx, image)
	if err == nil {
		b.cfg.Log.Info("base image pulled", "image", image, "duration", time.Since(start).Round(time.Millisecond))
		return "", nil
	}
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	why = shortPullErr(err)
	b.memo.mu.Lock()
	b.memo.unpullable[image] = why
	b.memo.mu.Unlock()
	b.cfg.Log.Info("base image cannot be pulled", "image", image, "err", err)
	return why, nil
}

// lookupOn drops the resolver's address from a failed DNS lookup.
var lookupOn = regexp.MustCompile(`lookup (\S+) on \S+: `)

// shortPullErr words a failed pull in a few words: "lookup registry-1.docker.io: no such host".
func shortPullErr(err error) string {
	msg := err.Error()
	if pe, ok := errors.AsType[*docker.PullError](err); ok {
		msg = pe.Msg
	}
	if _, after, ok := strings.Cut(msg, "dial tcp: "); ok {
		msg = after
	}
	msg = lookupOn.ReplaceAllString(msg, "lookup $1: ")
	if utf8.RuneCountInString(msg) > 120 {
		msg = string([]rune(msg)[:119]) + "…"
	}
	return msg
}

// shownPath is a Dockerfile's path as messages show it: relative to the repository when it
// is inside it ("frameworks/x/Dockerfile").
func (b *Builder) shownPath(p string) string {
	root, err1 := filepath.Abs(b.cfg.Root)
	abs, err2 := filepath.Abs(p)
	if b.cfg.Root == "" || err1 != nil || err2 != nil {
		return p
	}
	if rel, err := filepath.Rel(root, abs); err == nil && filepath.IsLocal(rel) {
		return filepath.ToSlash(rel)
	}
	return p
}

// A BaseImageError is a base image of an entry's Dockerfile that this host neither has nor
// can pull, and that no local stand-in replaces. Nothing in the entry is broken: the host
// lacks the image, and the operator's fix is to load it or map it to a local image.
type BaseImageError struct {
	Image      string // the base image after ARG expansion ("alpine:3.23")
	Stage      string // the stage of its FROM: its number, and its name when it has one (`1 "build"`)
	Line       int    // the FROM's line in the Dockerfile
	Dockerfile string // the Dockerfile, relative to the repository when inside it
	PullErr    string // why the pull failed, in a few words
	// Local and Pair are set when ARENA_IMAGE_MAP maps the image to a stand-in that is not
	// on the host either.
	Local, Pair string
	Arg         string // the build argument the FROM takes its image from, if any
	Suggest     string // a local image to name in the fix (arenabot/<name>:local when it exists)
}

func (e *BaseImageError) Error() string {
	where := fmt.Sprintf("base image %s (stage %s, line %d of %s) is not on this host and cannot be pulled (%s)", e.Image, e.Stage, e.Line, e.Dockerfile, e.PullErr)
	if e.Local != "" {
		return fmt.Sprintf("%s, and its stand-in %s (ARENA_IMAGE_MAP %s) is not on this host either; make it (deploy/base-images.sh makes arenabot/golang:local and arenabot/debian:local) or load it (docker load), or map %s to an image this host has", where, e.Local, e.Pair, MapPattern(e.Image))
	}
	local := "<local image>"
	if e.Suggest != "" {
		local = e.Suggest
	}
	fix := fmt.Sprintf("load it (docker load) or map it to a local image with ARENA_IMAGE_MAP=%s=%s", MapPattern(e.Image), local)
	if e.Arg != "" {
		fix += fmt.Sprintf(" or --build-arg %s=%s", e.Arg, local)
	}
	return where + "; " + fix + " (deploy/base-images.sh prints the map for the images it makes)"
}

// Short is the table cell.
func (e *BaseImageError) Short() string {
	if e.Local != "" {
		return "stand-in missing: " + e.Local
	}
	return "base image missing: " + e.Image
}
