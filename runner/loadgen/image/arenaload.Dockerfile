# A pinned load-generator image used by `arenabot bench --lite` (load tools in Docker).
# Rendered from the adapters' Install (runner/loadgen/install.go) by
# go test ./runner/loadgen -update; edit the adapters, not this file.
# Built by the runner on first use, one image per tool; on hosts without a registry BASE_IMAGE is substituted by
# arenabot/debian:local and GO_IMAGE by arenabot/golang:local (deploy/base-images.sh).
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
ARG ARENALOAD_VERSION=1.0.0
# arenaload is this module's own (./cmd/arenaload): the runner copies the checked binary into the build context.
COPY arenaload /usr/local/bin/arenaload
RUN arenaload --version | grep -Eq "^arenaload ${ARENALOAD_VERSION}([[:space:]]|$)"
