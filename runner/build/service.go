package build

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
)

// A Service is one image a compose stack builds: a service's build section.
type Service struct {
	Name       string            // "<entry>-<service>", for notes and the build log
	Context    string            // the build context, absolute
	Dockerfile string            // relative to Context; "" means "Dockerfile"
	Args       map[string]string // the service's build arguments, on top of Config.BuildArgs
	Tag        string            // the image's tag
}

// Service builds a compose service's image as Entry builds an entry's: every FROM's base
// image is found on the host, pulled, or replaced by its stand-in (ImageMap, or
// arenabot/<name>:local for a FROM ${ARG}), in a rewritten copy of the Dockerfile. A
// Dockerfile that failed is not built again, nor one built before while its image is there.
func (b *Builder) Service(ctx context.Context, s Service) (string, error) {
	if s.Dockerfile == "" {
		s.Dockerfile = "Dockerfile"
	}
	again, err := b.memo.built(s.Tag)
	if err != nil {
		return "", err
	}
	if b.stillBuilt(ctx, s.Tag, again) {
		return s.Tag, nil
	}
	if !again {
		b.note(fmt.Sprintf("%s: building %s", s.Name, s.Tag))
	}
	saved := b.cfg.BuildArgs
	if len(s.Args) > 0 {
		b.cfg.BuildArgs = mergeArgs(saved, s.Args)
	}
	in, err := b.baseImages(ctx, filepath.Join(s.Context, s.Dockerfile))
	b.cfg.BuildArgs = saved
	if bi, ok := errors.AsType[*BaseImageError](err); ok {
		b.memo.setBuilt(s.Tag, bi)
		return "", bi
	}
	if err != nil {
		return "", fmt.Errorf("build %s: %w", s.Name, err)
	}
	// One turn per entry and service, whichever stack: nethttp-stack's gateway-64 and
	// gateway-h3 build the same server, which side by side compiled twice (3.5 min each in
	// a CI run) and one after the other comes from the cache.
	in.turn = "arenabot-" + s.Name
	if err := b.buildFile(ctx, s.Context, s.Dockerfile, s.Tag, s.Name, in, b.cfg.Labels); err != nil {
		return "", b.remember(s.Tag, err)
	}
	return s.Tag, b.remember(s.Tag, nil)
}

func mergeArgs(a, b map[string]string) map[string]string {
	out := make(map[string]string, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// Image finds an image a compose service runs as it is (no build): on the host, pulled, its
// stand-in in ImageMap, or arenabot/<name>:local. It returns the reference to run and, when
// a stand-in replaces the image, a note that says so; without any, a *BaseImageError.
func (b *Builder) Image(ctx context.Context, service, image string) (ref, note string, err error) {
	src, err := b.FindImage(ctx, image)
	if err != nil {
		return "", "", err
	}
	if src.PullErr == "" {
		return image, "", nil
	}
	missing := &BaseImageError{Image: image, Stage: "service " + service, Dockerfile: "the compose file", PullErr: src.PullErr}
	if src.Pair != "" {
		if !src.LocalOK {
			missing.Local, missing.Pair = src.Local, src.Pair
			return "", "", missing
		}
		return src.Local, fmt.Sprintf("image %s of service %s is not on this host and cannot be pulled; running %s instead (ARENA_IMAGE_MAP %s)", image, service, src.Local, src.Pair), nil
	}
	local := LocalBase(image)
	if ok, err := b.eng.ImageExists(ctx, local); err != nil {
		return "", "", err
	} else if ok {
		return local, fmt.Sprintf("image %s of service %s is not on this host and cannot be pulled; running its local stand-in %s", image, service, local), nil
	}
	return "", "", missing
}
