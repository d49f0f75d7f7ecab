# The bot's own image: `arenabot serve` (the webhook service). The runner runs on the
# benchmark host itself (deploy/arenabot-work.service), not in a container, because it drives
# the host's Docker Engine and pins load tools to the host's CPUs.
#
#   docker build -t arenabot:latest .
#   (air-gapped host: docker build --build-arg GO_IMAGE=arenabot/golang:local --network host .)
ARG GO_IMAGE=golang:1.26-bookworm
FROM ${GO_IMAGE} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/arenabot ./cmd/arenabot && go clean -cache
RUN mkdir -p /out/state

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/arenabot /arenabot
# Without ARENA_REDIS_URL, serve keeps its queue and inbox here: mount a volume to keep them.
COPY --from=build --chown=65534:65534 /out/state /var/lib/arenabot
ENV ARENA_STATE_DIR=/var/lib/arenabot
VOLUME /var/lib/arenabot
USER 65534:65534
EXPOSE 8080
ENTRYPOINT ["/arenabot"]
CMD ["serve"]
