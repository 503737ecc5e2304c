# syntax=docker/dockerfile:1
# Build stage: the release binary (the embedding model is compiled into it).
FROM rust:1.95-slim-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src ./src
COPY models ./models
COPY prompts ./prompts
RUN cargo build --release --locked --bin driftgate

# Runtime stage: slim, non-root. git reads REV:PATH; node/npm let --server-cmd run npx servers.
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates git nodejs npm \
 && rm -rf /var/lib/apt/lists/* \
 && git config --system --add safe.directory '*' \
 && useradd --create-home --uid 1001 driftgate
COPY --from=build /src/target/release/driftgate /usr/local/bin/driftgate
COPY action/entrypoint.sh /usr/local/bin/driftgate-action
USER driftgate
ENTRYPOINT ["/usr/local/bin/driftgate-action"]
