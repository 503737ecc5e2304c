#!/bin/sh
# GitHub Action entrypoint: map INPUT_* variables to driftgate flags. Inputs never carry secrets;
# API keys arrive as environment variables from the workflow's `env:`.
set -eu
set -- diff --tools "${INPUT_TOOLS:?the tools input is required}"
[ -n "${INPUT_BASE_REF:-}" ] && set -- "$@" --base-ref "$INPUT_BASE_REF"
[ -n "${INPUT_FAIL_ON:-}" ] && set -- "$@" --fail-on "$INPUT_FAIL_ON"
exec driftgate "$@"
