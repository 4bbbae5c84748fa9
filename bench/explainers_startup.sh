#!/usr/bin/env bash
# Build the explainers wheel (as the server does), then run the start-up benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
EXPLAINERS_WHEEL="$(python3 -m engine.wheel "$out")" node bench/explainers_startup.mjs
