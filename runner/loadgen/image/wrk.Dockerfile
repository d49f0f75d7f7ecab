# A pinned load-generator image used by `arenabot bench --lite` (load tools in Docker).
# Rendered from the adapters' Install (runner/loadgen/install.go) by
# go test ./runner/loadgen -update; edit the adapters, not this file.
# Built by the runner on first use, one image per tool; on hosts without a registry BASE_IMAGE is substituted by
# arenabot/debian:local and GO_IMAGE by arenabot/golang:local (deploy/base-images.sh).
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
ARG WRK_VERSION=4.1.0
# The Debian packages, each checked to be the pinned upstream version (any Debian revision).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends wrk \
 && rm -rf /var/lib/apt/lists/* \
 && dpkg-query -W -f='${Version}' wrk | grep -Eq "^([0-9]+:)?${WRK_VERSION}-"
