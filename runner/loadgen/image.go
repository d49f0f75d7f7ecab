package loadgen

import "embed"

// ImageContext is the build context of the pinned load-generator image (image/Dockerfile).
//
//go:embed image/Dockerfile
var ImageContext embed.FS

// Image is the tag of the load-generator image; it names every tool's pinned version
// ("arenabot/loadgen:wrk-4.1.0-h2load-1.52.0-ghz-0.121.0"), so a version change builds a new
// image instead of reusing a stale one.
var Image = imageTag(All())

// ImageBuildArgs are the build arguments of the image: every tool's pinned version
// ("H2LOAD_VERSION": "1.52.0"), which its build checks.
func ImageBuildArgs() map[string]string { return imageBuildArgs(All()) }
