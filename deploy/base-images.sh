#!/usr/bin/env bash
# base-images.sh — build the local base images an air-gapped benchmark host needs.
#
# No image registry is reachable on such a host, so nothing can be pulled. This script makes,
# from Debian packages and the host's own Go toolchain, local stand-ins for the public base
# images that the entries' unmodified Dockerfiles and the load-generator image build on:
#
#   arenabot/debian:local    debootstrap --variant=minbase bookworm + ca-certificates
#                            (stands in for debian:bookworm-slim)
#   arenabot/golang:local    the above + the host's Go toolchain (go env GOROOT), also tagged
#                            arenabot/golang:<goversion> (stands in for golang:1.26-bookworm),
#                            with the standard library precompiled in root's build cache
#   arenabot/postgres:local  the above + postgresql-15, with an entrypoint that does what the
#                            official image's does for the runner's Postgres sidecar (stands in
#                            for postgres:18): on an empty PGDATA (/var/lib/postgresql/data)
#                            initdb with POSTGRES_USER/POSTGRES_PASSWORD, CREATE DATABASE
#                            POSTGRES_DB, every /docker-entrypoint-initdb.d/*.sql through psql
#                            with ON_ERROR_STOP, then postgres with the container's -c arguments,
#                            listening on every address
#   arenabot/redis:local     the above + redis-server 7.0 (stands in for redis:7-alpine; the
#                            container's command is the redis-server command line)
#   arenabot/nginx:local     the above + Debian's nginx 1.22 (stands in for nginx:*, the compose
#                            stacks' edge: its one binary has ssl, http2, auth_request and
#                            gzip_static built in; no QUIC). Laid out like the official image: a
#                            user nginx, /etc/nginx/conf.d/*.conf included, no default site (it
#                            would take the host's port 80), logs to the container's stdout and
#                            stderr, CMD nginx -g 'daemon off;'
#   arenabot/caddy:local     the above + Debian's caddy 2.6 (stands in for caddy:*: h3 and
#                            file_server precompressed); CMD caddy run on /etc/caddy/Caddyfile,
#                            XDG_CONFIG_HOME=/config and XDG_DATA_HOME=/data as the official image
#
# When it is done it prints, on stdout, the ARENA_IMAGE_MAP line that maps the public images
# to them (its progress goes to stderr), ready for the runner's environment file:
#
#   ARENA_IMAGE_MAP=debian:*=arenabot/debian:local,alpine:*=arenabot/debian:local,ubuntu:*=arenabot/debian:local,golang:*=arenabot/golang:local,postgres:*=arenabot/postgres:local,redis:*=arenabot/redis:local,nginx:*=arenabot/nginx:local,caddy:*=arenabot/caddy:local
#
#   bash deploy/base-images.sh >>/etc/arenabot/work.env   # or, in a shell: export "$(bash deploy/base-images.sh)"
#
# With it, any FROM of an entry, literal or from a build argument, whose image is not on the
# host and cannot be pulled is built FROM its stand-in instead; the entry's Dockerfile stays
# as it is; the runner's sidecars (postgres:18, redis:7-alpine) start from their stand-ins the
# same way. The alpine and ubuntu stand-ins are Debian: a static binary (CGO_ENABLED=0) runs
# on them, but a RUN step that needs the real distribution (apk add, say) still fails.
# Without the map the runner still substitutes by convention: when a Dockerfile takes its base
# image from a build argument (ARG GO_IMAGE=golang:1.26-bookworm ... FROM ${GO_IMAGE}) and that
# image is not on the host while arenabot/golang:local is, the build gets
# GO_IMAGE=arenabot/golang:local.
#
# Each image is made only when it is missing (use --force to rebuild). Needs root, debootstrap
# (installed with apt-get when it is missing) and a reachable Debian mirror (DEBIAN_MIRROR,
# default deb.debian.org). Idempotent; runs of it on one host take turns on each image (flock).
#
#   bash deploy/base-images.sh [--force] [NAME...]   # NAME: debian golang postgres redis nginx caddy
#   bash deploy/base-images.sh --print-map [NAME...] # the map line only, nothing made
#
# Names make only those images (and print their part of the map): arenabot bench makes each
# stand-in it needs this way on first use (deploy.MakeStandIn). ARENA_STANDIN_TAG tags them
# other than local (arenabot/debian:$ARENA_STANDIN_TAG), for tests.
set -euo pipefail

