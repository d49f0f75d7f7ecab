# A pinned load-generator image used by `arenabot bench --lite` (load tools in Docker).
# Rendered from the adapters' Install (runner/loadgen/install.go) by
# go test ./runner/loadgen -update; edit the adapters, not this file.
# Built by the runner on first use, one image per tool; on hosts without a registry BASE_IMAGE is substituted by
# arenabot/debian:local and GO_IMAGE by arenabot/golang:local (deploy/base-images.sh).
ARG BASE_IMAGE=debian:bookworm-slim
ARG GO_IMAGE=golang:1.26-bookworm
# ghz from the Go module proxy at the pinned version, checked in the binary's build information.
FROM ${GO_IMAGE} AS ghz
ARG GHZ_VERSION=0.121.0
RUN GOFLAGS= CGO_ENABLED=0 GOBIN=/out go install -trimpath -ldflags="-s -w -X main.version=v${GHZ_VERSION}" "github.com/bojand/ghz/cmd/ghz@v${GHZ_VERSION}" \
 && go version -m /out/ghz | grep -Eq "^[[:space:]]+mod[[:space:]]+github.com/bojand/ghz[[:space:]]+v${GHZ_VERSION}[[:space:]]"
FROM ${BASE_IMAGE}
ARG GHZ_VERSION=0.121.0
COPY --from=ghz /out/ghz /usr/local/bin/ghz
