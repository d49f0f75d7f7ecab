// Package h3 is one of arenaload's generators (being written).
package h3

import (
	"context"
	"errors"
	"io"
)

// Main runs the generator with its command-line arguments.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("not built yet")
}
