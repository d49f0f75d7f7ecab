package build

import (
	"fmt"
	"strings"

	"github.com/distribution/reference"
)

// An ImageMap names local stand-ins for base images that a host without a registry cannot
// pull (ARENA_IMAGE_MAP, --image-map): "golang:*=arenabot/golang:local,alpine:*=arenabot/debian:local".
// A base image that is neither on the host nor pullable is built FROM its stand-in instead,
// the entry's Dockerfile left as it is. The zero value maps nothing.
type ImageMap struct {
	pairs []imagePair
}

// An imagePair is one IMAGE=LOCAL of an ImageMap.
type imagePair struct {
	text     string // the pair as given, "golang:*=arenabot/golang:local"
	name     string // IMAGE's repository, normalised ("docker.io/library/golang")
	tag      string // IMAGE's tag ("latest" when it has none), or the tag prefix before *
	digest   string // IMAGE's digest, when it names one
	wildcard bool   // IMAGE ended in *: any tag starting with tag
	local    string // LOCAL, as given
}

// imageMapForm is the expected form, quoted by every parse error.
const imageMapForm = "want IMAGE=LOCAL pairs, comma separated, where IMAGE may end in * to match any tag (for example golang:*=arenabot/golang:local,alpine:*=arenabot/debian:local)"

// ParseImageMap parses comma-separated IMAGE=LOCAL pairs. IMAGE is an image reference as a
// FROM names it ("golang:1.26-alpine", "docker.io/library/golang:1.26-alpine" is the same;
// without a tag it means :latest); IMAGE may end in * to match any tag ("golang:*") or any
// tag with a prefix ("golang:1.26-*"). LOCAL is the image on this host to build FROM
// instead. Empty pairs are ignored, so "" is the empty map. A malformed pair is an error
// that names it and the expected form.
func ParseImageMap(s string) (ImageMap, error) {
	var m ImageMap
	seen := map[string]string{}
	for raw := range strings.SplitSeq(s, ",") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		p, err := parseImagePair(raw)
		if err != nil {
			return ImageMap{}, fmt.Errorf("image map pair %q: %v; %s", raw, err, imageMapForm)
		}
		key := p.name + ":" + p.tag + "@" + p.digest
		if p.wildcard {
			key += "*"
		}
		if prev, ok := seen[key]; ok {
			return ImageMap{}, fmt.Errorf("image map pair %q maps the same images as %q; give each IMAGE once", raw, prev)
		}
		seen[key] = raw
		m.pairs = append(m.pairs, p)
	}
	return m, nil
}

func parseImagePair(raw string) (imagePair, error) {
	img, local, ok := strings.Cut(raw, "=")
	img, local = strings.TrimSpace(img), strings.TrimSpace(local)
	switch {
	case !ok:
		return imagePair{}, fmt.Errorf(`no "="`)
	case img == "":
		return imagePair{}, fmt.Errorf("no IMAGE before the =")
	case local == "":
		return imagePair{}, fmt.Errorf("no LOCAL after the =")
	case strings.Contains(local, "*"):
		return imagePair{}, fmt.Errorf("LOCAL %s has a *; LOCAL names one image", local)
	}
	if _, err := reference.ParseNormalizedNamed(local); err != nil {
		return imagePair{}, fmt.Errorf("LOCAL %s is not an image reference (%v)", local, err)
	}
	p := imagePair{text: img + "=" + local, local: local}
	if prefix, ok := strings.CutSuffix(img, "*"); ok {
		i := strings.LastIndexByte(prefix, ':')
		if i < 0 || i < strings.LastIndexByte(prefix, '/') || strings.Contains(prefix, "*") || strings.Contains(prefix, "@") {
			return imagePair{}, fmt.Errorf("IMAGE %s: a * may only end the tag (golang:*, golang:1.26-*)", img)
		}
		named, err := reference.ParseNormalizedNamed(prefix[:i])
		if err != nil {
			return imagePair{}, fmt.Errorf("IMAGE %s is not an image reference (%v)", img, err)
		}
		if tag := prefix[i+1:]; tag != "" {
			if _, err := reference.WithTag(named, tag); err != nil {
				return imagePair{}, fmt.Errorf("IMAGE %s: %q does not begin a tag (%v)", img, tag, err)
			}
		}
		p.name, p.tag, p.wildcard = named.Name(), prefix[i+1:], true
		return p, nil
	}
	if strings.Contains(img, "*") {
		return imagePair{}, fmt.Errorf("IMAGE %s: a * may only end the tag (golang:*, golang:1.26-*)", img)
	}
	named, err := reference.ParseNormalizedNamed(img)
	if err != nil {
		return imagePair{}, fmt.Errorf("IMAGE %s is not an image reference (%v)", img, err)
	}
	p.name = named.Name()
	if d, ok := named.(reference.Digested); ok {
		p.digest = d.Digest().String()
	} else {
		p.tag = reference.TagNameOnly(named).(reference.Tagged).Tag()
	}
	return p, nil
}

// Lookup returns the stand-in for image and the pair that names it. An exact IMAGE wins
// over one with a *, a longer tag prefix over a shorter one, and an earlier pair over a
// later one.
func (m ImageMap) Lookup(image string) (local, pair string, ok bool) {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return "", "", false
	}
	var tag, digest string
	if t, ok := named.(reference.Tagged); ok {
		tag = t.Tag()
	}
	if d, ok := named.(reference.Digested); ok {
		digest = d.Digest().String()
	} else if tag == "" {
		tag = "latest"
	}
	best := -1
	var found imagePair
	for _, p := range m.pairs {
		if p.name != named.Name() {
			continue
		}
		score := -1
		switch {
		case p.wildcard:
			if strings.HasPrefix(tag, p.tag) {
				score = len(p.tag)
			}
		case p.digest != "":
			if p.digest == digest {
				score = 1 << 20
			}
		case p.tag == tag:
			score = 1 << 20
		}
		if score > best {
			best, found = score, p
		}
	}
	if best < 0 {
		return "", "", false
	}
	return found.local, found.text, true
}

// Len is the number of pairs.
func (m ImageMap) Len() int { return len(m.pairs) }

// String is the map as ParseImageMap reads it.
func (m ImageMap) String() string {
	texts := make([]string, len(m.pairs))
	for i, p := range m.pairs {
		texts[i] = p.text
	}
	return strings.Join(texts, ",")
}

// MapPattern is the IMAGE of a pair that maps every tag of image's repository, in the
// short form a FROM uses ("docker.io/library/alpine:3.23" → "alpine:*").
func MapPattern(image string) string {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return image
	}
	return reference.FamiliarName(named) + ":*"
}
