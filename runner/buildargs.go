package runner

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"os"
	"path"
	"regexp"
	"strings"
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

var (
	argLine  = regexp.MustCompile(`(?i)^\s*ARG\s+([A-Za-z_][A-Za-z0-9_]*)(?:=(\S+))?\s*$`)
	fromLine = regexp.MustCompile(`(?i)^\s*FROM\s+(?:--platform=\S+\s+)?\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?(?:\s+AS\s+\S+)?\s*$`)
)

// buildArgs returns the build arguments for a Dockerfile: the configured ones, plus a local
// stand-in for every base image that comes from a build argument, is missing on the host,
// and has an arenabot/<name>:local image. A missing base image without a stand-in is an error
// that says how to make one, instead of a pull that cannot succeed.
func (b *Bencher) buildArgs(ctx context.Context, dockerfile string) (map[string]string, error) {
	args := maps.Clone(b.cfg.BuildArgs)
	if args == nil {
		args = map[string]string{}
	}
	f, err := os.Open(dockerfile)
	if err != nil {
		return nil, fmt.Errorf("no Dockerfile: %w; every entry needs frameworks/<name>/Dockerfile", err)
	}
	defer f.Close()
	defaults := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if m := argLine.FindStringSubmatch(line); m != nil && m[2] != "" {
			if _, seen := defaults[m[1]]; !seen {
				defaults[m[1]] = strings.Trim(m[2], `"'`)
			}
			continue
		}
		m := fromLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		arg := m[1]
		image, given := args[arg]
		if !given {
			image = defaults[arg]
		}
		if image == "" || image == "scratch" {
			continue
		}
		ok, err := b.eng.ImageExists(ctx, image)
		if err != nil {
			return nil, err
		}
		if ok {
			continue
		}
		local := LocalBase(image)
		if ok, err := b.eng.ImageExists(ctx, local); err != nil {
			return nil, err
		} else if ok && !given {
			args[arg] = local
			b.note(fmt.Sprintf("base image %s is not on this host; using its local stand-in %s (%s=%s)", image, local, arg, local))
			continue
		}
		return nil, fmt.Errorf("base image %s (%s) is not on this host and no registry may be reachable; run deploy/base-images.sh to make %s, or pass --build-arg %s=<a local image>", image, arg, local, arg)
	}
	return args, sc.Err()
}
