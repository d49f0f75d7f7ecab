package arenadata

import (
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"
)

// rng is a deterministic pseudo-random source. It uses only PCG's Uint64, whose output is
// fixed by the PCG-DXSM definition, and derives everything else itself, so the generated
// data cannot change when the standard library changes how rand.Rand maps numbers.
type rng struct{ pcg *rand.PCG }

// newRNG returns a source seeded from label, so each file's content depends only on its
// own label and not on the order files are generated in.
func newRNG(label string) *rng {
	sum := sha256.Sum256([]byte("arenadata/" + label))
	return &rng{rand.NewPCG(binary.LittleEndian.Uint64(sum[0:8]), binary.LittleEndian.Uint64(sum[8:16]))}
}

// intn returns an int in [0, n).
func (r *rng) intn(n int) int { return int(r.pcg.Uint64() % uint64(n)) }

// between returns an int in [lo, hi].
func (r *rng) between(lo, hi int) int { return lo + r.intn(hi-lo+1) }

// chance reports true with probability percent/100.
func (r *rng) chance(percent int) bool { return r.intn(100) < percent }

// pick returns a random element of list.
func pick[T any](r *rng, list []T) T { return list[r.intn(len(list))] }

// fill fills b with pseudo-random bytes.
func (r *rng) fill(b []byte) {
	for len(b) >= 8 {
		binary.LittleEndian.PutUint64(b, r.pcg.Uint64())
		b = b[8:]
	}
	if len(b) > 0 {
		var last [8]byte
		binary.LittleEndian.PutUint64(last[:], r.pcg.Uint64())
		copy(b, last[:])
	}
}
