package build

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/arenabot/arenabot/runner/host"
)

// TurnsDir holds one lock file per image name: builds of one entry (or one stack service)
// on this host take turns, whichever process asks, so that a second build of the same
// source waits for the first and then comes from Docker's layer cache instead of compiling
// the same code beside it (the classic builder shares no work between two builds in
// flight). Builds of different entries still run side by side.
var TurnsDir = filepath.Join(os.TempDir(), "arenabot-builds")

// buildTurn takes the build lock of name, waiting while another build of it runs on this
// host; waiting is called once if it has to wait. Cancelling ctx ends the wait.
func buildTurn(ctx context.Context, name string, waiting func()) (release func(), err error) {
	if err := os.MkdirAll(TurnsDir, 0o777); err != nil {
		return nil, fmt.Errorf("build lock: %w", err)
	}
	path := filepath.Join(TurnsDir, turnFile(name))
	f, err := host.LockFile(ctx, path, waiting)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, fmt.Errorf("build lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}

// turnKey is the build lock's name for the image tag: an entry's images (arenabot-<name>,
// at any commit) share one, since their versions mostly share their layers and a base and
// a head of the same entry build from one source more often than not; any other image (a
// load-generator image) has its own. A stack service's build takes its entry and
// service's turn instead (Service), whichever stack's tag it builds.
func turnKey(tag string) string {
	if repo, _, _ := strings.Cut(tag, ":"); strings.HasPrefix(repo, "arenabot-") {
		return repo
	}
	return tag
}

// turnFile is name as a file name: anything but letters, digits, '.', '-' and '_' becomes
// '_'.
func turnFile(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, name) + ".lock"
}
