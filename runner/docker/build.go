package docker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/build"

	"github.com/arenabot/arenabot/text"
)

// tailLines is how many log lines a BuildError keeps.
const tailLines = 20

// BuildOptions says what to build.
type BuildOptions struct {
	// ContextDir is the build context. The driver tars it, leaving out .git and what the
	// .dockerignore in it excludes (the Dockerfile and .dockerignore are always sent).
	ContextDir string
	// Dockerfile is the Dockerfile's path relative to ContextDir; "" means "Dockerfile".
	Dockerfile string
	// DockerfileContent, when not nil, is sent in the context under the Dockerfile's name in
	// place of the file's own bytes (a Dockerfile with substituted base images); the file
	// itself is neither read nor changed, and need not exist.
	DockerfileContent []byte
	// Tag names the image ("arenabot/gin:latest"); "" leaves it untagged.
	Tag       string
	BuildArgs map[string]string
	Labels    map[string]string // labels of the image
	// NetworkMode is the network of the RUN steps; "" is the daemon's default (bridge).
	// "host" lets them reach the network on hosts whose bridge is firewalled.
	NetworkMode string
	// CPUShares is the build's weight against the host's other work (cgroup CPU shares: 1024
	// is the daemon's default, which 0 keeps); a low weight makes a build that is not in a
	// hurry yield the CPUs to one that is.
	CPUShares int64
	// Memory limits the memory of each RUN step's container, swap included; 0 means no
	// limit. A step past it is killed by the kernel (exit code 137).
	Memory int64
	// CgroupParent is the cgroup the RUN steps' containers are made in ("/arenabot-builds"
	// on the cgroupfs driver); "" is the daemon's default. The classic builder has no pids
	// limit of its own: a parent whose pids.max is set bounds the processes of every build
	// under it together (cgroup.PidsParent makes one).
	CgroupParent string
	// Log receives every build log line as it arrives, without ANSI escapes, each ending in
	// one newline; nil discards them. Write errors are ignored.
	Log io.Writer
}

// A BuildError is a build that the daemon ran and that failed (a failing step, a bad
// Dockerfile), or whose output made no image.
type BuildError struct {
	Tag  string   // the tag asked for
	Msg  string   // the daemon's message, one line
	Tail []string // the last lines of the build log (at most 20)
}

func (e *BuildError) Error() string { return "build " + e.Tag + ": " + e.Msg }

// Build builds an image with the classic builder and returns its ID ("sha256:…").
// A build that fails returns a *BuildError; other errors (the context cannot be read, the
// daemon cannot be reached, ctx ends) are returned as they are, wrapped. A build that fails
// because the daemon lost a cached layer it was building on (an image removed at that
// moment, with its untagged parents) is run once more, saying so in the log.
func (e *Engine) Build(ctx context.Context, o BuildOptions) (string, error) {
	id, err := e.build(ctx, o)
	if be, ok := errors.AsType[*BuildError](err); ok && lostLayer(be.Msg) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, "the daemon lost a cached layer during the build (%s): an image was removed meanwhile; building again\n", be.Msg)
		}
		id, err = e.build(ctx, o)
	}
	return id, err
}

// lostLayerRE matches what the classic builder says when an image it was using as the
// cache or the parent of a step is removed while it builds ("unknown parent image ID":
// a job's images removed with their untagged parents while another build was on one of
// them, seen in a CI run).
var lostLayerRE = regexp.MustCompile(`(failed to get digest sha256:[0-9a-f]+|No such image: sha256:[0-9a-f]+|unknown parent image ID sha256:[0-9a-f]+).*|.*imagedb/content/sha256/[0-9a-f]+: no such file or directory`)

// lostLayer reports whether a build's error message is that of a cached layer removed from
// under it, which a second build does not meet.
func lostLayer(msg string) bool { return lostLayerRE.MatchString(msg) }

