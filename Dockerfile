# robotsgate container image: a static binary on distroless, as non-root.
#
#   docker build -t robotsgate .
#   docker run --rm -p 127.0.0.1:9309:9309 \
#     -e ROBOTSGATE_CREDENTIALS_FILE=/run/secrets/robotsgate-credentials \
#     -e ROBOTSGATE_ALLOW_CIDRS=0.0.0.0/0,::/0 \
#     -e ROBOTSGATE_ADMIN_TOKEN="$(openssl rand -hex 16)" \
#     -v "$PWD/credentials:/run/secrets/robotsgate-credentials:ro" robotsgate
#
# The credentials file must be mode 0600 (or 0400) and owned by 65532, the
# image's user: robotsgate refuses one that group or others can read.
#
# Settings are environment variables (ROBOTSGATE_<FLAG>), so that
# `robotsgate health` (the HEALTHCHECK) reads the same configuration as
# serve. A container listens beyond loopback: robotsgate refuses to start
# as an open proxy, so give it credentials (ROBOTSGATE_CREDENTIALS_FILE)
# and client networks (ROBOTSGATE_ALLOW_CIDRS; 0.0.0.0/0,::/0 for any,
# explicitly) or, in a shared network namespace (docker-compose.yml),
# ROBOTSGATE_LISTEN=127.0.0.1:9309.
# The admin API (on the proxy port unless ROBOTSGATE_ADMIN_LISTEN is set)
# then needs ROBOTSGATE_ADMIN_TOKEN. See docs/production.md#container-image.

# Base images are pinned by digest (the tag is for readers; the digest is
# what is pulled). The Go tag matches go.mod's go line: the official image
# sets GOTOOLCHAIN=local, so an older Go would refuse to build. To update:
#   docker buildx imagetools inspect golang:1.26.8
FROM golang:1.26.8@sha256:9d2f36f06329b2a141b9db99ffa32765cf695ee57b813ca29e245e8670bcbfff AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# `robotsgate version`: .git is not in the build context (.dockerignore),
# so the version and commit come in as build arguments, stamped by the
# linker (empty: "(devel)" and "unknown"):
#   docker build --build-arg VERSION="$(git describe --tags --always --dirty)" \
#     --build-arg COMMIT="$(git rev-parse HEAD)" \
#     --build-arg COMMIT_TIME="$(git log -1 --format=%cI)" -t robotsgate .
ARG VERSION=""
ARG COMMIT=""
ARG COMMIT_TIME=""
RUN CGO_ENABLED=0 go build -trimpath \
    -ldflags "-s -w -X main.stampVersion=${VERSION} -X main.stampCommit=${COMMIT} -X main.stampTime=${COMMIT_TIME}" \
    -o /out/robotsgate ./cmd/robotsgate
# Volume mount points owned by the runtime user (a named volume starts
# as a copy of them, ownership included).
RUN mkdir -p /out/data /out/log

FROM gcr.io/distroless/static-debian12:nonroot@sha256:afa5c872c891853ca7fcf1f12c3edb23f7eeef36189728842dd51042ff57f7ab
COPY --from=build /out/robotsgate /robotsgate
COPY --from=build --chown=65532:65532 /out/data /data
COPY --from=build --chown=65532:65532 /out/log /var/log/robotsgate
USER 65532:65532
ENV ROBOTSGATE_LISTEN=0.0.0.0:9309 \
    ROBOTSGATE_EGRESS_PRIVATE=deny \
    ROBOTSGATE_DATA_DIR=/data \
    ROBOTSGATE_AUDIT_LOG=/var/log/robotsgate/audit.jsonl \
    ROBOTSGATE_AUDIT_MAX_SIZE_MB=100 \
    ROBOTSGATE_AUDIT_MAX_BACKUPS=10 \
    ROBOTSGATE_LOG_FORMAT=json
EXPOSE 9309
# /data: the generated MITM CA (key 0600, certificate 0644); keep it, or
# every restart mints a new CA that clients do not trust.
VOLUME ["/data", "/var/log/robotsgate"]
HEALTHCHECK --interval=15s --timeout=5s --start-period=5s --retries=3 CMD ["/robotsgate", "health"]
ENTRYPOINT ["/robotsgate"]
# No flags here: a flag would override the ROBOTSGATE_* variable of the
# same setting that `docker run -e` passes (flags > environment).
CMD ["serve"]
