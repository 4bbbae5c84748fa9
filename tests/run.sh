#!/usr/bin/env bash
# Install everything the test suite needs on a fresh Debian machine, then run the whole suite.
# This is the README's test command; .ci/run calls it.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null || ! [ -x /usr/sbin/nginx ]; then
  apt-get update -qq
  # nginx: tests/engine/test_proxy.py runs deploy/'s configuration in front of the app
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-dejavu-core nginx >/dev/null
fi
npm ci --no-audit --no-fund --loglevel=error
python3 -m pip install -q -r requirements.txt -r tests/requirements.txt
python3 -m pip install -q --no-deps -r livescoring/requirements-nodeps.txt
python3 -m pytest "$@"
