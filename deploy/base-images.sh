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
#                            arenabot/golang:<goversion> (stands in for golang:1.26-bookworm)
#
# When it is done it prints, on stdout, the ARENA_IMAGE_MAP line that maps the public images
# to them (its progress goes to stderr), ready for the runner's environment file:
#
#   ARENA_IMAGE_MAP=golang:*=arenabot/golang:local,debian:*=arenabot/debian:local,alpine:*=arenabot/debian:local,ubuntu:*=arenabot/debian:local
#
#   bash deploy/base-images.sh >>/etc/arenabot/work.env   # or, in a shell: export "$(bash deploy/base-images.sh)"
#
# With it, any FROM of an entry, literal or from a build argument, whose image is not on the
# host and cannot be pulled is built FROM its stand-in instead; the entry's Dockerfile stays
# as it is. The alpine and ubuntu stand-ins are Debian: a static binary (CGO_ENABLED=0) runs
# on them, but a RUN step that needs the real distribution (apk add, say) still fails.
# Without the map the runner still substitutes by convention: when a Dockerfile takes its base
# image from a build argument (ARG GO_IMAGE=golang:1.26-bookworm ... FROM ${GO_IMAGE}) and that
# image is not on the host while arenabot/golang:local is, the build gets
# GO_IMAGE=arenabot/golang:local.
#
# Each image is made only when it is missing (use --force to rebuild). Needs root, debootstrap
# and a reachable Debian mirror (DEBIAN_MIRROR, default deb.debian.org). Idempotent.
set -euo pipefail

force=0
[ "${1:-}" = "--force" ] && force=1
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
work=${ARENA_IMAGE_WORKDIR:-/var/tmp/arenabot-rootfs}
mkdir -p "$work"
goroot=$(go env GOROOT)
gover=$(go env GOVERSION)
gover=${gover#go}

have() { [ "$force" = 0 ] && docker image inspect "$1" >/dev/null 2>&1; }
log() { printf 'base-images: %s\n' "$*" >&2; }

rootfs() { # rootfs DIR PACKAGES... — a minbase bookworm with extra packages
	local dir=$1; shift
	if [ ! -x "$dir/usr/bin/apt-get" ]; then
		rm -rf "$dir"
		log "debootstrap bookworm into $dir (about a minute)"
		debootstrap --variant=minbase bookworm "$dir" "$mirror" >"$dir.log" 2>&1 ||
			{ tail -20 "$dir.log" >&2; exit 1; }
	fi
	if [ $# -gt 0 ]; then
		log "installing $* into $dir"
		cp /etc/resolv.conf "$dir/etc/resolv.conf"
		chroot "$dir" apt-get update -qq >/dev/null
		DEBIAN_FRONTEND=noninteractive chroot "$dir" apt-get install -y -qq --no-install-recommends "$@" >/dev/null
		chroot "$dir" apt-get clean
		rm -rf "$dir/var/lib/apt/lists/"*
	fi
}

import() { # import DIR TAG
	log "importing $1 as $2"
	tar -C "$1" -c . | docker import -c 'ENV PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' - "$2" >/dev/null
}

base="$work/bookworm"
ensure_base() { # the shared minbase rootfs with ca-certificates, made once
	[ -f "$base/.arenabot-base" ] && return
	rootfs "$base" ca-certificates
	# Trust what the host trusts beyond Debian's bundle (a site's egress proxy or mirror CA),
	# so RUN steps reach the module proxy and the Debian mirror exactly as the host does.
	if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
		log "adding the host's local CA certificates"
		cp /usr/local/share/ca-certificates/*.crt "$base/usr/local/share/ca-certificates/"
		chroot "$base" update-ca-certificates >/dev/null
	fi
	touch "$base/.arenabot-base"
}
if ! have arenabot/debian:local; then
	ensure_base
	import "$base" arenabot/debian:local
fi

if ! have "arenabot/golang:$gover"; then
	ensure_base
	gdir="$work/golang"
	rm -rf "$gdir" && cp -a "$base" "$gdir"
	mkdir -p "$gdir/usr/local"
	cp -a "$goroot" "$gdir/usr/local/go"
	import "$gdir" "arenabot/golang:$gover"
	rm -rf "$gdir"
fi

docker tag "arenabot/golang:$gover" arenabot/golang:local
log "ready: arenabot/debian:local, arenabot/golang:local (= arenabot/golang:$gover)"
# The map for the images made above (alpine and ubuntu stand in as Debian: fine for static
# binaries, not for apk or distribution-specific RUN steps).
echo "ARENA_IMAGE_MAP=golang:*=arenabot/golang:local,debian:*=arenabot/debian:local,alpine:*=arenabot/debian:local,ubuntu:*=arenabot/debian:local"
