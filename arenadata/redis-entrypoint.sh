#!/bin/sh
# redis-entrypoint.sh: production-stack's cache, as the arena's stacks run it.
#
# A stack's cache service runs redis:7-alpine (or its stand-in) with this file mounted at
# /entrypoint.sh and redis-seed.txt at /seed.txt, and entrypoint ["sh", "/entrypoint.sh"].
# Redis starts with no TCP port, loads the seed's commands over a unix socket, and only then
# opens 6379 on loopback: whoever reaches 6379 (the server, the healthcheck redis-cli ping)
# finds the seed already in. A seed command that fails stops the container with the error.
# SIGTERM or SIGINT shuts Redis down; the script exits with its status. Nothing is saved.
#
# Written for any POSIX sh (busybox's on alpine, dash on Debian). REDIS_SEED and REDIS_PORT
# replace /seed.txt and 6379 (tests do; the stacks do not).
set -eu

seed=${REDIS_SEED:-/seed.txt}
port=${REDIS_PORT:-6379}
say() { echo "redis-entrypoint: $*"; }

if [ ! -r "$seed" ]; then
	say "no seed at $seed; mount the arena's redis-seed.txt there (\${DATA_DIR}/redis-seed.txt:/seed.txt:ro)" >&2
	exit 1
fi

dir=$(mktemp -d)
sock=$dir/redis.sock
redis-server --port 0 --unixsocket "$sock" --unixsocketperm 700 --bind 127.0.0.1 -::1 \
	--protected-mode no --save '' --appendonly no &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null || true' TERM INT

# stop ends Redis and the script with status $1.
stop() {
	kill -TERM "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	rm -rf "$dir"
	exit "$1"
}

tries=0
until redis-cli -s "$sock" ping >/dev/null 2>&1; do
	if ! kill -0 "$pid" 2>/dev/null; then
		status=0
		wait "$pid" || status=$?
		say "redis-server exited with status $status before it answered" >&2
		exit 1
	fi
	tries=$((tries + 1))
	if [ "$tries" -ge 100 ]; then
		say "redis-server did not answer on $sock within 10s" >&2
		stop 1
	fi
	sleep 0.1
done

if ! seeded=$(redis-cli -s "$sock" --pipe <"$seed" 2>&1); then
	say "seeding from $seed failed: $seeded" >&2
	stop 1
fi
if ! opened=$(redis-cli -s "$sock" config set port "$port" 2>&1) || [ "$opened" != OK ]; then
	say "cannot listen on port $port: $opened" >&2
	stop 1
fi
say "seeded from $seed ($(echo "$seeded" | tail -n 1)); listening on 127.0.0.1:$port"

# wait returns early when a trapped signal arrives; Redis is then shutting down: wait again
# for its status.
status=0
while kill -0 "$pid" 2>/dev/null; do
	status=0
	wait "$pid" || status=$?
done
rm -rf "$dir"
exit "$status"
