# syntax=docker/dockerfile:1
# The GitHub Action's image (action.yml: `image: Dockerfile`).
#
# Build stage: the release binary, with the same `cargo build --release --locked` that
# tests/github_action.rs pins. The embedding model and the router prompt are compiled into it
# (include_bytes!/include_str! from models/ and prompts/), so the runtime needs no download.
FROM rust:1.95-slim-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src ./src
COPY models ./models
COPY prompts ./prompts
RUN cargo build --release --locked --bin driftgate

# Runtime stage: slim and non-root. git reads REV:PATH for the PR base; node/npm let server-cmd
# run npx servers. Debian's package versions are fixed by the bookworm release itself.
FROM debian:bookworm-slim
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates git nodejs npm \
 && rm -rf /var/lib/apt/lists/* \
 && git config --system --add safe.directory '*' \
 && useradd --create-home --uid 1001 driftgate
COPY --from=build /src/target/release/driftgate /usr/local/bin/driftgate
COPY action/entrypoint.sh /usr/local/bin/driftgate-action
# uid 1001 is the hosted runner's user: it owns the mounted workspace and the file-command files
# (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY) the action writes.
USER 1001
ENTRYPOINT ["/usr/local/bin/driftgate-action"]
