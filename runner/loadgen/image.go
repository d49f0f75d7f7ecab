package loadgen

import "embed"

// ImageContext holds the rendered Dockerfile of each tool's load-generator image
// (image/<tool>.Dockerfile), for reading; the runner renders the one it builds.
//
//go:embed image
var ImageContext embed.FS

// ImageFor is the tag of tool's load-generator image, the one --lite runs it in: the tool's
// name and pinned version ("arenabot/loadgen:wrk-4.1.0"), so a version change builds a new
// image instead of reusing a stale one. Each tool has its own image, built on first use: a
// run that needs only wrk waits for no other tool to install or compile.
func ImageFor(tool Tool) string { return imageTag([]Tool{tool}) }

// ImageBuildArgs are the build arguments of tool's image: its pinned version
// ("H2LOAD_VERSION": "1.52.0"), which its build checks.
func ImageBuildArgs(tool Tool) map[string]string { return imageBuildArgs([]Tool{tool}) }

// DockerfileName is the file, under image/, of tool's rendered Dockerfile.
func DockerfileName(tool Tool) string { return tool.Name + ".Dockerfile" }