func (e *Engine) build(ctx context.Context, o BuildOptions) (string, error) {
	dockerfile, err := checkContext(o.ContextDir, o.Dockerfile, o.DockerfileContent != nil)
	if err != nil {
		return "", fmt.Errorf("build %s: %w", o.Tag, err)
	}

	// The context streams to the daemon as it is tarred.
	pr, pw := io.Pipe()
	tarDone := make(chan struct{})
	var tarErr error
	go func() {
		defer close(tarDone)
		tarErr = writeContext(pw, o.ContextDir, dockerfile, o.DockerfileContent)
		pw.CloseWithError(tarErr)
	}()
	// contextErr stops the tarring (if the daemon stopped reading) and returns its error.
	contextErr := func() error {
		pr.Close()
		<-tarDone
		if tarErr != nil && !errors.Is(tarErr, io.ErrClosedPipe) {
			return fmt.Errorf("build %s: context %s: %w", o.Tag, o.ContextDir, tarErr)
		}
		return nil
	}
	defer contextErr()

	opts := build.ImageBuildOptions{
		Dockerfile:  dockerfile,
		Labels:      o.Labels,
		NetworkMode: o.NetworkMode,
		Remove:      true,
		ForceRemove: true,
		Version:     build.BuilderV1,
		CPUShares:   o.CPUShares,
		// MemorySwap equal to Memory: no swap beyond the limit.
		Memory:       o.Memory,
		MemorySwap:   o.Memory,
		CgroupParent: o.CgroupParent,
	}
	if o.Tag != "" {
		opts.Tags = []string{o.Tag}
	}
	if len(o.BuildArgs) > 0 {
		opts.BuildArgs = make(map[string]*string, len(o.BuildArgs))
		for k, v := range o.BuildArgs {
			opts.BuildArgs[k] = &v
		}
	}
	resp, err := e.cli.ImageBuild(ctx, pr, opts)
	if err != nil {
		if err := contextErr(); err != nil {
			return "", err
		}
		if ctx.Err() != nil {
			return "", fmt.Errorf("build %s: %w", o.Tag, ctx.Err())
		}
		if cerrdefs.IsInvalidArgument(err) || cerrdefs.IsInternal(err) || cerrdefs.IsUnknown(err) || cerrdefs.IsNotFound(err) {
			// The daemon answered and refused: a bad Dockerfile or option.
			return "", &BuildError{Tag: o.Tag, Msg: oneLine(strings.TrimPrefix(err.Error(), "Error response from daemon: "))}
		}
		return "", fmt.Errorf("build %s: %w", o.Tag, err)
	}
	defer resp.Body.Close()

	log := &lineLog{out: o.Log}
	id, msg, err := readBuildStream(resp.Body, log)
	if err := contextErr(); err != nil {
		return "", err
	}
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return "", fmt.Errorf("build %s: reading the build output: %w", o.Tag, err)
	}
	if msg != "" {
		return "", &BuildError{Tag: o.Tag, Msg: oneLine(msg), Tail: log.tail}
	}
	if id == "" && o.Tag != "" {
		if img, err := e.cli.ImageInspect(ctx, o.Tag); err == nil {
			id = img.ID
		}
	}
	if id == "" {
		return "", &BuildError{Tag: o.Tag, Msg: "the build output named no image", Tail: log.tail}
	}
	return id, nil
}

