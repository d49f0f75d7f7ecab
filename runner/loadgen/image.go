package loadgen

import "embed"

// ImageContext is the build context of the pinned load-generator image (image/Dockerfile).
//
//go:embed image/Dockerfile
var ImageContext embed.FS

// Image is the tag of the load-generator image; it names the pinned tool versions, so a
// version change builds a new image instead of reusing a stale one.
const Image = "arenabot/loadgen:wrk-4.1.0-h2load-1.52.0"
