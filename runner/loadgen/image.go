package loadgen

import "embed"

// ImageContext is the build context of the pinned load-generator image (image/Dockerfile).
//
//go:embed image/Dockerfile
var ImageContext embed.FS

// Image is the tag of the load-generator image; it names the pinned tool versions, so a
// version change builds a new image instead of reusing a stale one.
var Image = "arenabot/loadgen:wrk-" + Wrk{}.PinnedVersion() + "-h2load-" + H2load{}.PinnedVersion() + "-ghz-" + Ghz{}.PinnedVersion()

// ImageBuildArgs are the build arguments of the image: the pinned versions, which its build
// checks.
func ImageBuildArgs() map[string]string {
	return map[string]string{"WRK_VERSION": Wrk{}.PinnedVersion(), "H2LOAD_VERSION": H2load{}.PinnedVersion(), "GHZ_VERSION": Ghz{}.PinnedVersion()}
}
