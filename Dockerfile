# syntax=docker/dockerfile:1
# The container image for `docker://ghcr.io/OWNER/driftgate:<version>` (the Action itself is a
# composite action that runs the release binary on the runner; see action.yml). A thin runtime:
# the release workflow (.github/workflows/release.yml) unpacks the same release archives users
# download, verified against SHA256SUMS, into dist/linux-<arch>/, and this copies that binary in.
# The embedding model and the router prompt are compiled into it: no download at run time.
FROM debian:bookworm-slim
ARG TARGETARCH
# git reads REV:PATH for the PR base; node/npm let server-cmd run npx servers. Debian's package
# versions are fixed by the bookworm release itself.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates git nodejs npm \
 && rm -rf /var/lib/apt/lists/* \
 && git config --system --add safe.directory '*' \
 && useradd --create-home --uid 1001 driftgate
COPY dist/linux-${TARGETARCH}/driftgate /usr/local/bin/driftgate
COPY action/entrypoint.sh /usr/local/bin/driftgate-action
# uid 1001 is the hosted runner's user: it owns the mounted workspace and the file-command files
# (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY) the action writes.
USER 1001
ENTRYPOINT ["/usr/local/bin/driftgate-action"]
