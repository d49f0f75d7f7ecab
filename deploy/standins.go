// Package deploy is what runs arenabot for real (the units, the compose file, the GitHub
// App manifest, the environment examples) and base-images.sh, which makes the local
// stand-ins for public base images on a host without a registry. The script is embedded,
// so a runner can make a stand-in it needs on first use (MakeStandIn) wherever it runs.
package deploy

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
)

//go:embed base-images.sh
var baseImages []byte

// StandIns are the names of the images base-images.sh makes: arenabot/<name>:local.
var StandIns = []string{"debian", "golang", "postgres", "redis", "nginx", "caddy"}

// TagEnv tags the stand-ins other than local, in the script and in MakeStandIn (for tests).
const TagEnv = "ARENA_STANDIN_TAG"

// standInName returns the script's name for image when image is one of its stand-ins
// ("arenabot/golang:local" → "golang"), under the tag TagEnv sets (local by default).
func standInName(image string) (string, bool) {
	tag := os.Getenv(TagEnv)
	if tag == "" {
		tag = "local"
	}
	name, ok := strings.CutPrefix(image, "arenabot/")
	if !ok {
		return "", false
	}
	name, ok = strings.CutSuffix(name, ":"+tag)
	return name, ok && slices.Contains(StandIns, name)
}

// MakeStandIn makes image when it is one of the stand-ins base-images.sh makes
// ("arenabot/golang:local"), by running the embedded script for that image alone (the first
// one also makes the shared Debian rootfs: about a minute), and passes each progress line of
// the script's own to note as it comes. made is false, with a nil error, for any other
// image. The Go stand-in it makes has no compiled standard library (ARENA_GO_STD_CACHE=no;
// the script without it adds one). It needs root (debootstrap, chroot) and the Docker CLI,
// as the script does.
func MakeStandIn(ctx context.Context, image string, note func(string)) (made bool, err error) {
	name, ok := standInName(image)
	if !ok {
		return false, nil
	}
	if os.Geteuid() != 0 {
		return false, fmt.Errorf("making the stand-in %s needs root (debootstrap, chroot): run bash deploy/base-images.sh %s as root, or run this as root", image, name)
	}
	cmd := exec.CommandContext(ctx, "bash", "-s", "--", name)
	cmd.Stdin = bytes.NewReader(baseImages)
	// The Go stand-in without the whole standard library compiled into it: half a minute
	// less before the first build starts, which then compiles only the packages it uses.
	cmd.Env = append(os.Environ(), "ARENA_GO_STD_CACHE=no")
	pr, pw := io.Pipe()
	cmd.Stderr = pw // the progress; stdout is the map line, not needed here
	var tail lastLines
	var wg sync.WaitGroup
	wg.Go(func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			tail.add(line)
			// The script's own lines; what apt, debconf and debootstrap print inside
			// the chroot is kept for the error only.
			if note != nil && strings.HasPrefix(line, "base-images: ") {
				note(line)
			}
		}
		io.Copy(io.Discard, pr)
	})
	err = cmd.Run()
	pw.Close()
	wg.Wait()
	if err != nil {
		return false, fmt.Errorf("making the stand-in %s (deploy/base-images.sh %s): %v: %s", image, name, err, tail.String())
	}
	return true, nil
}

// lastLines keeps the last few lines of a script's progress, for its error.
type lastLines struct{ lines []string }

func (l *lastLines) add(line string) {
	if l.lines = append(l.lines, line); len(l.lines) > 5 {
		l.lines = l.lines[1:]
	}
}

func (l *lastLines) String() string { return strings.Join(l.lines, " / ") }