// checkContext checks the context directory and returns the Dockerfile's path in the
// context, slash-separated. With given, the Dockerfile's bytes come from the caller, so the
// file need not exist.
func checkContext(dir, dockerfile string, given bool) (string, error) {
	if dir == "" {
		return "", errors.New("no context directory")
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("context: %w", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("context %s is not a directory", dir)
	}
	if dockerfile == "" {
		dockerfile = "Dockerfile"
	}
	if filepath.IsAbs(dockerfile) || !filepath.IsLocal(dockerfile) {
		return "", fmt.Errorf("dockerfile %s must be a path inside the context %s", dockerfile, dir)
	}
	fi, err = os.Stat(filepath.Join(dir, dockerfile))
	switch {
	case given && errors.Is(err, fs.ErrNotExist):
		// The given bytes stand in for a file that is not there.
	case err != nil:
		return "", fmt.Errorf("dockerfile: %w", err)
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("dockerfile %s is not a file", filepath.Join(dir, dockerfile))
	}
	return path.Clean(filepath.ToSlash(dockerfile)), nil
}

// buildMessage is one JSON message of the build output (pkg/jsonmessage, cut down).
type buildMessage struct {
	Stream      string `json:"stream"`
	Status      string `json:"status"`
	ID          string `json:"id"`
	Progress    any    `json:"progressDetail"`
	Error       string `json:"error"`
	ErrorDetail *struct {
		Message string `json:"message"`
	} `json:"errorDetail"`
	Aux json.RawMessage `json:"aux"`
}

// readBuildStream reads the build output to its end, logging its lines, and returns the
// image ID from the final aux message and the first error message in the stream.
func readBuildStream(r io.Reader, log *lineLog) (id, errMsg string, err error) {
	dec := json.NewDecoder(r)
	for {
		var m buildMessage
		if err := dec.Decode(&m); err != nil {
			log.flush()
			if errors.Is(err, io.EOF) {
				return id, errMsg, nil
			}
			return "", "", err
		}
		switch {
		case m.Stream != "":
			log.write(m.Stream)
		case m.Status != "" && m.Progress == nil:
			log.flush() // a status is a line of its own
			if m.ID != "" {
				log.write(m.ID + ": " + m.Status + "\n")
			} else {
				log.write(m.Status + "\n")
			}
		}
		if msg := m.Error; msg != "" || m.ErrorDetail != nil {
			if m.ErrorDetail != nil && m.ErrorDetail.Message != "" {
				msg = m.ErrorDetail.Message
			}
			if errMsg == "" {
				errMsg = msg
			}
		}
		if len(m.Aux) > 0 {
			var aux struct{ ID string }
			if json.Unmarshal(m.Aux, &aux) == nil && aux.ID != "" {
				id = aux.ID
			}
		}
	}
}

// lineLog splits the builder's output into clean lines, writes them to out and keeps the
// last tailLines of them.
type lineLog struct {
	out     io.Writer
	partial strings.Builder
	tail    []string
}

func (l *lineLog) write(s string) {
	for {
		before, after, ok := strings.Cut(s, "\n")
		if !ok {
			l.partial.WriteString(s)
			return
		}
		l.partial.WriteString(before)
		l.line(l.partial.String())
		l.partial.Reset()
		s = after
	}
}

func (l *lineLog) flush() {
	if l.partial.Len() > 0 {
		l.line(l.partial.String())
		l.partial.Reset()
	}
}

func (l *lineLog) line(raw string) {
	s := cleanLine(raw)
	if s == "" {
		return
	}
	if len(l.tail) == tailLines {
		l.tail = append(l.tail[:0], l.tail[1:]...)
	}
	l.tail = append(l.tail, s)
	if l.out != nil {
		io.WriteString(l.out, s+"\n")
	}
}

// ansi matches terminal escape sequences: CSI (colours, cursor moves), OSC (titles,
// links) and two-byte escapes.
var ansi = regexp.MustCompile(`\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]`)

// cleanLine strips escape sequences and other control characters from one line of output,
// keeps only what a terminal would finally show after carriage returns (progress bars),
// and trims trailing space.
func cleanLine(s string) string {
	s = ansi.ReplaceAllString(s, "")
	if i := strings.LastIndexByte(strings.TrimRight(s, "\r \t"), '\r'); i >= 0 {
		s = s[i+1:]
	}
	s = strings.Map(func(r rune) rune {
		if r == '\t' || (r >= 0x20 && r != 0x7f) {
			return r
		}
		return -1
	}, s)
	return strings.TrimRight(s, " \t")
}

// oneLine joins a multi-line message into one line.
func oneLine(s string) string { return text.OneLine(ansi.ReplaceAllString(s, "")) }
