// Package doctor checks a host for what arenabot needs before a job finds it missing: for
// the runner (Docker, cgroups, the CPU split, open files, UDP buffers, the pinned load
// tools, the stand-in images, perf, the fixed ports, disk space, git and flock, the host
// lock) and for the bot (the webhook secret, GitHub credentials, Redis or the state
// directory, the listen address).
//
// Each Check measures one thing and returns a Result: ok, warn or FAIL, the value it
// found and, when not ok, the fix. Checks reach the machine only through an Env, so a
// test can hand them a broken one (a PATH, variables, files, a port list).
//
// The package sits below runner because most of what it checks is the runner's
// (it imports runner/docker, runner/host, runner/loadgen, runner/build and
// queue/redisconn, all allowed to runner); the bot's few checks read only environment
// variables, files and Redis, so they live here too and bot never imports this package
// (bot may not import runner). cmd/arenabot wires it into `arenabot doctor` and the start
// of `arenabot work`.
package doctor
