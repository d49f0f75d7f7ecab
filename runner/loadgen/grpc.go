package loadgen

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/arenabot/arenabot/profile"
)

// GRPCSumFile is the body file the unary gRPC profiles send with h2load -d, written into
// Spec.ScriptDir by h2load's WriteFiles: the old arena's requests/grpc-sum.bin.
const GRPCSumFile = "grpc-sum.bin"

// GRPCSumFrame is one gRPC length-prefixed message (a 0 byte for "not compressed", a
// 4-byte big-endian length 4) holding benchmark.SumRequest{a: 1, b: 2} (field 1 varint 1,
// field 2 varint 2): hex 00 00000004 08 01 10 02.
var GRPCSumFrame = []byte{0x00, 0x00, 0x00, 0x00, 0x04, 0x08, 0x01, 0x10, 0x02}

// isGRPC reports whether a profile's load is gRPC (over h2c or TLS).
func isGRPC(p profile.Profile) bool {
	return p.Scheme == "grpc" || p.Scheme == "grpcs"
}

// writeGRPCBody writes GRPCSumFile into spec.ScriptDir for a gRPC profile; for others it
// writes nothing.
func writeGRPCBody(spec Spec) error {
	if !isGRPC(spec.Profile) {
		return nil
	}
	if spec.ScriptDir == "" {
		return fmt.Errorf("write %s: no script directory", GRPCSumFile)
	}
	if err := os.WriteFile(filepath.Join(spec.ScriptDir, GRPCSumFile), GRPCSumFrame, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", GRPCSumFile, err)
	}
	return nil
}