all=(debian golang postgres redis nginx caddy)
force=0 print_only=0 names=()
for arg in "$@"; do
	case "$arg" in
	--force) force=1 ;;
	--print-map) print_only=1 ;;
	debian | golang | postgres | redis | nginx | caddy) names+=("$arg") ;;
	*) echo "base-images: unknown argument $arg; give --force, --print-map or image names of: ${all[*]}" >&2; exit 2 ;;
	esac
done
[ ${#names[@]} -gt 0 ] || names=("${all[@]}")
tag=${ARENA_STANDIN_TAG:-local}
want() { [[ " ${names[*]} " == *" $1 "* ]]; }

# The map for the images named (alpine and ubuntu stand in as Debian: fine for static
# binaries, not for apk or distribution-specific RUN steps).
image_map() {
	local pairs=() n
	for n in "${names[@]}"; do
		case "$n" in
		debian) pairs+=("debian:*=arenabot/debian:$tag" "alpine:*=arenabot/debian:$tag" "ubuntu:*=arenabot/debian:$tag") ;;
		*) pairs+=("$n:*=arenabot/$n:$tag") ;;
		esac
	done
	local IFS=,
	echo "ARENA_IMAGE_MAP=${pairs[*]}"
}
if [ "$print_only" = 1 ]; then
	image_map
	exit 0
fi

mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
work=${ARENA_IMAGE_WORKDIR:-/var/tmp/arenabot-rootfs}
mkdir -p "$work"
# Runs on one host take turns per image (a lock each, taken in one order) and on the shared
# rootfs while it is made (ensure_base): a run for golang and one for debian overlap
# everywhere else.
for n in "${all[@]}"; do
	if want "$n"; then
		exec {fd}>"$work/.lock-$n"
		flock "$fd"
	fi
