// Command arenaload is the arena's own load generator, for the profiles no pinned tool can
// run faithfully: paced (open-loop HTTP/1.1 at a fixed rate, latency from each request's
// scheduled send time), ws (WebSocket echo) and h3 (HTTP/3 on quic-go). Each mode prints one
// JSON result (arenaload.Result) on stdout.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/arenabot/arenabot/arenaload"
	"github.com/arenabot/arenabot/arenaload/h3"
	"github.com/arenabot/arenabot/arenaload/paced"
	"github.com/arenabot/arenabot/arenaload/ws"
)

// A mode runs with its arguments and writes its result to stdout.
type mode func(ctx context.Context, args []string, stdout, stderr io.Writer) error

var modes = map[string]mode{
	"paced": paced.Main,
	"ws":    ws.Main,
	"h3":    h3.Main,
}

const usage = `usage: arenaload <mode> [flags] URL
       arenaload --version

modes:
  paced  open-loop HTTP/1.1 (or over TLS) at a fixed rate over exactly C connections
  ws     WebSocket echo: P frames in flight per connection, optional reconnect every R echoes
  h3     HTTP/3 over QUIC: C connections x M streams

run 'arenaload <mode> --help' for a mode's flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "--version" || args[0] == "-version") {
		fmt.Fprintln(stdout, "arenaload", arenaload.FullVersion())
		return 0
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	m, ok := modes[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "arenaload: unknown mode %q; want paced, ws or h3\n\n%s", args[0], usage)
		return 2
	}
	if err := m(ctx, args[1:], stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "arenaload %s: %v\n", args[0], err)
		return 1
	}
	return 0
}
