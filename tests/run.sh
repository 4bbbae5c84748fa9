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
# lm-evaluation-harness's own OpenAI-API client, in an environment of its own that sees this one's
# torch and transformers (tools/harness_reference.py): tests/model/test_harness_client.py points it
# at the model server. Made once per machine; the project itself never imports lm_eval.
HARNESS_VENV="${HARNESS_VENV:-$HOME/.cache/annotated-papers/lm-eval-0.4.13}"
if ! "$HARNESS_VENV/bin/python" -c "import lm_eval" 2>/dev/null; then
  python3 -m venv --system-site-packages "$HARNESS_VENV"
  "$HARNESS_VENV/bin/python" -m pip install -q "lm_eval[api]==0.4.13"
fi
export HARNESS_VENV
python3 -m pytest "$@"