done
goroot_dir=$(go env GOROOT)
gover=$(go env GOVERSION)
gover=${gover#go}

have() { [ "$force" = 0 ] && docker image inspect "$1" >/dev/null 2>&1; }
log() { printf 'base-images: %s\n' "$*" >&2; }

rootfs() { # rootfs DIR PACKAGES... — a minbase bookworm with extra packages
	local dir=$1; shift
	if [ ! -x "$dir/usr/bin/apt-get" ]; then
		rm -rf "$dir"
		if ! command -v debootstrap >/dev/null 2>&1; then
			log "installing debootstrap (apt-get)"
			apt-get update -qq >&2
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
		fi
		# The packages come in with the system: no second package-list download.
		local include=()
		if [ $# -gt 0 ]; then
			include=("--include=$(IFS=,; echo "$*")")
			set --
		fi
		log "debootstrap bookworm into $dir (about a minute)"
		debootstrap --variant=minbase "${include[@]}" bookworm "$dir" "$mirror" >"$dir.log" 2>&1 ||
			{ tail -20 "$dir.log" >&2; exit 1; }
		slim "$dir"
	fi
	if [ $# -gt 0 ]; then
		log "installing $* into $dir"
		cp /etc/resolv.conf "$dir/etc/resolv.conf"
		# No service starts inside the chroot: it shares the host's network, so a
		# postinst's postgres or redis-server would take the host's 5432 or 6379.
		printf '#!/bin/sh\nexit 101\n' >"$dir/usr/sbin/policy-rc.d" && chmod +x "$dir/usr/sbin/policy-rc.d"
		chroot "$dir" apt-get update -qq >/dev/null
		DEBIAN_FRONTEND=noninteractive chroot "$dir" apt-get install -y -qq --no-install-recommends "$@" >/dev/null
		chroot "$dir" apt-get clean
		rm -rf "$dir/var/lib/apt/lists/"* "$dir/usr/sbin/policy-rc.d"
	fi
}

# slim DIR — no manuals, documentation (but the copyrights) or translations, now or from any
# package installed later (dpkg excludes them, as Debian's slim images do). Every file of a
# base image costs every build step on it: on a storage driver that diffs by walking the
# tree (fuse-overlayfs here), a step on a 27,000-file image took twice as long as on the
# same image with 14,000.
slim() {
	local dir=$1
	mkdir -p "$dir/etc/dpkg/dpkg.cfg.d"
	printf '%s\n' 'path-exclude /usr/share/man/*' 'path-exclude /usr/share/info/*' \
		'path-exclude /usr/share/locale/*' 'path-include /usr/share/locale/locale.alias' \
		'path-exclude /usr/share/doc/*' 'path-include /usr/share/doc/*/copyright' \
		>"$dir/etc/dpkg/dpkg.cfg.d/01-arenabot-slim"
	find "$dir/usr/share/man" "$dir/usr/share/info" -mindepth 1 -delete 2>/dev/null || true
	find "$dir/usr/share/locale" -mindepth 1 ! -name locale.alias -delete 2>/dev/null || true
	find "$dir/usr/share/doc" -mindepth 1 ! -type d ! -name copyright -delete 2>/dev/null || true
	find "$dir/usr/share/doc" -mindepth 1 -type d -empty -delete 2>/dev/null || true
}

import() { # import DIR TAG [CHANGE...] — CHANGEs are Dockerfile lines (ENV, ENTRYPOINT, CMD, USER)
	local dir=$1 tag=$2; shift 2
	local changes=(-c 'ENV PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin')
	for c in "$@"; do changes+=(-c "$c"); done
	log "importing $dir as $tag"
	tar -C "$dir" -c . | docker import "${changes[@]}" - "$tag" >/dev/null
}

base="$work/bookworm"
ensure_base() { # the shared minbase rootfs with ca-certificates, made once
	exec 8>"$work/.lock"
	flock 8
	if [ ! -f "$base/.arenabot-base-slim" ]; then
		make_base
	fi
	flock -u 8
	exec 8>&-
}
make_base() {
	[ -f "$base/.arenabot-base" ] && slim "$base" # made before slim existed
	rootfs "$base" ca-certificates
	# Trust what the host trusts beyond Debian's bundle (a site's egress proxy or mirror CA),
	# so RUN steps reach the module proxy and the Debian mirror exactly as the host does.
	if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
		log "adding the host's local CA certificates"
		cp /usr/local/share/ca-certificates/*.crt "$base/usr/local/share/ca-certificates/"
		chroot "$base" update-ca-certificates >/dev/null
	fi
	touch "$base/.arenabot-base" "$base/.arenabot-base-slim"
}
# from_base NAME PACKAGES... — a copy of the shared rootfs with PACKAGES installed, in
# $work/NAME (echoed), for one stand-in; removed once imported.
from_base() {
	local dir="$work/$1"; shift
	{
		ensure_base
		rm -rf "$dir" && cp -a "$base" "$dir"
		rootfs "$dir" "$@"
	} >&2
	echo "$dir"
}

if want debian && ! have "arenabot/debian:$tag"; then
	ensure_base
	import "$base" "arenabot/debian:$tag"
fi

# The Go stand-in carries the standard library already compiled the way entries build
# (CGO_ENABLED=0 go build -trimpath), in root's build cache: every image build on it starts
# from a warm cache for the standard library (net/http, crypto/tls, ...) instead of compiling
# it again, which halves a small entry's build. Dockerfiles that end with go clean -cache
# still do. The label says what the cache holds; an image without it is made again.
# Its GOROOT has no tests (test/, *_test.go, testdata: 10,000 of its 27,000 files), which
# building never reads and which every build step on the image would pay for; the label
# says so, and an image without it is made again.
# ARENA_GO_STD_CACHE=no makes it without the compiled standard library (label "none"), as
# a runner making it on first use does: compiling all of std is half a minute before the
# first build can start, more than the packages one entry needs cost it; an image without
# the cache is still current then, and a run without the variable makes it again with it.
stdcache="CGO_ENABLED=0 go build -trimpath std"
[ "${ARENA_GO_STD_CACHE:-yes}" = no ] && stdcache=none
goroot="without tests"
label() { docker image inspect -f "{{index .Config.Labels \"$2\"}}" "$1" 2>/dev/null; }
golang_current() {
	have "arenabot/golang:$gover" &&
		{ [ "$(label "arenabot/golang:$gover" arenabot.std-cache)" = "$stdcache" ] || [ "$stdcache" = none ]; } &&
		[ "$(label "arenabot/golang:$gover" arenabot.goroot)" = "$goroot" ]
}
# The standard library compiles (CPU) while the sidecars' stand-ins install their packages
# (mostly the network): the Go image is made in the background and waited for at the end.
golang_image() {
	gdir="$work/golang"
	rm -rf "$gdir" && cp -a "$base" "$gdir"
	mkdir -p "$gdir/usr/local"
	cp -a "$goroot_dir" "$gdir/usr/local/go"
	rm -rf "$gdir/usr/local/go/test"
	find "$gdir/usr/local/go/src" -name testdata -type d -prune -exec rm -rf {} +
	find "$gdir/usr/local/go/src" -name '*_test.go' -delete
	if [ "$stdcache" != none ]; then
		log "compiling the standard library into the Go stand-in's build cache ($stdcache; about a minute)"
		# A chroot has no /proc, from which go finds its GOROOT; a container has, so the image
		# sets nothing. The cache keys do not depend on how GOROOT was found.
		chroot "$gdir" /usr/bin/env -i PATH=/usr/local/go/bin:/usr/bin:/bin HOME=/root GOROOT=/usr/local/go \
			GOTOOLCHAIN=local GOFLAGS= CGO_ENABLED=0 go build -trimpath std >"$gdir.log" 2>&1 ||
			{ tail -20 "$gdir.log" >&2; exit 1; }
	else
		log "the Go stand-in without the compiled standard library (ARENA_GO_STD_CACHE=no): each build compiles what it uses; bash deploy/base-images.sh --force golang adds it"
	fi
	import "$gdir" "arenabot/golang:$gover" "LABEL arenabot.std-cache=\"$stdcache\"" "LABEL arenabot.goroot=\"$goroot\""
	rm -rf "$gdir"
}
golang_pid=
if want golang && ! golang_current; then
	ensure_base
	golang_image &
	golang_pid=$!
fi

# The entrypoint of arenabot/postgres:local: what the official postgres image's entrypoint does,
# for what the runner uses.
pg_entrypoint='#!/bin/sh
# docker-entrypoint.sh (arenabot/postgres:local): on an empty PGDATA, initdb with
# POSTGRES_USER/POSTGRES_PASSWORD, create POSTGRES_DB, run /docker-entrypoint-initdb.d/*.sql with
# psql ON_ERROR_STOP (a failing seed ends the container), then exec postgres with the arguments.
set -eu
case "${1:-}" in -*) set -- postgres "$@" ;; esac
if [ "${1:-}" != postgres ]; then exec "$@"; fi
if [ "$(id -u)" = 0 ]; then
	mkdir -p "$PGDATA" /var/run/postgresql
	chown postgres:postgres "$PGDATA" /var/run/postgresql
	chmod 700 "$PGDATA"
	exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
	: "${POSTGRES_PASSWORD:?is not set; the image needs POSTGRES_PASSWORD}"
	user=${POSTGRES_USER:-postgres}
	db=${POSTGRES_DB:-$user}
	pw=$(mktemp)
	printf "%s\n" "$POSTGRES_PASSWORD" >"$pw"
	initdb -D "$PGDATA" --username="$user" --pwfile="$pw" --auth-local=trust --auth-host=scram-sha-256 >/dev/null
	rm -f "$pw"
	printf "host all all all scram-sha-256\n" >>"$PGDATA/pg_hba.conf"
	printf "listen_addresses = '"'"'*'"'"'\n" >>"$PGDATA/postgresql.conf"
	# The seed loads into a server reachable only on its socket, as the official image does:
	# the port opens once the data is in.
	pg_ctl -D "$PGDATA" -o "-c listen_addresses=" -w start >/dev/null
	if [ "$db" != postgres ]; then
		psql -v ON_ERROR_STOP=1 --no-psqlrc --username "$user" --dbname postgres -q -c "CREATE DATABASE \"$db\""
	fi
	for f in /docker-entrypoint-initdb.d/*; do
		case "$f" in
		*.sql) echo "$0: running $f"; psql -v ON_ERROR_STOP=1 --no-psqlrc --username "$user" --dbname "$db" -q -f "$f" ;;
		*) if [ -e "$f" ]; then echo "$0: ignoring $f"; fi ;;
		esac
	done
	pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
	echo "$0: PostgreSQL init process complete; ready for start up."
fi
exec "$@"
'

if want postgres && ! have "arenabot/postgres:$tag"; then
	ensure_base
	pdir="$work/postgres"
	rm -rf "$pdir" && cp -a "$base" "$pdir"
	mkdir -p "$pdir/etc/postgresql-common"
	# The image makes its cluster when it starts, in PGDATA; not at install.
	printf 'create_main_cluster = false\n' >"$pdir/etc/postgresql-common/createcluster.conf"
	rootfs "$pdir" postgresql-15
	bin=$(ls -d "$pdir"/usr/lib/postgresql/*/bin | head -1)
	bin=${bin#"$pdir"}
	printf '%s' "$pg_entrypoint" >"$pdir/usr/local/bin/docker-entrypoint.sh"
	chmod 755 "$pdir/usr/local/bin/docker-entrypoint.sh"
	import "$pdir" "arenabot/postgres:$tag" \
		"ENV PATH=$bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
		'ENV PGDATA=/var/lib/postgresql/data' \
		'ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]' \
		'CMD ["postgres"]' \
		'EXPOSE 5432'
	rm -rf "$pdir"
fi

if want redis && ! have "arenabot/redis:$tag"; then
	rdir=$(from_base redis redis-server)
	import "$rdir" "arenabot/redis:$tag" \
		'USER redis' \
		'WORKDIR /var/lib/redis' \
		'CMD ["redis-server", "--protected-mode", "no"]' \
		'EXPOSE 6379'
	rm -rf "$rdir"
fi

# The compose stacks' edges: an entry's proxy Dockerfile (FROM nginx:1.27-alpine or
# FROM caddy:2-alpine, then COPY of its config) builds on these unchanged.
if want nginx && ! have "arenabot/nginx:$tag"; then
	ndir=$(from_base nginx nginx)
	# The official image runs its workers as nginx, and the entries' nginx.conf say so.
	chroot "$ndir" useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin nginx
	rm -f "$ndir/etc/nginx/sites-enabled/default"
	ln -sf /dev/stdout "$ndir/var/log/nginx/access.log"
	ln -sf /dev/stderr "$ndir/var/log/nginx/error.log"
	# docker import takes no STOPSIGNAL; SIGTERM makes nginx stop at once, which is what a
	# stack's teardown wants anyway.
	import "$ndir" "arenabot/nginx:$tag" \
		'CMD ["nginx", "-g", "daemon off;"]' \
		'EXPOSE 80 443'
	rm -rf "$ndir"
fi

# XDG_DATA_HOME=/data as in the official image: caddy keeps its storage in /data/caddy, beside
# the /data/static the stacks mount, and the two do not meet. With the arena's Caddyfile (site
# https://localhost:8443, root * /data, file_server precompressed br gzip) Debian's caddy 2.6
# serves every static file and its .br and .gz twins as the official image does; the empty
# 200s (Content-Length: 0) gateway-h3's checks once got were caddy's answer to a request for a
# host no site matches, the checks naming the edge 127.0.0.1 (validate's authority), not
# something of this image.
if want caddy && ! have "arenabot/caddy:$tag"; then
	cdir=$(from_base caddy caddy)
	mkdir -p "$cdir/config/caddy" "$cdir/data/caddy" "$cdir/srv"
	import "$cdir" "arenabot/caddy:$tag" \
		'ENV XDG_CONFIG_HOME=/config' \
		'ENV XDG_DATA_HOME=/data' \
		'WORKDIR /srv' \
		'CMD ["caddy", "run", "--config", "/etc/caddy/Caddyfile", "--adapter", "caddyfile"]' \
		'EXPOSE 80 443 443/udp 2019'
	rm -rf "$cdir"
fi

if [ -n "$golang_pid" ] && ! wait "$golang_pid"; then
	log "making arenabot/golang:$gover failed"
	exit 1
fi
if want golang; then
	docker tag "arenabot/golang:$gover" "arenabot/golang:$tag"
fi

made=()
for n in "${names[@]}"; do made+=("arenabot/$n:$tag"); done
log "ready: ${made[*]}"
image_map
